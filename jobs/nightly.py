"""Nightly: ingest -> replay -> metrics for one date (or each date of a backfill) in one
SparkSession, a summary on stdout and warehouse/reports/<date>.html."""

from __future__ import annotations

import argparse

from fleet_rebalance.cli.job_args import job_args
from fleet_rebalance.cli.run_job import run_job


def main(flags: argparse.Namespace) -> int:
    # A step's failure (StepFailed) is reported by run_job: one line when its cause is
    # one the user can act on (no captures for the date, a concurrent commit).
    args = job_args("nightly", flags)
    from fleet_rebalance.pipeline import backfill
    from fleet_rebalance.pipeline.nightly import report, run_steps
    from fleet_rebalance.spark.session import build_session

    spark = build_session(args.config, job="nightly", run_date=args.run_date)
    if args.span is None:
        run_steps(spark, args.config, args.run_date)
        lines = report(spark, args.config, args.run_date)
    else:
        lines = backfill.nightly_span(spark, args.config, args.span)
    print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    run_job("nightly", main)
