"""Metrics: silver (and bronze offsets, states, coordinator logs) -> gold tables."""

from __future__ import annotations

import argparse

from fleet_rebalance.cli.job_args import job_args
from fleet_rebalance.cli.run_job import run_job


def main(flags: argparse.Namespace) -> int:
    args = job_args("metrics", flags)
    from fleet_rebalance.pipeline import backfill, metrics
    from fleet_rebalance.pipeline.nightly import run_step
    from fleet_rebalance.spark.session import build_session

    spark = build_session(args.config, job="metrics", run_date=args.run_date)
    step = ("metrics", metrics.run)
    if args.span is None:
        run_step(spark, args.config, args.run_date, step)
    else:
        backfill.run_span(spark, args.config, args.span, [step])
    return 0


if __name__ == "__main__":
    run_job("metrics", main)
