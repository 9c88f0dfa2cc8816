"""SQL over the output tables: every Delta table in the warehouse is a view by its name."""

from __future__ import annotations

import argparse
import logging

from fleet_rebalance.cli import run_job
from fleet_rebalance.config import load_config


def main() -> int:
    parser = argparse.ArgumentParser(prog="sql", description=__doc__)
    parser.add_argument("query", help='e.g. "SELECT * FROM recommendations LIMIT 5"')
    parser.add_argument("--conf", default="conf/local.yaml", metavar="FILE")
    parser.add_argument("--warehouse", metavar="DIR", help="Delta tables directory")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    parser.add_argument(
        "--max-rows",
        type=int,
        default=1000,
        metavar="N",
        help="rows shown by --format table (default 1000)",
    )
    args = parser.parse_args()
    # spark-submit merges the driver's stderr into stdout: keep results free of log lines.
    logging.getLogger().setLevel(logging.WARNING)
    config = load_config(args.conf, warehouse=args.warehouse)
    from fleet_rebalance.pipeline.sql import print_result, register_views
    from fleet_rebalance.session import build_session

    spark = build_session(config, job="sql", run_date=None)
    spark.sparkContext.setLogLevel("ERROR")
    register_views(spark, config)
    print_result(spark.sql(args.query), args.format, args.max_rows)
    return 0


if __name__ == "__main__":
    run_job(main)
