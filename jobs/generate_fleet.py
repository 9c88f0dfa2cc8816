"""Generate: write a seeded synthetic fleet of raw captures (no Spark needed)."""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path

from fleet_rebalance.cli.run_job import run_job
from fleet_rebalance.generate.cross_zone_truth import cross_zone_path
from fleet_rebalance.generate.fleet import FleetSpec, truth_path, write_fleet

log = logging.getLogger("fleet_rebalance.generate")


def main(args: argparse.Namespace) -> int:
    spec = FleetSpec(
        clusters=args.clusters,
        groups_per_cluster=args.groups,
        topics_per_cluster=args.topics,
        groups_per_topic=args.groups_per_topic,
        start=args.start,
        hours=args.hours,
        interval_minutes=args.interval_minutes,
        seed=args.seed,
        share_streams=True,
    )
    out = Path(args.out)
    if args.clean and out.exists():
        shutil.rmtree(out)
    written = write_fleet(spec, out)
    log.info(
        "wrote %d captures in %d files under %s, every generation they went through in %s "
        "and each group's reads across zones in %s",
        written["captures"],
        written["files"],
        out,
        truth_path(out),
        cross_zone_path(out),
    )
    return 0


if __name__ == "__main__":
    run_job("generate", main)
