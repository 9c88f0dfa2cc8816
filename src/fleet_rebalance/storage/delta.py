"""Reads and writes of Delta tables through delta-spark, Spark's own Delta connector.

A write is one Delta commit made by Delta's own writer (`format("delta")`, replaceWhere
for a partition overwrite, mergeSchema only with schema_evolution); Delta's optimistic
concurrency settles concurrent writers. Before the write, the table's partitioning and
schema are compared with the write's, so a mismatch fails naming every column instead
of Delta's first. Delta's failures reach callers as the storage layer's own errors, told
apart by Delta's error conditions and exception classes, never by message text.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import delta.exceptions as delta_errors
import pyspark.sql.functions as F
from delta.tables import DeltaTable
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage.commit_context import commit_metadata
from fleet_rebalance.storage.context import RunContext
from fleet_rebalance.storage.errors import (
    CommitConflictError,
    ReplaceWhereError,
    SchemaMismatchError,
    StorageError,
    TableNotFoundError,
)
from fleet_rebalance.storage.jvm_paths import jvm_uri
from fleet_rebalance.storage.partitions import partition_value
from fleet_rebalance.storage.selection import rows_in
from fleet_rebalance.storage.table_checks import (
    check_partitioned,
    check_partitioning,
    compare_schemas,
    normalise_replace_where,
)
from fleet_rebalance.storage.versions import Commit, commit_of

Mode = Literal["append", "overwrite"]
MODES: tuple[Mode, ...] = ("append", "overwrite")
# {column: values in the log's string form}: the partitions a write replaces or a read keeps.
PartitionValues = Mapping[str, Sequence[str | None]]
REPLACE_WHERE_CONDITIONS = ("DELTA_REPLACE_WHERE_MISMATCH",)
VERSION_CONDITIONS = (
    "DELTA_VERSION_NOT_FOUND",
    "DELTA_CANNOT_TIME_TRAVEL_VIEWS",
    "DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION",
)
# DESCRIBE TABLE's row that opens the partition columns.
PARTITION_SECTION = "# Partition Information"
# delta.exceptions' classes (the connector's, converted) for a commit that a concurrent
# transaction made invalid.
CONFLICTS = (
    delta_errors.DeltaConcurrentModificationException,
    delta_errors.ConcurrentAppendException,
    delta_errors.ConcurrentDeleteReadException,
    delta_errors.ConcurrentDeleteDeleteException,
    delta_errors.ConcurrentTransactionException,
    delta_errors.ConcurrentWriteException,
    delta_errors.MetadataChangedException,
    delta_errors.ProtocolChangedException,
)


@dataclass(frozen=True)
class TableState:
    """A table's latest snapshot as its log says it is."""

    schema: StructType
    partition_columns: tuple[str, ...]


@dataclass(frozen=True)
class WritePlan:
    """A write's mode and partitions, checked."""

    mode: Mode
    partition_by: tuple[str, ...]
    replace_where: dict[str, list[str | None]] | None


def write(
    df: DataFrame,
    table: Location,
    context: RunContext,
    *,
    mode: str = "append",
    partition_by: Sequence[str] = (),
    replace_where: Mapping[str, Any] | None = None,
    commit_info: Mapping[str, Any] | None = None,
    overwrite_schema: bool = False,
) -> None:
    """One Delta commit of df. mode="overwrite" with replace_where={"capture_date":
    day} (a value or a list of values per partition column) replaces just those
    partitions, and fails if df holds rows outside them; without replace_where it
    replaces the whole table, and with overwrite_schema its schema and partitioning
    too. The commit records the run's context merged with `commit_info`."""
    plan = _plan(
        table.uri,
        df.columns,
        mode=mode,
        partition_by=partition_by,
        replace_where=replace_where,
        overwrite_schema=overwrite_schema,
    )
    spark = df.sparkSession
    state = table_state(spark, table)
    if state is not None and not overwrite_schema:
        check_partitioning(table.uri, state.partition_columns, plan.partition_by)
        compare_schemas(table.uri, state.schema.json(), df.schema.json(), context.schema_evolution)
    options = commit_metadata({**context.commit_info(), **(commit_info or {})})
    if plan.replace_where:
        options["replaceWhere"] = replace_where_predicate(plan.replace_where)
    if context.schema_evolution:
        options["mergeSchema"] = "true"
    if overwrite_schema:
        options["overwriteSchema"] = "true"
    writer = df.write.format("delta").mode(plan.mode).options(**options)
    if plan.partition_by:
        writer = writer.partitionBy(*plan.partition_by)
    try:
        writer.save(jvm_uri(spark, table))
    except CONFLICTS as exc:
        raise CommitConflictError(
            f"{table.uri}: a concurrent transaction committed first ({type(exc).__name__})"
        ) from exc
    except AnalysisException as exc:
        if exc.getCondition() in REPLACE_WHERE_CONDITIONS:
            raise ReplaceWhereError(
                f"{table.uri}: the write has rows outside replace_where "
                f"({options.get('replaceWhere')}); nothing was committed"
            ) from exc
        raise


