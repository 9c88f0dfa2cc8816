"""One member owning a very wide assignment through the nightly's steps (issue 56 item C).

A small generated fleet (one cluster, two groups, an hour) plus a jsonl export at each
of its captures of one more group whose single member owns `--partitions` partitions
of one topic (the issue's case: a line of about 4 MB at 200,000; no offsets rows, whose
per-partition tables would cost what they cost for any 200,000 partitions). Each step
(ingest, replay, metrics) runs once on a local[2] session, then the metrics step
`--repeat` more times (it replaces its date: same rows); the seconds of each step and the
metrics step's median are printed. Before issue 56 the metrics step spent over 9 minutes
on such a member (array_distinct over structs, quadratic); the step's time should stay
that of the small fleet's plus seconds.

    python benchmarks/wide_member.py                      # 200,000 partitions
    python benchmarks/wide_member.py --partitions 20000 --repeat 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import tempfile
import time
from pathlib import Path

from fleet_rebalance.config import Config
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.pipeline import ingest, metrics, replay
from fleet_rebalance.spark.session import build_session

START = dt.datetime(2026, 11, 20, 8, tzinfo=dt.UTC)
SPEC = FleetSpec(
    clusters=1,
    groups_per_cluster=2,
    topics_per_cluster=2,
    start=START,
    hours=1,
    interval_minutes=30,
)
GROUP, TOPIC, MEMBER = "wide-member", "wide", "wide-member-1"


def snapshot(partitions: int, at: dt.datetime) -> dict:
    """The wide group's snapshot at `at`: one member owning every partition of TOPIC."""
    return {
        "group_id": GROUP,
        "captured_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "state": "Stable",
        "assignment_strategy": "range",
        "coordinator": {"host": "kafka-1:9092", "id": 1},
        "members": [
            {
                "member_id": MEMBER,
                "client_id": "wide-client",
                "host": "/10.0.0.1",
                "subscription": [TOPIC],
                "assignment": [[TOPIC, p] for p in range(partitions)],
            }
        ],
    }


def write_tree(raw: Path, partitions: int) -> int:
    """The fleet and the wide group's exports at each capture; the longest line's size."""
    write_fleet(SPEC, raw)
    (cluster,) = [p.name for p in raw.iterdir() if p.is_dir()]
    captures = sorted(p.name for p in (raw / cluster / "captures").iterdir())
    longest = 0
    for name in captures:
        at = dt.datetime.strptime(name, "%Y-%m-%dT%H%MZ").replace(tzinfo=dt.UTC)
        line = json.dumps(snapshot(partitions, at), separators=(",", ":"))
        path = raw / cluster / "exports" / name / "groups.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text(line + "\n")
        longest = max(longest, len(line))
    return longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=2, help="metrics step runs after the first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wide-member-") as tmp:
        raw, warehouse = Path(tmp) / "raw", Path(tmp) / "wh"
        longest = write_tree(raw, args.partitions)
        print(f"{args.partitions:,} partitions in one member: jsonl lines of {longest:,} bytes")
        config = Config(raw_root=str(raw), warehouse=str(warehouse))
        spark = build_session(config, job="benchmark", master="local[2]")
        spark.sparkContext.setLogLevel("ERROR")
        try:
            for name, step in (("ingest", ingest.run), ("replay", replay.run)):
                started = time.monotonic()
                counts = step(spark, config, START.date())
                print(f"{name}: {time.monotonic() - started:.1f} s {counts}")
            runs = []
            for _ in range(1 + args.repeat):
                started = time.monotonic()
                counts = metrics.run(spark, config, START.date())
                runs.append(time.monotonic() - started)
            print(
                f"metrics: {', '.join(f'{s:.1f}' for s in runs)} s; median "
                f"{statistics.median(runs):.1f} s {counts}"
            )
        finally:
            spark.stop()


if __name__ == "__main__":
    main()
