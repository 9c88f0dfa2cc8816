"""`rebalance_timeline`: one row per generation a coordinator log shows a group reach.

Classic protocol: "Preparing to rebalance ... old generation g (reason: ...)" starts
generation g + 1 and "Stabilized group ... generation g + 1 with n members" ends it;
members_before is n of generation g's stabilization when the log has it. A generation
that never stabilized (the group went Empty, or the log ends) has no stabilized_at.
KIP-848 (consumer protocol): "Bumped group epoch to e" starts epoch e and "Computed a
new target assignment for epoch e" is when the coordinator settled it (members then
reconcile on their own heartbeats, which the log does not show); its cause is the
member events logged since the previous epoch began. Rows are keyed by the group's own
generation, so lines from two coordinators (a failover) merge. `follow_up`: the
generation is a cooperative group's revocation round, part of the rebalance before it
(replay/generations.py says how it is told).

The coordinator partition is Kafka's `Utils.abs(groupId.hashCode()) %
offsets.topic.num.partitions`, with Java's String.hashCode over UTF-16 code units.
"""

from __future__ import annotations

import datetime as dt
import re

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window

from fleet_rebalance.replay.generations import (
    CLIENT_REASON,
    FOLLOW_UP_WINDOW,
    REVOKE_ROUND,
    SILENT_CLIENT,
    STABLE_REJOIN,
)

MEMBER_EVENTS = (
    "member_joined",
    "member_left",
    "member_failed",
    "member_fenced",
    "static_member_joined",
    "static_member_rejoined",
)


def java_string_hash(column: str) -> F.Column:
    """Java's String.hashCode of a string column, as a signed 32-bit int."""
    hx = f"hex(encode(`{column}`, 'UTF-16BE'))"
    unsigned = f"""
        IF(length({hx}) = 0, 0L, aggregate(
            transform(sequence(0, CAST(length({hx}) / 4 AS INT) - 1),
                      i -> CAST(conv(substring({hx}, i * 4 + 1, 4), 16, 10) AS BIGINT)),
            0L, (acc, u) -> (acc * 31 + u) % 4294967296))"""
    return F.expr(f"CAST(({unsigned}) - IF(({unsigned}) >= 2147483648, 4294967296, 0) AS INT)")


def coordinator_partition(column: str, partitions: int) -> F.Column:
    """Kafka's Utils.abs: Integer.MIN_VALUE maps to 0, not to itself."""
    h = java_string_hash(column).cast("long")
    return (F.when(h == -(2**31), 0).otherwise(F.abs(h)) % partitions).cast("int")


