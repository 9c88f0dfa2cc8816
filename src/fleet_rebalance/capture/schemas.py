"""The bronze tables' schemas as Arrow, the form the parse tasks write them in.

These are DESIGN.md's bronze columns exactly; pipeline/bronze.py gives Spark the same
schemas (converted, so the two can never disagree). Spark-free: the parse tasks use it.
"""

from __future__ import annotations

import pyarrow as pa

STRING, INT32, INT64, BOOL = pa.string(), pa.int32(), pa.int64(), pa.bool_()
TIMESTAMP, DATE = pa.timestamp("us", tz="UTC"), pa.date32()
TOPIC_PARTITION = pa.list_(pa.struct([("topic", STRING), ("partition", INT32)]))
# A streams member's tasks: kind active|standby|warmup|target-active|target-standby|
# target-warmup, the subtopology id and the partition (capture/share_streams.py).
TASKS = pa.list_(pa.struct([("kind", STRING), ("subtopology", STRING), ("partition", INT32)]))


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in fields])


TABLES: dict[str, pa.Schema] = {
    "offsets": _schema(
        ("cluster", STRING),
        ("group_id", STRING),
        ("topic", STRING),
        ("partition", INT32),
        ("current_offset", INT64),
        ("log_end_offset", INT64),
        ("lag", INT64),
        ("consumer_id", STRING),
        ("host", STRING),
        ("client_id", STRING),
        ("captured_at", TIMESTAMP),
        ("capture_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        # classic|consumer|share|streams, null where the capture does not say; a share
        # group's START-OFFSET (no committed offset: current_offset stays null).
        ("group_type", STRING),
        ("start_offset", INT64),
    ),
    "members": _schema(
        ("cluster", STRING),
        ("group_id", STRING),
        ("consumer_id", STRING),
        ("group_instance_id", STRING),
        ("host", STRING),
        ("client_id", STRING),
        ("partition_count", INT32),
        ("assignment", TOPIC_PARTITION),
        ("subscription", pa.list_(STRING)),
        ("subscription_inferred", BOOL),
        ("captured_at", TIMESTAMP),
        ("capture_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("rebalancing", BOOL),
        ("group_type", STRING),
        ("tasks", TASKS),
        # KIP-848 (4.x --members --verbose, CURRENT-EPOCH, TARGET-EPOCH, UPGRADED): null
        # for `-` (a classic group) or where not printed; upgraded false is a classic
        # member inside a consumer group (a migration in progress).
        ("member_epoch", INT32),
        ("target_epoch", INT32),
        ("upgraded", BOOL),
        # What an exporter's jsonl gives and the CLI views do not (null from them): the
        # member's client.rack and the generation it last joined.
        ("rack", STRING),
        ("generation", INT32),
    ),
    "group_states": _schema(
        ("cluster", STRING),
        ("group_id", STRING),
        ("coordinator_host", STRING),
        ("coordinator_id", INT32),
        ("assignment_strategy", STRING),
        ("state", STRING),
        ("member_count", INT32),
        ("captured_at", TIMESTAMP),
        ("capture_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("group_type", STRING),
        # 4.x --state --verbose (GROUP-EPOCH, TARGET-ASSIGNMENT-EPOCH); null for `-`.
        ("group_epoch", INT32),
        ("target_assignment_epoch", INT32),
    ),
    "topic_partitions": _schema(
        ("cluster", STRING),
        ("topic", STRING),
        ("topic_id", STRING),
        ("partition", INT32),
        ("leader", INT32),
        ("replicas", pa.list_(INT32)),
        ("isr", pa.list_(INT32)),
        ("captured_at", TIMESTAMP),
        ("capture_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
    ),
    "coordinator_events": _schema(
        ("cluster", STRING),
        ("broker", INT32),
        ("logged_at", TIMESTAMP),
        ("event", STRING),
        ("group_id", STRING),
        ("generation", INT32),
        ("member_id", STRING),
        ("reason", STRING),
        ("line", STRING),
        ("log_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
    ),
    # The optional broker views (FORMATS 1.7): a broker's rack per capture, and each
    # replica's size on its broker's disk.
    "brokers": _schema(
        ("cluster", STRING),
        ("broker", INT32),
        ("rack", STRING),
        ("captured_at", TIMESTAMP),
        ("capture_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
    ),
    "partition_sizes": _schema(
        ("cluster", STRING),
        ("topic", STRING),
        ("partition", INT32),
        ("broker", INT32),
        ("log_dir", STRING),
        ("size_bytes", INT64),
        ("offset_lag", INT64),
        ("is_future", BOOL),
        ("captured_at", TIMESTAMP),
        ("capture_date", DATE),
        ("source_file", STRING),
        ("line_number", INT32),
    ),
    "quarantine": _schema(
        ("source_file", STRING),
        ("line_number", INT32),
        ("line", STRING),
        ("reason", STRING),
        ("kind", STRING),
        ("capture_date", DATE),
    ),
    "ingested_files": _schema(
        ("path", STRING),
        ("size", INT64),
        ("sha256", STRING),
        ("kind", STRING),
        ("cluster", STRING),
        ("captured_at", TIMESTAMP),
        ("status", STRING),
        ("reason", STRING),
        ("rows", INT64),
        ("quarantined", INT64),
        ("run_id", STRING),
        ("ingested_at", TIMESTAMP),
        ("capture_date", DATE),
    ),
}
