"""`group_health`: one row per group and date, read by the summary and the report.

It is built from the date's other gold tables once they are written (small, one row per
group or per partition), so nothing upstream is computed twice. Every group any of them
knows gets a row: a group with offsets but no rebalance has a Burrow status and no
replay numbers; an idle group with a rebalance and no offsets the reverse. Its pauses,
balance and lag skew are what the group runs as the recommendation measures it (the
declared assignor's replay of every generation), so the two tables agree.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import Column, DataFrame
from pyspark.sql.types import StructType

from fleet_rebalance.metrics.arrow_rows import Rows, map_rows
from fleet_rebalance.metrics.attention import (
    DOUBLE_OWNED_COLUMN,
    ORPHANED_COLUMN,
    Limits,
    attention,
)
from fleet_rebalance.metrics.ownership_rules import DOUBLE, ORPHANED
from fleet_rebalance.vocabulary import Status

KEYS = ["cluster", "group_id", "date"]
CONVERGENCE_COLUMNS = (  # convergence_frame's, null without its table
    "epoch_bumps",
    "epochs_converged",
    "convergence_max_seconds",
    "convergence_median_seconds",
    "members_stuck_reconciling",
    "classic_members",
)
FROM_RECOMMENDATIONS = (
    "protocol",
    "declared_assignor",
    "change_kind",
    "recommended_assignor",
    "prerequisites",
    "paused_partitions_saved",
    "rebalances_saved",
    "paused_partition_seconds_saved",
    "messages_delayed_saved",
    "cross_zone_bytes_saved",
    "cross_zone_cost_saved",
)


def group_health(tables: dict[str, DataFrame], limits: Limits, schema: StructType) -> DataFrame:
    """`tables`: the date's stickiness, skew, consumer_status, rebalance_causes,
    rebalance_timeline, lag_distribution and recommendations, and ownership_audit
    (optional: its findings are attention reasons, not columns) and `convergence`
    (optional: metrics/convergence_frame.py's KIP-848 columns)."""
    # What the group runs, measured as every comparison measures it: the declared
    # assignor's replay of every generation (recommendations' compared_with; observed
    # where that assignor is not replayed).
    baseline = tables["recommendations"].select(*KEYS, F.col("compared_with").alias("assignor"))
    runs = (
        tables["stickiness"]
        .join(baseline, [*KEYS, "assignor"], how="left_semi")
        .select(*KEYS, "paused_partitions", "paused_partition_seconds", "messages_delayed")
    )
    skewed = (
        tables["skew"]
        .join(baseline, [*KEYS, "assignor"], how="left_semi")
        .select(*KEYS, "max_count_spread", "mean_lag_skew")
    )
    status = (
        tables["consumer_status"]
        .groupBy(*KEYS)
        .agg(
            # One value per group, repeated on each of its partitions' rows.
            F.max("group_status").alias("last_status"),
            F.max("group_worst_status").alias("worst_status"),
            F.count(F.lit(1)).cast("int").alias("partitions"),
            F.sum((F.col("status") != Status.OK).cast("int"))
            .cast("int")
            .alias("non_ok_partitions"),
        )
    )
    per_cause = tables["rebalance_causes"].groupBy(*KEYS, "cause").agg(F.count(F.lit(1)).alias("n"))
    causes = per_cause.groupBy(*KEYS).agg(
        F.sum("n").cast("int").alias("rebalances"),
        F.map_from_entries(
            F.array_sort(F.collect_list(F.struct("cause", F.col("n").cast("int"))))
        ).alias("rebalances_by_cause"),
    )
    generations = (
        tables["rebalance_timeline"]
        .groupBy(*KEYS)
        .agg(F.count(F.lit(1)).cast("int").alias("generations_logged"))
    )
    lag = (
        tables["lag_distribution"]
        .groupBy(*KEYS)
        .agg(
            largest_lag().alias("max_lag"),
            F.max("time_lag_max_seconds").alias("max_time_lag_seconds"),
        )
    )
    recs = tables["recommendations"].select(
        *KEYS, *FROM_RECOMMENDATIONS, F.col("reason").alias("change_reason")
    )
    parts = [runs, skewed, status, causes, generations, lag, recs]
    if "ownership_audit" in tables:
        parts.append(_ownership(tables["ownership_audit"]))
    if "convergence" in tables:  # convergence_frame's, one row per KIP-848 group
        parts.append(tables["convergence"])
    # Each part holds at most one row per group: full joins on the keys (a USING join
    # keeps one key column) give every group any part names, each part read once.
    joined = parts[0]
    for part in parts[1:]:
        joined = joined.join(part, KEYS, "full")
    if "protocols" in tables:  # protocols.group_protocols': where no recommendation says
        captured = tables["protocols"].select(*KEYS, F.col("protocol").alias("_captured"))
        joined = joined.join(captured, KEYS, "left").withColumn(
            "protocol", F.coalesce("protocol", "_captured")
        )
    joined = joined.withColumn("rebalances", F.coalesce("rebalances", F.lit(0))).withColumn(
        "generations_logged", F.coalesce("generations_logged", F.lit(0))
    )
    rated = ("severity", "attention")
    findings = [
        (F.col(c) if c in joined.columns else F.lit(None)).cast("array<string>").alias(c)
        for c in (DOUBLE_OWNED_COLUMN, ORPHANED_COLUMN)
    ]
    optional = [c for c in CONVERGENCE_COLUMNS if c not in joined.columns]
    joined = joined.select("*", *[F.lit(None).alias(c) for c in optional])
    prepared = joined.select(
        *[F.col(f.name).cast(f.dataType) for f in schema.fields if f.name not in rated],
        *findings,
    )

    def rate(rows: Rows) -> Rows:
        for row in rows:
            row["severity"], row["attention"] = attention(row, limits)
        return rows

    return map_rows(prepared, rate, schema)


def largest_lag() -> Column:
    """A group's largest partition lag of the day, in messages, over its
    lag_distribution rows (an aggregate): the lag the attention floor compares."""
    return F.max("lag_max")


def _ownership(audit: DataFrame) -> DataFrame:
    """Per group, the partitions of each ownership_audit finding as sorted names
    (`orders-3`), for attention's reasons."""

    def names(finding: str) -> Column:
        found = F.when(F.col("finding") == finding, F.struct("topic", "partition"))
        return F.transform(
            F.array_sort(F.collect_list(found)),
            lambda tp: F.concat(tp["topic"], F.lit("-"), tp["partition"].cast("string")),
        )

    return audit.groupBy(*KEYS).agg(
        names(DOUBLE).alias(DOUBLE_OWNED_COLUMN), names(ORPHANED).alias(ORPHANED_COLUMN)
    )
