"""What a table is now, from its log alone, through the session's engine: version,
schema and partitioning (engine.TableState), and the values its partition columns
hold. delta-rs opens no data file for either; delta-spark asks Delta's DeltaTable API."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.storage.context import session_engine
from fleet_rebalance.storage.engine import PartitionValues, TableState

__all__ = ["TableState", "partition_values", "read_rows", "table_state"]


def table_state(spark: SparkSession, uri: str) -> TableState | None:
    """The table's latest version, or None when there is no table at `uri`."""
    engine = session_engine(spark)
    return engine.state(engine.context.location(uri))


def partition_values(spark: SparkSession, uri: str, column: str) -> list[str | None]:
    """The values partition column `column` holds at the latest version, in the log's
    string form, sorted (null last); empty when there is no table."""
    engine = session_engine(spark)
    return engine.partition_values(engine.context.location(uri), column)


def read_rows(
    spark: SparkSession, uri: str, version: int, where: PartitionValues | None = None
) -> DataFrame:
    """The rows of `version` (of the partitions `where` names, in log strings)."""
    engine = session_engine(spark)
    return engine.read(engine.context.location(uri), version, where)
