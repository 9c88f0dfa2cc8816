"""Replay: each group's history through every assignor (bronze -> silver)."""

from __future__ import annotations

import argparse

from fleet_rebalance.cli import job_args
from fleet_rebalance.run_job import run_job


def main(flags: argparse.Namespace) -> int:
    args = job_args("replay", flags)
    from fleet_rebalance.pipeline import replay
    from fleet_rebalance.session import build_session

    spark = build_session(args.config, job="replay", run_date=args.run_date)
    names = flags.assignors.split(",") if flags.assignors else None
    replay.run(spark, args.config, args.run_date, names)
    return 0


if __name__ == "__main__":
    run_job("replay", main)
