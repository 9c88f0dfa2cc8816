"""Metrics: silver (and bronze offsets, states, coordinator logs) -> gold tables."""

from __future__ import annotations

from fleet_rebalance.cli import parse_job_args, pipeline_parser, run_job


def main() -> int:
    args = parse_job_args(pipeline_parser("metrics", __doc__))
    from fleet_rebalance.pipeline import metrics
    from fleet_rebalance.session import build_session

    spark = build_session(args.config, job="metrics", run_date=args.run_date)
    metrics.run(spark, args.config, args.run_date)
    return 0


if __name__ == "__main__":
    run_job(main)
