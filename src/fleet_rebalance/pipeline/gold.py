"""Gold table schemas. DESIGN.md names the gold tables and what each answers but not
their columns; these are the columns, every table partitioned by `date`."""

from __future__ import annotations

from pyspark.sql.types import ArrayType, DataType, DoubleType, MapType, StructType

from fleet_rebalance.pipeline.bronze import INT, TS, B, D, L, S, nullable_schema

DBL = DoubleType()
GROUP = (("cluster", S), ("group_id", S), ("date", D))


def _schema(*fields: tuple[str, DataType]) -> StructType:
    return nullable_schema(*GROUP, *fields)


TABLES: dict[str, StructType] = {
    "stickiness": _schema(
        ("assignor", S),
        ("protocol", S),
        ("events", INT),
        ("kept", L),
        ("reassigned", L),
        ("orphaned", L),
        ("fresh", L),
        ("stickiness", DBL),
        ("mean_stickiness", DBL),
        ("min_stickiness", DBL),
        ("revoked", L),
        ("rounds", L),
        ("paused_partitions", L),
        ("max_paused_partitions", INT),
        ("conforming_events", INT),
        ("nonconforming_events", INT),
        ("differing_partitions", L),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("paused_partition_seconds", DBL),
        ("timed_events", INT),
        ("messages_delayed", L),
    ),
    "skew": _schema(
        ("assignor", S),
        ("events", INT),
        ("mean_count_spread", DBL),
        ("max_count_spread", INT),
        ("unbalanced_events", INT),
        ("max_partitions_per_member", INT),
        ("mean_lag_skew", DBL),
        ("max_lag_skew", DBL),
        ("max_member_lag", L),
        ("last_count_spread", INT),
        ("last_lag_skew", DBL),
    ),
    "lag_distribution": _schema(
        ("topic", S),
        ("partitions", INT),
        ("samples", L),
        ("unknown_lag_samples", L),
        ("lag_p50", DBL),
        ("lag_p90", DBL),
        ("lag_p99", DBL),
        ("lag_max", L),
        ("histogram", ArrayType(L)),
        ("time_lag_samples", L),
        ("time_lag_extrapolated", L),
        ("time_lag_p50_seconds", DBL),
        ("time_lag_p90_seconds", DBL),
        ("time_lag_p99_seconds", DBL),
        ("time_lag_max_seconds", DBL),
    ),
    "consumer_status": _schema(
        ("topic", S),
        ("partition", INT),
        ("windows", INT),
        ("status", S),
        ("current_lag", L),
        ("evaluated_at", TS),
        ("worst_status", S),
        ("worst_status_at", TS),
        ("non_ok_windows", INT),
        ("group_status", S),
        ("group_worst_status", S),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("current_offset", L),
    ),
    "partition_flapping": _schema(
        ("topic", S),
        ("partition", INT),
        ("assignor", S),
        ("events", INT),
        ("owner_changes", INT),
        ("distinct_owners", INT),
        ("unowned_events", INT),
    ),
    "recommendations": _schema(
        ("declared_assignor", S),
        ("recommended_assignor", S),
        ("compared_with", S),
        ("events", INT),
        ("declared_paused_partitions", L),
        ("recommended_paused_partitions", L),
        ("declared_max_count_spread", INT),
        ("recommended_max_count_spread", INT),
        ("declared_mean_lag_skew", DBL),
        ("recommended_mean_lag_skew", DBL),
        ("declared_stickiness", DBL),
        ("recommended_stickiness", DBL),
        ("paused_partitions_delta", L),
        ("max_count_spread_delta", INT),
        ("mean_lag_skew_delta", DBL),
        ("stickiness_delta", DBL),
        ("reason", S),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("change_kind", S),
        ("protocol", S),
        ("prerequisites", S),
        ("paused_partitions_saved", L),
        ("rebalances_saved", INT),
        ("paused_partition_seconds_saved", DBL),
    ),
    "rebalance_timeline": _schema(
        ("generation", INT),
        ("protocol", S),
        ("started_at", TS),
        ("stabilized_at", TS),
        ("duration_ms", L),
        ("cause", S),
        ("members_before", INT),
        ("members_after", INT),
        ("coordinator_broker", INT),
        ("coordinator_partition", INT),
        # Added later: last, where storage.schema_evolution adds it to an older table.
        ("follow_up", B),
    ),
    "rebalance_causes": _schema(
        ("event_seq", INT),
        ("event_at", TS),
        ("cause", S),
        ("evidence", S),
        ("generation", INT),
        ("duration_ms", L),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("source", S),
    ),
    "group_health": _schema(
        ("protocol", S),
        ("declared_assignor", S),
        ("last_status", S),
        ("worst_status", S),
        ("partitions", INT),
        ("non_ok_partitions", INT),
        ("rebalances", INT),
        ("rebalances_by_cause", MapType(S, INT)),
        ("generations_logged", INT),
        ("paused_partitions", L),
        ("paused_partition_seconds", DBL),
        ("max_count_spread", INT),
        ("mean_lag_skew", DBL),
        ("max_lag", L),
        ("max_time_lag_seconds", DBL),
        ("change_kind", S),
        ("recommended_assignor", S),
        ("prerequisites", S),
        ("paused_partitions_saved", L),
        ("rebalances_saved", INT),
        ("paused_partition_seconds_saved", DBL),
        ("change_reason", S),
        ("severity", INT),
        ("attention", ArrayType(S)),
        # Added later: last, where storage.schema_evolution adds them to an older table.
        ("messages_delayed", L),
    ),
}
# Built from the tables before them once those are written (recommendations reads
# stickiness, skew and consumer_status; group_health all the others).
DERIVED = ("recommendations", "group_health")
