"""`rebalance_causes` (gold) and the per-event match behind it and behind
replay_metrics.paused_partition_seconds, one Arrow call per group.

The replay and the metrics step both call event_causes on the same inputs (the date's
rebalance_events, the members captures of the day and the one before, the coordinator
lines of both days) and so match every event to the same generation: the replay to
price each event's pause (paused partitions x the matched generation's duration), the
metrics step to write the causes. Each group's call gets its non-initial events, the
member rows of exactly the captures those events compare (each event's own and the
previous usable one), and its coordinator lines; the matching is plain Python
(event_matching.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BooleanType, StructField, StructType

from fleet_rebalance.metrics.event_matching import Event, Member, match_events
from fleet_rebalance.metrics.generations import group_generations, member_times
from fleet_rebalance.metrics.static_savings import avoidable
from fleet_rebalance.pipeline.bronze import INT, TS, S, nullable_schema
from fleet_rebalance.pipeline.gold import TABLES

GROUP = ["cluster", "group_id"]
MEMBER_COLUMNS = ["consumer_id", "host", "client_id", "group_instance_id"]
LOG_COLUMNS = ["logged_at", "event", "generation", "member_id", "reason", "line"]
GOLD_COLUMNS = [
    "cluster",
    "group_id",
    "date",
    "event_seq",
    "event_at",
    "cause",
    "evidence",
    "generation",
    "duration_ms",
]
# rebalance_causes' columns plus what the static-membership what-if reads.
EVENT_CAUSES = StructType(
    [*TABLES["rebalance_causes"].fields, StructField("static_avoidable", BooleanType())]
)
INPUTS = nullable_schema(
    ("cluster", S),
    ("group_id", S),
    ("_kind", S),  # "event" or "member"
    ("event_seq", INT),
    ("event_at", TS),
    ("previous_capture_at", TS),
    ("trigger", S),
    ("captured_at", TS),
    *[(c, S) for c in MEMBER_COLUMNS],
)
LOGS = nullable_schema(
    ("cluster", S),
    ("group_id", S),
    ("logged_at", TS),
    ("event", S),
    ("generation", INT),
    ("member_id", S),
    ("reason", S),
    ("line", S),
)


def event_causes(
    events: DataFrame,
    members: DataFrame,
    coordinator_events: DataFrame | None,
    run_date: dt.date,
    static_session_timeout_s: int = 300,
) -> DataFrame:
    """One row per non-initial event of `events` (rebalance_events rows of run_date) in
    EVENT_CAUSES. `members`: bronze members of run_date and the day before;
    `coordinator_events`: bronze coordinator_events of both days, or None (no logs)."""
    moved = events.where(F.col("trigger") != "initial").select(
        *GROUP, "event_seq", "event_at", "previous_capture_at", "trigger"
    )
    compared = (
        moved.select(*GROUP, F.col("event_at").alias("captured_at"))
        .unionByName(moved.select(*GROUP, F.col("previous_capture_at").alias("captured_at")))
        .where(F.col("captured_at").isNotNull())
        .distinct()
    )
    rows = (
        members.where(F.col("consumer_id").isNotNull())
        .join(compared, [*GROUP, "captured_at"], how="left_semi")
        .select(*GROUP, "captured_at", *MEMBER_COLUMNS)
    )
    inputs = _as(moved.withColumn("_kind", F.lit("event")), INPUTS).unionByName(
        _as(rows.withColumn("_kind", F.lit("member")), INPUTS)
    )
    if coordinator_events is None:
        logs = events.sparkSession.createDataFrame([], LOGS)
    else:
        logs = _as(
            coordinator_events.where(F.col("group_id").isNotNull()).join(
                moved.select(*GROUP).distinct(), GROUP, how="left_semi"
            ),
            LOGS,
        )
    arrow_schema = to_arrow_schema(EVENT_CAUSES)
    timeout = dt.timedelta(seconds=static_session_timeout_s)

    def per_group(left: pa.Table, right: pa.Table) -> pa.Table:
        found = group_event_causes(left.to_pylist(), right.to_pylist(), run_date, timeout)
        return pa.Table.from_pylist(found, arrow_schema)

    return (
        inputs.groupBy(*GROUP).cogroup(logs.groupBy(*GROUP)).applyInArrow(per_group, EVENT_CAUSES)
    )


def group_event_causes(
    inputs: list[dict[str, Any]],
    logs: list[dict[str, Any]],
    run_date: dt.date,
    timeout: dt.timedelta,
) -> list[dict[str, Any]]:
    """event_causes' rows for one group, from its INPUTS rows and LOGS rows (dicts)."""
    events = [r for r in inputs if r["_kind"] == "event"]
    if not events:
        return []
    at: dict[dt.datetime, list[Member]] = {}
    for r in inputs:
        if r["_kind"] == "member":
            at.setdefault(r["captured_at"], []).append(
                Member(r["consumer_id"], r["host"], r["client_id"], r["group_instance_id"])
            )
    replayed = [
        Event(
            r["event_seq"],
            r["event_at"],
            r["previous_capture_at"],
            r["trigger"],
            tuple(at.get(r["previous_capture_at"], ())),
            tuple(at.get(r["event_at"], ())),
        )
        for r in events
    ]
    times = member_times(logs)
    cluster, group = events[0]["cluster"], events[0]["group_id"]
    return [
        {
            "cluster": cluster,
            "group_id": group,
            "date": run_date,
            "event_seq": c.seq,
            "event_at": c.at,
            "cause": c.cause,
            "evidence": c.evidence,
            "generation": c.generation,
            "duration_ms": c.duration_ms,
            "static_avoidable": avoidable(c, times, timeout),
        }
        for c in match_events(replayed, group_generations(logs))
    ]


def rebalance_causes(causes: DataFrame) -> DataFrame:
    """The gold table from event_causes' rows."""
    return causes.select(*GOLD_COLUMNS)


def with_paused_partition_seconds(replay_metrics: DataFrame, causes: DataFrame) -> DataFrame:
    """replay_metrics rows with paused_partition_seconds = paused_partitions x the
    matched generation's duration in seconds; null where no log times the event."""
    durations = causes.select(*GROUP, "event_seq", "duration_ms")
    seconds = F.col("paused_partitions") * F.col("duration_ms") / F.lit(1000.0)
    return (
        replay_metrics.drop("paused_partition_seconds")
        .join(durations, [*GROUP, "event_seq"], how="left")
        .withColumn("paused_partition_seconds", seconds)
        .select(*replay_metrics.columns)
    )


def _as(frame: DataFrame, schema) -> DataFrame:
    """frame in `schema`: its columns cast, the missing ones null."""
    present = set(frame.columns)
    return frame.select(
        *[
            (F.col(f.name) if f.name in present else F.lit(None)).cast(f.dataType).alias(f.name)
            for f in schema.fields
        ]
    )
