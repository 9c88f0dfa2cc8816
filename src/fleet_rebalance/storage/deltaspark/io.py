"""The delta-spark engine's reads and writes: Spark's own Delta connector (clusters that ship it, or
jvm/pom.xml's delta set). Its failures reach callers as the storage layer's own errors,
told apart by Delta's error conditions and exception classes, never by message text:
the same contract as the delta-rs engine's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import delta.exceptions as delta_errors
from delta.tables import DeltaTable
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage.commit_context import commit_metadata
from fleet_rebalance.storage.engine import PartitionValues, TableState
from fleet_rebalance.storage.errors import (
    CommitConflictError,
    ReplaceWhereError,
    StorageError,
    TableNotFoundError,
)
from fleet_rebalance.storage.jvm_paths import jvm_uri
from fleet_rebalance.storage.selection import rows_in
from fleet_rebalance.storage.table_checks import check_partitioning, compare_schemas

REPLACE_WHERE_CONDITIONS = ("DELTA_REPLACE_WHERE_MISMATCH",)
VERSION_CONDITIONS = ("DELTA_VERSION_NOT_FOUND", "DELTA_CANNOT_TIME_TRAVEL_VIEWS")
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


def replace_where_predicate(replace_where: Mapping[str, Sequence[str | None]]) -> str:
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


def delta_spark_write_options(
    replace_where: Mapping[str, Sequence[str | None]] | None,
    commit_info: Mapping[str, object],
    schema_evolution: bool,
) -> dict[str, str]:
    options = commit_metadata(commit_info)
    if replace_where:
        options["replaceWhere"] = replace_where_predicate(replace_where)
    if schema_evolution:
        options["mergeSchema"] = "true"
    return options


def write_delta_spark(
    df: DataFrame,
    table: Location,
    mode: str,
    partition_by: Sequence[str],
    options: Mapping[str, str],
    *,
    evolution: bool,
    overwrite_schema: bool,
) -> None:
    """One Delta commit of df through Spark's connector, after the checks the delta-rs
    engine makes (partitioning, schema) so both refuse the same writes alike."""
    state = delta_spark_state(df.sparkSession, table)
    if state is not None and not overwrite_schema:
        check_partitioning(table.uri, state.partition_columns, partition_by)
        compare_schemas(table.uri, state.schema.json(), df.schema.json(), evolution)
    writer = df.write.format("delta").mode(mode).options(**options)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    try:
        writer.save(jvm_uri(df.sparkSession, table))
    except CONFLICTS as exc:
        raise CommitConflictError(
            f"{table.uri}: a concurrent transaction committed first ({type(exc).__name__}); "
            "nothing was committed"
        ) from exc
    except AnalysisException as exc:
        if exc.getCondition() in REPLACE_WHERE_CONDITIONS:
            raise ReplaceWhereError(
                f"{table.uri}: the write has rows outside replace_where "
                f"({options.get('replaceWhere')}); nothing was committed"
            ) from exc
        raise


def read_delta_spark(
    spark: SparkSession,
    table: Location,
    version: int | None,
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


def delta_spark_state(spark: SparkSession, table: Location) -> TableState | None:
    """The table's latest version through Delta's DeltaTable API; None: no table."""
    uri = jvm_uri(spark, table)
    if not DeltaTable.isDeltaTable(spark, uri):
        return None
    delta = DeltaTable.forPath(spark, uri)
    detail = delta.detail().select("partitionColumns").first()
    version = delta.history(1).select("version").first()
    assert version is not None, "a Delta table has a version"
    return TableState(int(version[0]), delta.toDF().schema, tuple(detail[0] if detail else ()))
