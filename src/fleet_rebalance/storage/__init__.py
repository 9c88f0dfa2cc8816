"""Delta tables for every job: write_table and read_table over two engines.

The engine is chosen once per session (storage.engine in conf, see engine.py):
delta-rs, embedded, or delta-spark, Spark's own connector. Both write real Delta
tables that any Delta reader opens. Every commit records the job, run id and run
date from the session (set by build_session), merged with the caller's commit_info.
A partition overwrite whose rows are already there commits nothing (unchanged.py), and
a read can name its partitions (`where`) to open only their files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.storage import errors
from fleet_rebalance.storage.engine import (
    DELTA_RS,
    DELTA_SPARK,
    ENGINE_KEY,
    JOB_KEY,
    RUN_DATE_KEY,
    RUN_ID_KEY,
    SCHEMA_EVOLUTION_KEY,
    STORAGE_OPTIONS_KEY,
)
from fleet_rebalance.storage.errors import (
    CommitConflictError,
    ReplaceWhereError,
    SchemaMismatchError,
    StorageError,
    UnsupportedTableFeatureError,
)
from fleet_rebalance.storage.partitions import partition_strings
from fleet_rebalance.storage.selection import rows_in

__all__ = [
    "CommitConflictError",
    "ReplaceWhereError",
    "SchemaMismatchError",
    "StorageError",
    "UnsupportedTableFeatureError",
    "read_table",
    "write_table",
]

MODES = ("append", "overwrite")
REGISTERED_KEY = "spark.fleet_rebalance.storage.deltaRsRegistered"


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
    check_write(path, mode, replace_where, partition_by, df.columns)
    if overwrite_schema and (mode != "overwrite" or replace_where is not None):
        raise ReplaceWhereError(f"{path}: overwrite_schema needs a whole-table overwrite")
    spark = df.sparkSession
    comparison = None
    whole = df, replace_where
    if replace_where is not None:
        comparison = _compare(df, path, partition_by, replace_where, per_run_columns)
        if comparison is not None:
            comparison.log_unchanged()
            remaining = comparison.remaining()
            if remaining is None:
                return
            if comparison.unchanged:
                df, replace_where = df.where(rows_in(df.schema, remaining, path)), remaining
            else:
                comparison = None  # every partition is written, as without a comparison
    if spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
        from fleet_rebalance.storage.deltaspark import delta_spark_write_options, write_delta_spark
        from fleet_rebalance.storage.snapshot import table_state

        uri = table_location(spark, path).uri
        if comparison is not None:
            state = table_state(spark, uri)
            if state is None or state.version != comparison.version:
                df, replace_where = whole  # changed since the comparison: write it all
        where, info, evolution = _write_context(
            spark, path, partition_by, replace_where, commit_info
        )
        options = delta_spark_write_options(where, info, evolution)
        if overwrite_schema:
            options["overwriteSchema"] = "true"
        write_delta_spark(
            df,
            table_location(spark, path),
            mode,
            partition_by,
            options,
            evolution=evolution,
            overwrite_schema=overwrite_schema,
        )
        return
    request = delta_rs_request(
        spark,
        path,
        mode,
        partition_by,
        replace_where,
        commit_info,
        df.schema.json(),
        overwrite_schema=overwrite_schema,
        read_version=comparison.version if comparison is not None else None,
    )
    _write_delta_rs(df, request)


def _compare(
    df: DataFrame,
    path: str,
    partition_by: Sequence[str],
    replace_where: Mapping[str, Any],
    per_run_columns: Sequence[str],
) -> Any:
    """The write compared with the partitions it replaces (an unchanged.Comparison),
    or None when it is not compared."""
    from fleet_rebalance.storage.table_checks import normalise_replace_where
    from fleet_rebalance.storage.unchanged import compare

    where = normalise_replace_where(replace_where, partition_by, path)
    uri = table_location(df.sparkSession, path).uri
    return compare(df, uri, partition_by, where or {}, per_run_columns)


def check_write(
    path: str,
    mode: str,
    replace_where: Mapping[str, Any] | None,
    partition_by: Sequence[str],
    columns: Sequence[str],
) -> None:
    """What either engine refuses before anything is written."""
    if mode not in MODES:
        raise ValueError(f"{path}: mode must be append or overwrite, found {mode!r}")
    if replace_where is not None and mode != "overwrite":
        raise ReplaceWhereError(f"{path}: replace_where needs mode='overwrite'")
    missing = [c for c in partition_by if c not in columns]
    if missing:
        raise SchemaMismatchError(f"{path}: partition column(s) {missing} not in the DataFrame")


def _write_context(
    spark: SparkSession,
    path: str,
    partition_by: Sequence[str],
    replace_where: Mapping[str, Any] | None,
    commit_info: Mapping[str, Any] | None,
) -> tuple[dict[str, list[str | None]] | None, dict[str, Any], bool]:
    """replace_where as partition strings, the commit info with the run's context, and
    whether the session allows schema evolution."""
    from fleet_rebalance.storage.table_checks import normalise_replace_where

    return (
        normalise_replace_where(replace_where, partition_by, path),
        {**_run_context(spark), **(commit_info or {})},
        spark.conf.get(SCHEMA_EVOLUTION_KEY, "false") == "true",
    )


def delta_rs_request(
    spark: SparkSession,
    path: str,
    mode: str,
    partition_by: Sequence[str],
    replace_where: Mapping[str, Any] | None,
    commit_info: Mapping[str, Any] | None,
    schema_json: str,
    *,
    overwrite_schema: bool = False,
    read_version: int | None = None,
) -> Any:
    """A delta-rs write (a deltars_source.WriteRequest), checked against the table as
    it is now; `read_version`: the version it was planned on (conflicts are judged
    from there)."""
    from dataclasses import replace

    from fleet_rebalance.storage.deltars_commit import validate_against_table

    request = write_request(spark, path, mode, partition_by, replace_where, commit_info)
    request = replace(request, overwrite_schema=overwrite_schema, read_version=read_version)
    validate_against_table(request, schema_json)
    return request


def write_request(
    spark: SparkSession,
    path: str,
    mode: str,
    partition_by: Sequence[str],
    replace_where: Mapping[str, Any] | None,
    commit_info: Mapping[str, Any] | None,
) -> Any:
    """A write as a deltars_source.WriteRequest: the table's location and options, the
    replaced partitions as strings, the commit info with the run's context."""
    from fleet_rebalance.storage.deltars_source import WriteRequest

    where, info, evolution = _write_context(spark, path, partition_by, replace_where, commit_info)
    table = table_location(spark, path)
    return WriteRequest(
        table.uri, mode, tuple(partition_by), where, info, evolution, dict(table.options)
    )


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
    table = table_location(spark, path)
    values = partition_strings(where) if where is not None else None
    if spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
        from fleet_rebalance.storage.deltaspark import read_delta_spark

        return read_delta_spark(spark, table, version, values)
    from fleet_rebalance.storage.deltars_read import read_delta_rs

    return read_delta_rs(spark, table, version, values)


