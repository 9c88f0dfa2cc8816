"""Delta tables for every job, over two engines behind one interface (engine.py).

The engine is chosen once, from the config and the run's context, when the session is
built: delta-rs (deltars/, embedded) or delta-spark (deltaspark/, Spark's own
connector). Both write real Delta tables that any Delta reader opens. Every commit
records the run's job, run id and run date, merged with the caller's commit_info. A
partition overwrite whose rows are already there commits nothing (unchanged.py), and a
read can name its partitions (`where`) to open only their files. Pipeline code goes
through the Warehouse (warehouse.py); read_table/write_table take a table by URI
through the session's engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.storage.context import session_engine
from fleet_rebalance.storage.errors import (
    CommitConflictError,
    ReplaceWhereError,
    SchemaMismatchError,
    StorageError,
    UnsupportedTableFeatureError,
)
from fleet_rebalance.storage.partitions import partition_strings
from fleet_rebalance.storage.writes import plan_write, write_frame

__all__ = [
    "CommitConflictError",
    "ReplaceWhereError",
    "SchemaMismatchError",
    "StorageError",
    "UnsupportedTableFeatureError",
    "read_table",
    "write_table",
]


def write_table(
    df: DataFrame,
    path: str,
    *,
    mode: str = "append",
    partition_by: Sequence[str] = (),
    replace_where: Mapping[str, Any] | None = None,
    commit_info: Mapping[str, Any] | None = None,
    overwrite_schema: bool = False,
    per_run_columns: Sequence[str] = (),
) -> None:
    """Write df as one Delta commit, or none when it would change nothing.

    mode="overwrite" with replace_where={"capture_date": "2026-11-20"} (a value or a
    list of values per partition column) replaces just those partitions, and fails if
    df holds rows outside them; a partition whose rows df repeats (ignoring
    `per_run_columns`) is left as it is, and when that is every one nothing is
    committed (unchanged.py). Without replace_where it replaces the whole table, and
    with overwrite_schema=True its schema and partitioning too (df's columns, in df's
    order, as Delta's overwriteSchema does).
    """
    engine = session_engine(df.sparkSession)
    table = engine.context.location(path)
    plan = plan_write(
        engine,
        table,
        df.columns,
        mode=mode,
        partition_by=partition_by,
        replace_where=replace_where,
        commit_info=commit_info,
        overwrite_schema=overwrite_schema,
    )
    write_frame(engine, df, table, plan, per_run_columns)


def read_table(
    spark: SparkSession,
    path: str,
    *,
    version: int | None = None,
    where: Mapping[str, Any] | None = None,
) -> DataFrame:
    """The table at its latest version, or at `version` (time travel). `where`
    ({"capture_date": a date or dates}) keeps those rows only, reading only those
    partitions' files where the columns partition the table: a read of a date costs
    the date, not the table's history."""
    engine = session_engine(spark)
    values = partition_strings(where) if where is not None else None
    return engine.read(engine.context.location(path), version, values)
