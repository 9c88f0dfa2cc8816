"""Ingest: raw Kafka captures under raw_root -> bronze Delta tables."""

from __future__ import annotations

from fleet_rebalance.cli import parse_job_args, pipeline_parser, run_job


def main() -> int:
    args = parse_job_args(pipeline_parser("ingest", __doc__))
    from fleet_rebalance.pipeline import ingest
    from fleet_rebalance.session import build_session

    spark = build_session(args.config, job="ingest", run_date=args.run_date)
    ingest.run(spark, args.config, args.run_date)
    return 0


if __name__ == "__main__":
    run_job(main)