def table_location(spark: SparkSession, uri: str) -> Location:
    """A table's URI with the session's storage.options."""
    return location(uri, json.loads(spark.conf.get(STORAGE_OPTIONS_KEY, "{}") or "{}"))


def _run_context(spark: SparkSession) -> dict[str, str]:
    return {
        "job": spark.conf.get(JOB_KEY, "interactive"),
        "runId": spark.conf.get(RUN_ID_KEY, ""),
        "runDate": spark.conf.get(RUN_DATE_KEY, ""),
    }


def _write_delta_rs(df: DataFrame, request: Any) -> None:
    from fleet_rebalance.storage.deltars_source import SOURCE_NAME, DeltaRsDataSource

    spark = df.sparkSession
    # Registration lives in the session; a flag in the session's own conf records it.
    if spark.conf.get(REGISTERED_KEY, "false") != "true":
        spark.dataSource.register(DeltaRsDataSource)
        spark.conf.set(REGISTERED_KEY, "true")
    try:
        (
            df.write.format(SOURCE_NAME)
            .mode("overwrite" if request.mode == "overwrite" else "append")
            .options(**request.to_options())
            .save()
        )
    except Exception as exc:
        raise _storage_error_from(exc) or exc from exc


_ERROR_LINE = re.compile(
    r"(?:fleet_rebalance\.storage\.errors\.)?(" + "|".join(errors.__all__) + r"): (.+)"
)


def _storage_error_from(exc: Exception) -> StorageError | None:
    """Our exception raised inside Spark's Python worker, re-raised as itself."""
    matches = _ERROR_LINE.findall(str(exc))
    if not matches:
        return None
    name, message = matches[-1]
    return getattr(errors, name)(message.strip())