def rebalance_timeline(
    events: DataFrame, run_date: dt.date, offsets_partitions: int = 50
) -> DataFrame:
    group = ["cluster", "group_id"]
    ev = events.where(F.col("group_id").isNotNull())
    classic_start = ev.where(F.col("event") == "prepare_rebalance").select(
        *group,
        (F.col("generation") + 1).alias("generation"),
        "logged_at",
        "reason",
        "broker",
        F.lit("classic").alias("protocol"),
    )
    consumer_start = ev.where(F.col("event") == "epoch_bumped").select(
        *group,
        "generation",
        "logged_at",
        F.lit(None).cast("string").alias("reason"),
        "broker",
        F.lit("consumer").alias("protocol"),
    )
    starts = (
        classic_start.unionByName(consumer_start)
        .groupBy(*group, "generation")
        .agg(
            F.min("logged_at").alias("started_at"),
            F.min_by("reason", "logged_at").alias("start_reason"),
            F.first("protocol").alias("protocol"),
            F.min_by("broker", "logged_at").alias("start_broker"),
        )
    )
    ends = (
        ev.where(F.col("event").isin("stabilized", "target_assignment"))
        .groupBy(*group, "generation")
        .agg(
            F.min("logged_at").alias("stabilized_at"),
            F.min_by(F.regexp_extract("line", r" with (\d+) members", 1), "logged_at").alias("_n"),
            F.min_by("broker", "logged_at").alias("end_broker"),
            F.max(F.when(F.col("event") == "target_assignment", F.lit("consumer"))).alias("_p"),
        )
        .withColumn("members_after", F.when(F.col("_n") != "", F.col("_n").cast("int")))
    )
    rows = starts.join(ends, [*group, "generation"], "full")
    by_gen = Window.partitionBy(*group).orderBy("generation")
    causes = _member_causes(ev, rows)
    return (
        rows.join(causes, [*group, "generation"], "left")
        .withColumn(
            "members_before",
            F.when(
                F.lag("generation").over(by_gen) == F.col("generation") - 1,
                F.lag("members_after").over(by_gen),
            ),
        )
        .withColumn(
            "follow_up",
            _follow_up(
                F.when(
                    F.lag("generation").over(by_gen) == F.col("generation") - 1,
                    F.lag("stabilized_at").over(by_gen),
                )
            ),
        )
        .withColumn("date", F.lit(run_date).cast("date"))
        .where(F.to_date(F.coalesce("started_at", "stabilized_at")) == F.col("date"))
        .select(
            *group,
            "date",
            F.col("generation").cast("int").alias("generation"),
            F.coalesce("protocol", "_p", F.lit("classic")).alias("protocol"),
            "started_at",
            "stabilized_at",
            (F.unix_millis("stabilized_at") - F.unix_millis("started_at")).alias("duration_ms"),
            F.coalesce("start_reason", "member_cause").alias("cause"),
            "members_before",
            "members_after",
            F.coalesce("start_broker", "end_broker").alias("coordinator_broker"),
            coordinator_partition("group_id", offsets_partitions).alias("coordinator_partition"),
            "follow_up",
        )
    )


def _follow_up(previous_end: F.Column) -> F.Column:
    """generations.is_follow_up over the start reason and the previous generation's end."""
    parts = F.split(F.coalesce(F.col("start_reason"), F.lit("")), re.escape(CLIENT_REASON), 2)
    coordinator = parts.getItem(0)
    client = F.regexp_replace(F.trim(F.coalesce(F.get(parts, 1), F.lit(""))), r"\.$", "")
    within = F.unix_micros("started_at") - F.unix_micros(previous_end) <= (
        FOLLOW_UP_WINDOW // dt.timedelta(microseconds=1)
    )
    silent = client.isin(*SILENT_CLIENT) & coordinator.rlike(STABLE_REJOIN.pattern) & within
    return F.coalesce(client.startswith(REVOKE_ROUND) | silent, F.lit(False))


def _member_causes(ev: DataFrame, rows: DataFrame) -> DataFrame:
    """For KIP-848 epochs: the member events between the previous epoch's start and
    this one's, as "member_left x2, member_joined"."""
    group = ["cluster", "group_id"]
    by_gen = Window.partitionBy(*group).orderBy("generation")
    spans = rows.where(F.col("started_at").isNotNull()).select(
        *group,
        "generation",
        "started_at",
        F.lag("started_at").over(by_gen).alias("previous_start"),
    )
    members = ev.where(F.col("event").isin(*MEMBER_EVENTS)).select(
        *group, F.col("logged_at").alias("at"), "event"
    )
    joined = members.join(spans, group).where(
        (F.col("at") <= F.col("started_at"))
        & (F.col("previous_start").isNull() | (F.col("at") > F.col("previous_start")))
    )
    counted = joined.groupBy(*group, "generation", "event").agg(F.count(F.lit(1)).alias("n"))
    label = F.when(F.col("n") > 1, F.format_string("%s x%d", "event", "n")).otherwise(
        F.col("event")
    )
    return counted.groupBy(*group, "generation").agg(
        F.array_join(F.sort_array(F.collect_list(label)), ", ").alias("member_cause")
    )
