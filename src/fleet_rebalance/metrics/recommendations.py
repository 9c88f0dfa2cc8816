"""`recommendations`: per group and date, the assignor to run.

Rule (DESIGN.md): among the replayed assignors, keep those whose count_spread never
exceeds 1 when any does; then the fewest paused partitions, then the lowest mean lag
skew (unknown skew last); a tie keeps the declared assignor, then goes by name.
`observed` is what ran, not a choice. Deltas are recommended minus declared (the
group's strategy in its latest state capture of the day; when that assignor was not
replayed, `observed` stands in, and `compared_with` says which).
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window

from fleet_rebalance.replay.engine import OBSERVED

GROUP = ["cluster", "group_id", "date"]
COMPARED = ["paused_partitions", "max_count_spread", "mean_lag_skew", "stickiness"]


def declared_strategies(group_states: DataFrame) -> DataFrame:
    known = group_states.where(F.col("assignment_strategy").isNotNull())
    return known.groupBy("cluster", "group_id", F.col("capture_date").alias("date")).agg(
        F.max_by("assignment_strategy", "captured_at").alias("declared_assignor")
    )


def recommendations(stickiness: DataFrame, skew: DataFrame, declared: DataFrame) -> DataFrame:
    per_assignor = stickiness.select(
        *GROUP, "assignor", "events", "paused_partitions", "stickiness"
    ).join(
        skew.select(*GROUP, "assignor", "max_count_spread", "mean_lag_skew"), [*GROUP, "assignor"]
    )
    group = Window.partitionBy(*GROUP)
    candidates = per_assignor.where(F.col("assignor") != OBSERVED).withColumn(
        "balanced_possible", F.max((F.col("max_count_spread") <= 1).cast("int")).over(group)
    )
    candidates = candidates.join(declared, GROUP, "left")
    order = Window.partitionBy(*GROUP).orderBy(
        ((F.col("max_count_spread") <= 1).cast("int") < F.col("balanced_possible")).cast("int"),
        F.col("paused_partitions").asc(),
        F.col("mean_lag_skew").asc_nulls_last(),
        (F.col("assignor") == F.coalesce("declared_assignor", F.lit(""))).cast("int").desc(),
        F.col("assignor").asc(),
    )
    best = (
        candidates.withColumn("_rank", F.row_number().over(order))
        .where("_rank = 1")
        .select(
            *GROUP,
            "events",
            "declared_assignor",
            *[F.col(c).alias(f"recommended_{c}") for c in ["assignor", *COMPARED]],
        )
    )

    def side(name: str) -> DataFrame:
        return per_assignor.select(
            *GROUP,
            F.col("assignor").alias(f"{name}_assignor"),
            *[F.col(c).alias(f"{name}_{c}") for c in COMPARED],
        )

    joined = best.join(side("d"), [*GROUP], "left").where(
        F.col("d_assignor").isNull()
        | (F.col("d_assignor") == F.col("declared_assignor"))
        | (F.col("d_assignor") == OBSERVED)
    )
    # One row per group: the declared assignor's row when it was replayed, else observed's.
    prefer = Window.partitionBy(*GROUP).orderBy(
        (F.col("d_assignor") == F.col("declared_assignor")).cast("int").desc_nulls_last()
    )
    joined = (
        joined.withColumn("_pick", F.row_number().over(prefer))
        .where("_pick = 1")
        .withColumnRenamed("d_assignor", "compared_with")
    )
    for c in COMPARED:
        joined = joined.withColumnRenamed(f"d_{c}", f"declared_{c}")
    deltas = [
        (F.col(f"recommended_{c}") - F.col(f"declared_{c}")).alias(f"{c}_delta") for c in COMPARED
    ]
    return joined.select(
        *GROUP,
        "declared_assignor",
        "recommended_assignor",
        "compared_with",
        "events",
        *[F.col(f"{side}_{c}") for c in COMPARED for side in ("declared", "recommended")],
        *deltas,
        _reason().alias("reason"),
    )


def _reason() -> F.Column:
    rec, base = F.col("recommended_assignor"), F.col("compared_with")
    skew = F.format_string(
        ", mean lag skew %.2f vs %.2f",
        F.col("recommended_mean_lag_skew"),
        F.col("declared_mean_lag_skew"),
    )
    change = F.format_string(
        "%s over %d rebalances: %d paused partitions vs %d under %s, max count spread %d vs %d",
        rec,
        F.col("events"),
        F.col("recommended_paused_partitions"),
        F.col("declared_paused_partitions"),
        base,
        F.col("recommended_max_count_spread"),
        F.col("declared_max_count_spread"),
    )
    keep = F.concat(F.lit("keep "), rec, F.lit(": no replayed assignor does better"))
    return F.when(rec == base, keep).otherwise(F.concat(change, F.coalesce(skew, F.lit(""))))