def _plan(
    uri: str,
    columns: Sequence[str],
    *,
    mode: str,
    partition_by: Sequence[str],
    replace_where: Mapping[str, Any] | None,
    overwrite_schema: bool,
) -> WritePlan:
    """What is refused before anything is read or written."""
    if mode not in MODES:
        raise ValueError(f"{uri}: mode must be append or overwrite, found {mode!r}")
    if replace_where is not None and mode != "overwrite":
        raise ReplaceWhereError(f"{uri}: replace_where needs mode='overwrite'")
    if overwrite_schema and (mode != "overwrite" or replace_where is not None):
        raise ReplaceWhereError(f"{uri}: overwrite_schema needs a whole-table overwrite")
    missing = [c for c in partition_by if c not in columns]
    if missing:
        raise SchemaMismatchError(f"{uri}: partition column(s) {missing} not in the DataFrame")
    return WritePlan(
        "overwrite" if mode == "overwrite" else "append",
        tuple(partition_by),
        normalise_replace_where(replace_where, partition_by, uri),
    )


def replace_where_predicate(replace_where: PartitionValues) -> str:
    """SQL predicate for Delta's replaceWhere from normalised partition values."""
    clauses = []
    for column, values in replace_where.items():
        name = "`" + column.replace("`", "``") + "`"
        present = [v for v in values if v is not None]
        terms = []
        if present:
            quoted = ", ".join(
                "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'" for v in present
            )
            terms.append(f"{name} IN ({quoted})")
        if len(present) != len(values):
            terms.append(f"{name} IS NULL")
        clauses.append("(" + " OR ".join(terms) + ")")
    return " AND ".join(clauses)


def read(
    spark: SparkSession,
    table: Location,
    version: int | None = None,
    where: PartitionValues | None = None,
) -> DataFrame:
    """The snapshot's rows; `where` as a filter, which Delta resolves on partition
    columns from its log (only those partitions' files are read)."""
    uri = jvm_uri(spark, table)
    if not DeltaTable.isDeltaTable(spark, uri):
        raise TableNotFoundError(f"{table.uri}: not a Delta table (no _delta_log)")
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", str(version))
    try:
        frame = reader.load(uri)
    except AnalysisException as exc:
        if exc.getCondition() in VERSION_CONDITIONS:
            raise StorageError(f"{table.uri}: cannot load version {version}: {exc}") from exc
        raise
    return frame.where(rows_in(frame.schema, where, table.uri)) if where else frame


def table_state(spark: SparkSession, table: Location) -> TableState | None:
    """The table's latest snapshot; None: no table. The partition columns come from
    DESCRIBE TABLE, which reads them from the snapshot's metadata, not from DeltaTable's
    detail(), which also counts the snapshot's files and sizes in a Spark job per write."""
    uri = jvm_uri(spark, table)
    if not DeltaTable.isDeltaTable(spark, uri):
        return None
    described = spark.sql(f"DESCRIBE TABLE delta.`{uri.replace('`', '``')}`").collect()
    schema = DeltaTable.forPath(spark, uri).toDF().schema
    return TableState(schema, _partition_columns([row[0] for row in described]))


def _partition_columns(described: Sequence[str]) -> tuple[str, ...]:
    """The columns of DESCRIBE TABLE's "# Partition Information" section: after its
    "# col_name" header, up to the next blank or "#" row."""
    if PARTITION_SECTION not in described:
        return ()
    section = described[described.index(PARTITION_SECTION) + 2 :]
    return tuple(itertools.takewhile(lambda name: name and not name.startswith("#"), section))


def partition_values(spark: SparkSession, table: Location, column: str) -> list[str | None]:
    """The values (log strings, sorted, null last) partition column `column` holds."""
    state = table_state(spark, table)
    if state is None:
        return []
    check_partitioned(table.uri, state.partition_columns, column)
    rows = read(spark, table).select(column).distinct().collect()
    found = {partition_value(r[0]) for r in rows}
    return sorted(found, key=lambda v: (v is None, v or ""))


def history(spark: SparkSession, table: Location) -> list[Commit]:
    """The table's versions, newest first, with the runId of our userMetadata."""
    rows = (
        DeltaTable.forPath(spark, jvm_uri(spark, table))
        .history()
        .select("version", F.col("timestamp").cast("double").alias("seconds"), "userMetadata")
        .collect()
    )
    return [
        commit_of(int(r["version"]), dt.datetime.fromtimestamp(r["seconds"], dt.UTC), r.asDict())
        for r in rows
    ]
