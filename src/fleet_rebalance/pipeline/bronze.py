"""Bronze table schemas (DESIGN.md, exactly)."""

from __future__ import annotations

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

S, INT, L, B = StringType(), IntegerType(), LongType(), BooleanType()
TS, D = TimestampType(), DateType()
TOPIC_PARTITION = ArrayType(StructType([StructField("topic", S), StructField("partition", INT)]))


def nullable_schema(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, kind, True) for name, kind in fields])


TABLES: dict[str, StructType] = {
    "offsets": nullable_schema(
        ("cluster", S),
        ("group_id", S),
        ("topic", S),
        ("partition", INT),
        ("current_offset", L),
        ("log_end_offset", L),
        ("lag", L),
        ("consumer_id", S),
        ("host", S),
        ("client_id", S),
        ("captured_at", TS),
        ("capture_date", D),
        ("source_file", S),
        ("line_number", INT),
    ),
    "members": nullable_schema(
        ("cluster", S),
        ("group_id", S),
        ("consumer_id", S),
        ("group_instance_id", S),
        ("host", S),
        ("client_id", S),
        ("partition_count", INT),
        ("assignment", TOPIC_PARTITION),
        ("subscription", ArrayType(S)),
        ("subscription_inferred", B),
        ("captured_at", TS),
        ("capture_date", D),
        ("source_file", S),
        ("line_number", INT),
    ),
    "group_states": nullable_schema(
        ("cluster", S),
        ("group_id", S),
        ("coordinator_host", S),
        ("coordinator_id", INT),
        ("assignment_strategy", S),
        ("state", S),
        ("member_count", INT),
        ("captured_at", TS),
        ("capture_date", D),
        ("source_file", S),
        ("line_number", INT),
    ),
    "topic_partitions": nullable_schema(
        ("cluster", S),
        ("topic", S),
        ("topic_id", S),
        ("partition", INT),
        ("leader", INT),
        ("replicas", ArrayType(INT)),
        ("isr", ArrayType(INT)),
        ("captured_at", TS),
        ("capture_date", D),
        ("source_file", S),
    ),
    "coordinator_events": nullable_schema(
        ("cluster", S),
        ("broker", INT),
        ("logged_at", TS),
        ("event", S),
        ("group_id", S),
        ("generation", INT),
        ("member_id", S),
        ("reason", S),
        ("line", S),
        ("log_date", D),
        ("source_file", S),
        ("line_number", INT),
    ),
    "quarantine": nullable_schema(
        ("source_file", S),
        ("line_number", INT),
        ("line", S),
        ("reason", S),
        ("kind", S),
        ("capture_date", D),
    ),
    "ingested_files": nullable_schema(
        ("path", S),
        ("size", L),
        ("sha256", S),
        ("kind", S),
        ("cluster", S),
        ("captured_at", TS),
        ("status", S),
        ("rows", L),
        ("quarantined", L),
        ("run_id", S),
        ("ingested_at", TS),
    ),
}
PARTITION_COLUMN = {"coordinator_events": "log_date", "ingested_files": None}
CAPTURE_TABLES = ("offsets", "members", "group_states", "topic_partitions", "coordinator_events")


def partition_column(table: str) -> str | None:
    return PARTITION_COLUMN.get(table, "capture_date")
