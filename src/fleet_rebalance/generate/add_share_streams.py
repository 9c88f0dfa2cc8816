"""The share and streams groups (generate/share_streams.py) added to a fleet that was
generated without them, writing only their files.

data/sample predates the share/streams step: regenerating it would change every other
file and every number the tests assert on it, so it got the two groups this way:

    PYTHONPATH=src python -m fleet_rebalance.generate.add_share_streams --into data/sample

The capture times and clusters are the default FleetSpec's (Fleet.captures), so a root
that is not that fleet (a capture folder the step would write into is missing) is
refused with one line and exit status 2; a second run rewrites the same bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fleet_rebalance.generate.fleet import Fleet, FleetSpec
from fleet_rebalance.generate.share_streams import RELEASES, write_share_streams


class NotThisFleet(ValueError):
    """The root is not the fleet the spec generates; the message says what is missing."""


def add_to_fleet(spec: FleetSpec, out: Path) -> int:
    """Write the share and streams views of `spec`'s fleet into `out`, which must hold
    that fleet already; the number of files written. No other file is touched."""
    taken = [
        (at, cluster.name, cluster.version, sorted(cluster.brokers))
        for at, cluster in Fleet(spec).captures()
    ]
    for at, cluster, version, _ in taken:
        folder = out / cluster / "captures" / at.strftime("%Y-%m-%dT%H%MZ")
        if version in RELEASES and not folder.is_dir():
            raise NotThisFleet(f"{folder} is missing: {out} is not the fleet of this spec")
    return write_share_streams(spec.seed, spec.start, taken, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Add the share and streams groups to a fleet generated with the "
        "default spec (data/sample), writing only their files."
    )
    parser.add_argument("--into", type=Path, required=True, help="the fleet's root")
    args = parser.parse_args(argv)
    try:
        written = add_to_fleet(FleetSpec(), args.into)
    except NotThisFleet as exc:
        print(f"add_share_streams: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {written} share/streams views under {args.into}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
