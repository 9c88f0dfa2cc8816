"""Delta tables for every job, written and read by delta-spark (Spark's own connector).

Every commit records the run's job, run id and run date (storage/context.py), merged
with the caller's commit_info. Pipeline code goes through the Warehouse
(warehouse.py); read_table/write_table take a table by URI, for tests and notebooks.
Outside Spark (`sql --engine duckdb`) tables are only read, with deltalake.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.storage import delta
from fleet_rebalance.storage.context import run_context
from fleet_rebalance.storage.errors import (
    CommitConflictError,
    ReplaceWhereError,
    SchemaMismatchError,
    StorageError,
    UnsupportedTableFeatureError,
)
from fleet_rebalance.storage.partitions import partition_strings

__all__ = [
    "CommitConflictError",
    "ReplaceWhereError",
    "SchemaMismatchError",
    "StorageError",
    "UnsupportedTableFeatureError",
    "read_table",
    "write_table",
]


def write_table(df: DataFrame, path: str, **options: Any) -> None:
    """Write df to the table at `path` as one Delta commit (storage.delta.write's
    options: mode, partition_by, replace_where, commit_info, overwrite_schema)."""
    context = run_context(df.sparkSession)
    delta.write(df, context.location(path), context, **options)


def read_table(
    spark: SparkSession,
    path: str,
    *,
    version: int | None = None,
    where: Mapping[str, Any] | None = None,
) -> DataFrame:
    """The table at its latest version, or at `version` (time travel); `where`
    ({"capture_date": a date or dates}) keeps those partitions only."""
    table = run_context(spark).location(path)
    values = partition_strings(where) if where is not None else None
    return delta.read(spark, table, version, values)
