"""`protocol_migration_plan`: every classic group of the date with its blockers, the
replayed effect of uniform against what it runs now, a readiness verdict and its wave
(rules in migration_rules.py). Built from the date's written group_health, stickiness and
skew and its bronze captures and logs; fleet-wide, so one Arrow call per date ranks it.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from fleet_rebalance.metrics.arrow_rows import Rows, grouped_rows
from fleet_rebalance.metrics.migration_rules import (
    PREREQUISITES,
    TARGET_ASSIGNOR,
    GroupFacts,
    ranked,
    verdict,
)
from fleet_rebalance.metrics.recommendations import declared_strategies
from fleet_rebalance.vocabulary import GroupType

KEYS = ["cluster", "group_id", "date"]


def migration_plan(
    health: DataFrame,
    stickiness: DataFrame,
    skew: DataFrame,
    group_states: DataFrame,
    members: DataFrame,
    context: DataFrame,
    schema: StructType,
) -> DataFrame:
    """`context`: protocols.group_context (protocol, brokers and instance_ids per group
    and date)."""
    uniform = F.col("assignor") == TARGET_ASSIGNOR
    replayed = stickiness.where(uniform).select(
        *KEYS,
        F.col("paused_partitions").alias("paused_partitions_uniform"),
        F.col("paused_partition_seconds").alias("paused_partition_seconds_uniform"),
    )
    spread = skew.where(uniform).select(
        *KEYS, F.col("max_count_spread").alias("max_count_spread_uniform")
    )
    per_capture = members.groupBy(
        "cluster", "group_id", F.col("capture_date").alias("date"), "captured_at"
    ).agg(F.count(F.lit(1)).alias("n"))
    membership = per_capture.groupBy(*KEYS).agg(F.max("n").cast("int").alias("members"))
    facts = (
        health.select(
            *KEYS,
            "rebalances",
            "generations_logged",
            F.col("paused_partitions").alias("paused_partitions_now"),
            F.col("paused_partition_seconds").alias("paused_partition_seconds_now"),
            F.col("max_count_spread").alias("max_count_spread_now"),
        )
        .join(
            context.select(
                *KEYS,
                "protocol",
                "brokers",
                F.size(F.coalesce("instance_ids", F.array())).cast("int").alias("static_members"),
            ),
            KEYS,
            "left",
        )
        .where(F.coalesce(F.col("protocol"), F.lit(GroupType.CLASSIC)) == GroupType.CLASSIC)
        .join(declared_strategies(group_states), KEYS, "left")
        .join(membership, KEYS, "left")
        .join(replayed, KEYS, "left")
        .join(spread, KEYS, "left")
    )
    return grouped_rows(facts, ["date"], plan_rows, schema)


def plan_rows(records: Rows) -> Rows:
    """The plan's rows for one date's classic groups (the facts `migration_plan` joins)."""
    judged = [(_facts(r), r) for r in records]
    order = ranked((facts, verdict(facts)) for facts, _ in judged)
    rows = []
    for (facts, v, place), (_, record) in zip(order, judged, strict=True):
        rows.append(
            {
                **record,
                "declared_assignor": facts.declared_assignor,
                "target_assignor": TARGET_ASSIGNOR,
                "members": facts.members,
                "static_members": facts.static_members,
                "blockers": list(v.blockers),
                "cautions": list(v.cautions),
                "readiness": v.readiness,
                "wave": v.wave,
                "migration_order": place,
                "paused_partitions_saved": v.paused_partitions_saved,
                "paused_partition_seconds_saved": v.paused_seconds_saved,
                "prerequisites": PREREQUISITES,
                "reason": v.reason,
            }
        )
    return rows


def _facts(r: dict) -> GroupFacts:
    return GroupFacts(
        cluster=r["cluster"],
        group_id=r["group_id"],
        declared_assignor=r.get("declared_assignor"),
        brokers=r.get("brokers"),
        members=int(r.get("members") or 0),
        static_members=int(r.get("static_members") or 0),
        rebalances=int(r.get("rebalances") or 0),
        generations_logged=int(r.get("generations_logged") or 0),
        paused_partitions_now=r.get("paused_partitions_now"),
        paused_partitions_uniform=r.get("paused_partitions_uniform"),
        paused_seconds_now=r.get("paused_partition_seconds_now"),
        paused_seconds_uniform=r.get("paused_partition_seconds_uniform"),
    )
