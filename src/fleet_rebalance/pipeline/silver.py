"""Silver table schemas (DESIGN.md) and the union the replay UDF returns.

DESIGN.md says every table is partitioned by date but names no date column for the
silver tables; each gets `event_date` (the replayed date) as its partition column.
`rebalance_events.previous_capture_at` (not in DESIGN.md) is the previous usable capture
the event's change is measured against (null for `initial`): the rebalance happened
between it and `event_at`, which is where the coordinator log is searched for it
(replay/rebalance_events.py). `replay_metrics.paused_partition_seconds` is paused_partitions x
the matched generation's duration (replay/generations.py).
"""

from __future__ import annotations

from pyspark.sql.types import ArrayType, DataType, DoubleType, StructType

from fleet_rebalance.pipeline import tagged
from fleet_rebalance.pipeline.bronze import (
    INT,
    TOPIC_PARTITION,
    TS,
    B,
    D,
    L,
    S,
    nullable_schema,
)

DOUBLE = DoubleType()


def _schema(*fields: tuple[str, DataType]) -> StructType:
    return nullable_schema(*fields, ("event_date", D))


TABLES: dict[str, StructType] = {
    "rebalance_events": _schema(
        ("cluster", S),
        ("group_id", S),
        ("event_seq", INT),
        ("event_at", TS),
        ("trigger", S),
        ("members", ArrayType(S)),
        ("member_count", INT),
        ("partition_count", INT),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("previous_capture_at", TS),
        ("generation", INT),
        ("source", S),
        ("cause", S),
        ("evidence", S),
        ("duration_ms", L),
        ("static_avoidable", B),
        ("capture_difference", S),
        ("departed", S),
        ("returned", S),
        ("away_ms", L),
        ("session_timeout_ms", L),
        ("session_timeout_assumed", B),
    ),
    "assignment_replay": _schema(
        ("cluster", S),
        ("group_id", S),
        ("event_seq", INT),
        ("assignor", S),
        ("member_id", S),
        ("partitions", TOPIC_PARTITION),
    ),
    "replay_metrics": _schema(
        ("cluster", S),
        ("group_id", S),
        ("event_seq", INT),
        ("event_at", TS),
        ("trigger", S),
        ("assignor", S),
        ("protocol", S),
        ("member_count", INT),
        ("partition_count", INT),
        ("kept", INT),
        ("reassigned", INT),
        ("orphaned", INT),
        ("fresh", INT),
        ("stickiness", DOUBLE),
        ("revoked", INT),
        ("rounds", INT),
        ("paused_partitions", INT),
        ("count_min", INT),
        ("count_max", INT),
        ("count_spread", INT),
        ("lag_total", L),
        ("lag_max_member", L),
        ("lag_skew", DOUBLE),
        ("conforms", B),
        ("differing_partitions", INT),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("paused_partition_seconds", DOUBLE),
        ("messages_delayed", L),
        ("conformance_basis", S),
    ),
    "replay_errors": _schema(
        ("cluster", S), ("group_id", S), ("event_seq", INT), ("assignor", S), ("reason", S)
    ),
}


def union_schema() -> StructType:
    """What the replay's per-group function returns: every silver table's rows."""
    return tagged.union_schema(TABLES)
