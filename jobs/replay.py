"""Replay: each group's history through every assignor (bronze -> silver)."""

from __future__ import annotations

import argparse
from functools import partial

from fleet_rebalance.cli.job_args import job_args
from fleet_rebalance.cli.run_job import run_job


def main(flags: argparse.Namespace) -> int:
    args = job_args("replay", flags)
    from fleet_rebalance.pipeline import backfill, replay
    from fleet_rebalance.pipeline.nightly import run_step
    from fleet_rebalance.spark.session import build_session

    spark = build_session(args.config, job="replay", run_date=args.run_date)
    names = flags.assignors.split(",") if flags.assignors else None
    step = ("replay", partial(replay.run, assignors=names))
    if args.span is None:
        run_step(spark, args.config, args.run_date, step)
    else:
        backfill.run_span(spark, args.config, args.span, [step])
    return 0


if __name__ == "__main__":
    run_job("replay", main)
