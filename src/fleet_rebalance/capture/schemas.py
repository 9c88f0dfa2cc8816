"""The bronze tables' schemas as Arrow, the form the parse tasks write them in.

These are DESIGN.md's bronze columns exactly; pipeline/bronze.py gives Spark the same
schemas (converted, so the two can never disagree). Spark-free: the parse tasks use it.
"""

from __future__ import annotations

import pyarrow as pa

S, INT, L, B = pa.string(), pa.int32(), pa.int64(), pa.bool_()
TS, D = pa.timestamp("us", tz="UTC"), pa.date32()
TOPIC_PARTITION = pa.list_(pa.struct([("topic", S), ("partition", INT)]))
# A streams member's tasks: kind active|standby|warmup|target-active|target-standby|
# target-warmup, the subtopology id and the partition (capture/share_streams.py).
TASKS = pa.list_(pa.struct([("kind", S), ("subtopology", S), ("partition", INT)]))


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in fields])


TABLES: dict[str, pa.Schema] = {
    "offsets": _schema(
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
        # Added later: last, where storage.schema_evolution adds them to an older table.
        # classic|consumer|share|streams, null where the capture does not say; a share
        # group's START-OFFSET (no committed offset: current_offset stays null).
        ("group_type", S),
        ("start_offset", L),
    ),
    "members": _schema(
        ("cluster", S),
        ("group_id", S),
        ("consumer_id", S),
        ("group_instance_id", S),
        ("host", S),
        ("client_id", S),
        ("partition_count", INT),
        ("assignment", TOPIC_PARTITION),
        ("subscription", pa.list_(S)),
        ("subscription_inferred", B),
        ("captured_at", TS),
        ("capture_date", D),
        ("source_file", S),
        ("line_number", INT),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("rebalancing", B),
        ("group_type", S),
        ("tasks", TASKS),
        # KIP-848 (4.x --members --verbose, CURRENT-EPOCH, TARGET-EPOCH, UPGRADED): null
        # for `-` (a classic group) or where not printed; upgraded false is a classic
        # member inside a consumer group (a migration in progress).
        ("member_epoch", INT),
        ("target_epoch", INT),
        ("upgraded", B),
        # What an exporter's jsonl gives and the CLI views do not (null from them): the
        # member's client.rack and the generation it last joined.
        ("rack", S),
        ("generation", INT),
    ),
    "group_states": _schema(
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
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("group_type", S),
        # 4.x --state --verbose (GROUP-EPOCH, TARGET-ASSIGNMENT-EPOCH); null for `-`.
        ("group_epoch", INT),
        ("target_assignment_epoch", INT),
    ),
    "topic_partitions": _schema(
        ("cluster", S),
        ("topic", S),
        ("topic_id", S),
        ("partition", INT),
        ("leader", INT),
        ("replicas", pa.list_(INT)),
        ("isr", pa.list_(INT)),
        ("captured_at", TS),
        ("capture_date", D),
        ("source_file", S),
        ("line_number", INT),
    ),
    "coordinator_events": _schema(
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
    "quarantine": _schema(
        ("source_file", S),
        ("line_number", INT),
        ("line", S),
        ("reason", S),
        ("kind", S),
        ("capture_date", D),
    ),
    "ingested_files": _schema(
        ("path", S),
        ("size", L),
        ("sha256", S),
        ("kind", S),
        ("cluster", S),
        ("captured_at", TS),
        ("status", S),
        ("reason", S),
        ("rows", L),
        ("quarantined", L),
        ("run_id", S),
        ("ingested_at", TS),
        ("capture_date", D),
    ),
}
