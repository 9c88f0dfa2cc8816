"""Nightly: ingest -> replay -> metrics for one date in one SparkSession, a summary on
stdout and warehouse/reports/<date>.html."""

from __future__ import annotations

import logging

from fleet_rebalance.cli import parse_job_args, pipeline_parser, run_job

log = logging.getLogger("fleet_rebalance.nightly")


def main() -> int:
    args = parse_job_args(pipeline_parser("nightly", __doc__))
    if args.run_date is None:
        log.error("nightly runs one date: pass --date (or none for the conf's default)")
        return 2
    from fleet_rebalance.pipeline.nightly import StepFailed, report, run_steps
    from fleet_rebalance.session import build_session

    spark = build_session(args.config, job="nightly", run_date=args.run_date)
    try:
        run_steps(spark, args.config, args.run_date)
    except StepFailed as exc:
        log.error("nightly: %s", exc, exc_info=exc.__cause__)
        return 1
    print("\n".join(report(spark, args.config, args.run_date)), flush=True)
    return 0


if __name__ == "__main__":
    run_job(main)
