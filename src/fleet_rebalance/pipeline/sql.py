"""Ad-hoc SQL over the output tables: each Delta table under the warehouse has its name
(offsets, replay_metrics, recommendations, ...), a table of the session's catalog,
where Delta's SQL takes it (time travel, `DESCRIBE HISTORY`). Several statements run in
one SparkSession, so a batch of queries pays for the JVM once; a statement Spark refuses
(a syntax error, an unknown table or column) ends the run with one line naming it."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TextIO

from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, Row, SparkSession

from fleet_rebalance.config import Config, one_line
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.sql.output import print_rows
from fleet_rebalance.sql.statements import Statement
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.sql")


def register_views(spark: SparkSession, config: Config) -> list[str]:
    names = [*bronze.TABLES, *silver.TABLES, *gold.TABLES]
    registered = []
    warehouse = Warehouse(spark, config.warehouse)
    for name in names:
        if not warehouse.exists(name):
            continue
        warehouse.name_for_sql(name)
        registered.append(name)
    missing = sorted(set(names) - set(registered))
    if missing:
        log.info("not yet written (no view): %s", ", ".join(missing))
    return registered


def run_statements(
    spark: SparkSession,
    statements: list[Statement],
    fmt: str,
    max_rows: int,
    tables: list[str],
    warehouse: str,
    out: TextIO | None = None,
) -> int:
    """Run each statement in order, printing the results of those that return columns
    (a blank line between two results, except in json, whose lines stay one stream) to
    `out`, sys.stdout as it is when called. Returns the rows printed; a statement Spark
    refuses raises JobFailed."""
    out = sys.stdout if out is None else out
    printed = 0
    shown = 0
    for statement in statements:
        try:
            df = spark.sql(statement.text)
            if not df.columns:  # SET, CREATE TEMP VIEW, ...: nothing to show
                continue
            if shown and fmt != "json":
                out.write("\n")
            printed += print_result(df, fmt, max_rows, out)
            out.flush()
            shown += 1
        except PySparkException as exc:
            raise JobFailed(
                sql_failure(exc, statement, len(statements), tables, warehouse)
            ) from exc
    return printed


def sql_failure(
    exc: PySparkException, statement: Statement, count: int, tables: list[str], warehouse: str
) -> str:
    """Spark's own first line (error class, message, SQLSTATE), where in the input the
    statement is when there are several, and for an unknown table the ones there are."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    where = (
        f"statement {statement.number} of {count} (line {statement.line}): " if count > 1 else ""
    )
    condition = _condition(exc)
    if condition == "TABLE_OR_VIEW_NOT_FOUND":
        if tables:
            text += f" Tables: {', '.join(sorted(tables))}."
        else:
            text += (
                f" No table has been written under {warehouse} yet: run ./spark-submit.sh "
                "nightly first, or pass --warehouse where the tables are."
            )
    return one_line(where + text)


def _condition(exc: PySparkException) -> str | None:
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    try:
        return get() if get else None
    except Exception:  # a converted exception without a JVM error class
        return None


def print_result(df: DataFrame, fmt: str, max_rows: int, out: TextIO) -> int:
    """Rows printed; csv and json stream every row, table and markdown show the first
    max_rows."""
    if fmt in ("csv", "json"):
        rows: Iterable[Row] = df.toLocalIterator(prefetchPartitions=True)
    else:
        rows = df.limit(max_rows + 1).collect()
    return print_rows(df.columns, rows, fmt, max_rows, out)
