"""SQL over the output tables: every Delta table in the warehouse is a view by its name.
Several `;`-separated statements (QUERY, -f FILE or stdin) run in one SparkSession."""

from __future__ import annotations

import argparse
import sys

from fleet_rebalance.cli.job_args import job_config
from fleet_rebalance.cli.run_job import run_job
from fleet_rebalance.cli.sql_input import sql_statements


def main(args: argparse.Namespace) -> int:
    statements = sql_statements(args, sys.stdin)
    config = job_config(args, "sql")
    from fleet_rebalance.pipeline.sql import register_views, run_statements
    from fleet_rebalance.spark.session import build_session

    spark = build_session(config, job="sql", run_date=None)
    spark.sparkContext.setLogLevel("ERROR")
    tables = register_views(spark, config)
    run_statements(spark, statements, args.format, args.max_rows, tables, config.warehouse)
    return 0


if __name__ == "__main__":
    run_job("sql", main)
