"""Generate: write a seeded synthetic fleet of raw captures (no Spark needed)."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import shutil
from pathlib import Path

from fleet_rebalance.cli import run_job
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet

log = logging.getLogger("fleet_rebalance.generate")


def main() -> int:
    defaults = FleetSpec()
    parser = argparse.ArgumentParser(prog="generate", description=__doc__)
    parser.add_argument(
        "--out", default="data/sample", help="output directory (default %(default)s)"
    )
    parser.add_argument("--clusters", type=int, default=defaults.clusters)
    parser.add_argument(
        "--groups",
        type=int,
        default=defaults.groups_per_cluster,
        help="consumer groups per cluster",
    )
    parser.add_argument(
        "--topics",
        type=int,
        default=defaults.topics_per_cluster,
        help="topics per cluster (plus one regex-matched topic)",
    )
    parser.add_argument(
        "--groups-per-topic",
        type=int,
        default=defaults.groups_per_topic,
        help="add topics until each is read by about this many groups (0: no topics added)",
    )
    parser.add_argument(
        "--start",
        default=defaults.start.strftime("%Y-%m-%dT%H:%MZ"),
        help="first capture time, UTC (default %(default)s)",
    )
    parser.add_argument("--hours", type=float, default=defaults.hours)
    parser.add_argument("--interval-minutes", type=int, default=defaults.interval_minutes)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--clean", action="store_true", help="empty --out first")
    args = parser.parse_args()
    start = dt.datetime.strptime(args.start, "%Y-%m-%dT%H:%MZ").replace(tzinfo=dt.UTC)
    spec = FleetSpec(
        clusters=args.clusters,
        groups_per_cluster=args.groups,
        topics_per_cluster=args.topics,
        groups_per_topic=args.groups_per_topic,
        start=start,
        hours=args.hours,
        interval_minutes=args.interval_minutes,
        seed=args.seed,
    )
    out = Path(args.out)
    if args.clean and out.exists():
        shutil.rmtree(out)
    written = write_fleet(spec, out)
    log.info("wrote %d captures in %d files under %s", written["captures"], written["files"], out)
    return 0


if __name__ == "__main__":
    run_job(main)
