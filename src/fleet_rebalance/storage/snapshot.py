"""What a table is now, from its log alone: version, schema, partitioning, and the
values its partition columns hold. No data file is opened on delta-rs (it reads the
log itself); delta-spark answers through Delta's own DeltaTable API."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from fleet_rebalance.storage.engine import DELTA_RS, DELTA_SPARK, ENGINE_KEY
from fleet_rebalance.storage.errors import StorageError
from fleet_rebalance.storage.partitions import partition_value


@dataclass(frozen=True)
class TableState:
    version: int
    schema: StructType
    partition_columns: tuple[str, ...]


def table_state(spark: SparkSession, uri: str) -> TableState | None:
    """The table's latest version, or None when there is no table at `uri`."""
    if spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
        return _delta_spark_state(spark, uri)
    table = _delta_rs_table(spark, uri)
    if table is None:
        return None
    return TableState(
        table.version(),
        StructType.fromJson(json.loads(table.schema().to_json())),
        tuple(table.metadata().partition_columns),
    )


def partition_values(spark: SparkSession, uri: str, column: str) -> list[str | None]:
    """The values partition column `column` holds at the latest version, in the log's
    string form, sorted (null last); empty when there is no table."""
    if spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
        from fleet_rebalance.storage import table_location
        from fleet_rebalance.storage.deltaspark import read_delta_spark

        state = _delta_spark_state(spark, uri)
        if state is None:
            return []
        _check_partitioned(uri, state.partition_columns, column)
        rows = (
            read_delta_spark(spark, table_location(spark, uri), None)
            .select(column)
            .distinct()
            .collect()
        )
        found = {partition_value(r[0]) for r in rows}
    else:
        table = _delta_rs_table(spark, uri)
        if table is None:
            return []
        _check_partitioned(uri, table.metadata().partition_columns, column)
        actions = pa.table(table.get_add_actions(flatten=True))
        found = (
            {partition_value(v) for v in actions[f"partition.{column}"].to_pylist()}
            if actions.num_rows
            else set()
        )
    return sorted(found, key=lambda v: (v is None, v or ""))


def _check_partitioned(uri: str, columns: Sequence[str], column: str) -> None:
    if column not in columns:
        raise StorageError(f"{uri}: not partitioned by {column} (partitions: {list(columns)})")


def _delta_rs_table(spark: SparkSession, uri: str):  # -> deltalake.DeltaTable | None
    from fleet_rebalance.storage import table_location
    from fleet_rebalance.storage.deltars_commit import open_table

    table = table_location(spark, uri)
    return open_table(table.uri, storage_options=table.options)


def _delta_spark_state(spark: SparkSession, uri: str) -> TableState | None:
    from delta.tables import DeltaTable

    from fleet_rebalance.storage import table_location
    from fleet_rebalance.storage.jvm_paths import jvm_uri

    uri = jvm_uri(spark, table_location(spark, uri))
    if not DeltaTable.isDeltaTable(spark, uri):
        return None
    table = DeltaTable.forPath(spark, uri)
    detail = table.detail().select("partitionColumns").first()
    version = table.history(1).select("version").first()
    return TableState(int(version[0]), table.toDF().schema, tuple(detail[0] if detail else ()))
