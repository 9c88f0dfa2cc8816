"""Replay: each group's history through every assignor (bronze -> silver)."""

from __future__ import annotations

from fleet_rebalance.cli import parse_job_args, pipeline_parser, run_job


def main() -> int:
    parser = pipeline_parser("replay", __doc__)
    parser.add_argument(
        "--assignors",
        metavar="NAMES",
        help="comma-separated assignors (default: every built-in plus observed;"
        " plug-ins as package.module:Class)",
    )
    args = parse_job_args(parser)
    from fleet_rebalance.pipeline import replay
    from fleet_rebalance.session import build_session

    spark = build_session(args.config, job="replay", run_date=args.run_date)
    names = args.extra.assignors.split(",") if args.extra.assignors else None
    replay.run(spark, args.config, args.run_date, names)
    return 0


if __name__ == "__main__":
    run_job(main)
