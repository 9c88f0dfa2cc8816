"""sql --engine duckdb run in the launcher's own process: no spark-submit, no JVM, so a
Spark flag on its command line is refused rather than ignored."""

from __future__ import annotations

import argparse
import sys

from fleet_rebalance.cli.exit_status import FAILED_STATUS
from fleet_rebalance.cli.job_args import job_config
from fleet_rebalance.cli.launch_args import Launch
from fleet_rebalance.cli.sql_input import sql_statements
from fleet_rebalance.errors import UsageError


def run_without_spark(launch: Launch) -> int:
    """sql --engine duckdb, in this process: no spark-submit, no JVM."""
    given = spark_flags_given(launch)
    if given:
        raise UsageError(
            f"{given[0]} is for Spark and sql --engine duckdb runs without it, here; "
            "drop it, or pass --engine spark"
        )
    from fleet_rebalance.cli.run_job import run_job

    try:
        run_job("sql", duckdb_sql, launch.job_args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else FAILED_STATUS
    return 0  # not reached: run_job exits


def duckdb_sql(args: argparse.Namespace) -> int:
    """The sql job on DuckDB (run_job's main: its flags, conf and statements)."""
    from fleet_rebalance.sql.duckdb_engine import run_statements

    statements = sql_statements(args, sys.stdin)
    config = job_config(args, "sql")
    run_statements(config, statements, args.format, args.max_rows)
    return 0


def spark_flags_given(launch: Launch) -> list[str]:
    """The Spark flags on a command line (--master, --deploy-mode, --delta-packages,
    --packages, --conf KEY=VALUE, those after `--`)."""
    given = [
        flag
        for flag, value in (
            ("--master", launch.master),
            ("--deploy-mode", launch.deploy_mode),
            ("--delta-packages", launch.delta_packages),
        )
        if value
    ]
    return given + list(launch.spark_args[:1])
