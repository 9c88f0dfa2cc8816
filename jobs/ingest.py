"""Ingest: raw Kafka captures under raw_root -> bronze Delta tables."""

from __future__ import annotations

import argparse

from fleet_rebalance.cli.job_args import job_args
from fleet_rebalance.cli.run_job import run_job


def main(flags: argparse.Namespace) -> int:
    args = job_args("ingest", flags)
    from fleet_rebalance.pipeline import backfill, ingest
    from fleet_rebalance.pipeline.nightly import run_step
    from fleet_rebalance.spark.session import build_session

    spark = build_session(args.config, job="ingest", run_date=args.run_date)
    step = ("ingest", ingest.run)
    if args.span is None:
        run_step(spark, args.config, args.run_date, step)
    else:
        backfill.run_span(spark, args.config, args.span, [step])
    return 0


if __name__ == "__main__":
    run_job("ingest", main)
