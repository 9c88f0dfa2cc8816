"""What each listed group's own section shows, read for the run date only: its
generations with their classified cause, the replay's declared vs recommended
comparison, and its lag per topic."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd
import pyspark.sql.functions as F
from pyspark.sql import DataFrame

from fleet_rebalance.storage.warehouse import Reads

KEYS = ["cluster", "group_id"]
FOLLOW_UP, UNCLASSIFIED = "follow-up round", "not classified"
RECOMMENDATION_COLUMNS = (
    "cluster",
    "group_id",
    "declared_assignor",
    "recommended_assignor",
    "compared_with",
    "events",
    "declared_paused_partitions",
    "recommended_paused_partitions",
    "declared_max_count_spread",
    "recommended_max_count_spread",
    "declared_mean_lag_skew",
    "recommended_mean_lag_skew",
    "declared_stickiness",
    "recommended_stickiness",
    "reason",
)
LAG_COLUMNS = (
    "cluster",
    "group_id",
    "topic",
    "lag_p50",
    "lag_p90",
    "lag_p99",
    "lag_max",
    "time_lag_p50_seconds",
    "time_lag_max_seconds",
)
TIMELINE_COLUMNS = (
    "cluster",
    "group_id",
    "generation",
    "protocol",
    "started_at",
    "duration_ms",
    "cause",
    "cause_kind",
)


@dataclass
class GroupDetails:
    timeline: pd.DataFrame  # TIMELINE_COLUMNS: every logged generation of the groups
    recommendations: pd.DataFrame  # RECOMMENDATION_COLUMNS
    lag: pd.DataFrame  # LAG_COLUMNS, one row per topic


def with_cause_kind(timeline: DataFrame, causes: DataFrame) -> DataFrame:
    """The timeline with `cause_kind`: the rebalance_causes cause(s) matched to each
    generation (joined with ", " when members left for different reasons), else
    `follow-up round` for a cooperative revocation round, else `not classified`."""
    matched = (
        causes.where(F.col("generation").isNotNull())
        .groupBy(*KEYS, "generation")
        .agg(F.array_join(F.sort_array(F.collect_set("cause")), ", ").alias("matched"))
    )
    return (
        timeline.join(matched, [*KEYS, "generation"], how="left")
        .withColumn(
            "cause_kind",
            F.coalesce(
                F.col("matched"),
                F.when(F.col("follow_up"), F.lit(FOLLOW_UP)),
                F.lit(UNCLASSIFIED),
            ),
        )
        .drop("matched")
    )


def gather(reads: Reads, run_date: dt.date, listed: pd.DataFrame) -> GroupDetails:
    """The listed groups' sections, from the frames of the run date the report's other
    facts read (`reads`): no table listed again."""
    rows = [(r.cluster, r.group_id) for r in listed.itertuples()]
    keys = reads.warehouse.spark.createDataFrame(rows, "cluster string, group_id string")

    def table(name: str, date_column: str = "date") -> DataFrame:
        """The run date's partition, the listed groups' rows."""
        return reads(name, date_column, run_date).join(keys, KEYS, how="left_semi")

    timeline = with_cause_kind(table("rebalance_timeline"), table("rebalance_causes"))
    return GroupDetails(
        timeline=timeline.select(*TIMELINE_COLUMNS).orderBy(*KEYS, "generation").toPandas(),
        recommendations=table("recommendations")
        .select(*RECOMMENDATION_COLUMNS)
        .orderBy(*KEYS)
        .toPandas(),
        lag=table("lag_distribution")
        .select(*LAG_COLUMNS)
        .orderBy(*KEYS, F.col("lag_p99").desc_nulls_last(), "topic")
        .toPandas(),
    )
