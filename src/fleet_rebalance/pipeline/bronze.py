"""Bronze table schemas (DESIGN.md, exactly), and the Spark types silver and gold share."""

from __future__ import annotations

from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from fleet_rebalance.capture import schemas as arrow_schemas

S, INT, L, B = StringType(), IntegerType(), LongType(), BooleanType()
TS, D = TimestampType(), DateType()
TOPIC_PARTITION = ArrayType(StructType([StructField("topic", S), StructField("partition", INT)]))


def nullable_schema(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in fields])


# DESIGN.md's bronze tables, defined once as Arrow (the parse tasks write them so).
TABLES: dict[str, StructType] = {
    name: from_arrow_schema(schema) for name, schema in arrow_schemas.TABLES.items()
}
PARTITION_COLUMN = {"coordinator_events": "log_date"}
CAPTURE_TABLES = (
    "offsets",
    "members",
    "group_states",
    "topic_partitions",
    "coordinator_events",
    "brokers",
    "partition_sizes",
)


def partition_column(table: str) -> str:
    return PARTITION_COLUMN.get(table, "capture_date")
