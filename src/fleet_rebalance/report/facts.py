"""The small, driver-sized facts the summary and the report show, read from the tables.

Every query reads the run date's partitions only and aggregates in Spark first; only
top-N lists (the timeline: the top-N groups' rebalances) and per-assignor totals reach
the driver.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.replay.engine import OBSERVED
from fleet_rebalance.storage.warehouse import Warehouse


@dataclass
class DayFacts:
    run_date: dt.date
    groups: int
    rebalances: int
    replay_errors: int
    quarantined: int
    per_assignor: pd.DataFrame  # assignor, stickiness, paused_partitions, events
    # cluster, group_id, observed paused and skew, then the recommendation's change_kind,
    # compared_with, recommended_assignor, declared_ and recommended_ paused and skew
    top_paused: pd.DataFrame
    top_lag_skew: pd.DataFrame  # the same columns
    # change_kind, recommended_assignor, groups, paused_partitions_saved
    recommendations: pd.DataFrame
    status_counts: pd.DataFrame  # group_status, groups
    worst_lag: pd.DataFrame  # cluster, group_id, topic, lag bands, time lag
    # cluster, group_id, generation, started_at, duration_ms, cause: the busiest groups
    timeline: pd.DataFrame


def gather(spark: SparkSession, config: Config, run_date: dt.date) -> DayFacts:
    warehouse = Warehouse(spark, config.warehouse)

    def table(name: str, date_column: str) -> DataFrame:
        """The run date's partition only: the report costs its day, not the history."""
        return warehouse.read(name, where={date_column: run_date})

    top = config.metrics.report_top
    sticky = table("stickiness", "date")
    skewed = table("skew", "date")
    recs = table("recommendations", "date")
    captured = (
        table("group_states", "capture_date")
        .select("cluster", "group_id")
        .unionByName(table("offsets", "capture_date").select("cluster", "group_id"))
        .distinct()
        .count()
    )
    per_assignor = (
        sticky.groupBy("assignor")
        .agg(
            (F.sum("kept") / (F.sum("kept") + F.sum("reassigned"))).alias("stickiness"),
            F.sum("paused_partitions").alias("paused_partitions"),
            F.sum("events").alias("events"),
        )
        .orderBy("assignor")
        .toPandas()
    )
    recommended = recs.select(
        "cluster",
        "group_id",
        "change_kind",
        "compared_with",
        "recommended_assignor",
        "declared_paused_partitions",
        "recommended_paused_partitions",
        "paused_partitions_saved",
        "declared_mean_lag_skew",
        "recommended_mean_lag_skew",
        "recommended_max_count_spread",
    )
    observed = (
        sticky.where(F.col("assignor") == OBSERVED)
        .select("cluster", "group_id", F.col("paused_partitions").alias("observed_paused"))
        .join(
            skewed.where(F.col("assignor") == OBSERVED).select(
                "cluster",
                "group_id",
                F.col("mean_lag_skew").alias("observed_lag_skew"),
                F.col("max_count_spread").alias("observed_max_count_spread"),
            ),
            ["cluster", "group_id"],
            how="inner",
        )
        .join(recommended, ["cluster", "group_id"], how="left")
    )
    lag = table("lag_distribution", "date").orderBy(F.col("lag_p99").desc_nulls_last()).limit(top)
    return DayFacts(
        run_date=run_date,
        groups=captured,
        rebalances=table("rebalance_events", "event_date").count(),
        replay_errors=table("replay_errors", "event_date").count(),
        quarantined=table("quarantine", "capture_date").count(),
        per_assignor=per_assignor,
        top_paused=observed.orderBy(F.col("observed_paused").desc(), "group_id")
        .limit(top)
        .toPandas(),
        top_lag_skew=observed.where(F.col("observed_lag_skew").isNotNull())
        .orderBy(F.col("observed_lag_skew").desc(), "group_id")
        .limit(top)
        .toPandas(),
        recommendations=recs.groupBy("change_kind", "recommended_assignor")
        .agg(
            F.count(F.lit(1)).alias("groups"),
            F.sum("paused_partitions_saved").alias("paused_partitions_saved"),
        )
        .orderBy(F.col("groups").desc(), "change_kind", "recommended_assignor")
        .toPandas(),
        status_counts=table("consumer_status", "date")
        .select("cluster", "group_id", "group_status")
        .distinct()
        .groupBy("group_status")
        .count()
        .orderBy("group_status")
        .toPandas(),
        worst_lag=lag.toPandas(),
        timeline=busiest_timelines(table("rebalance_timeline", "date"), top)
        .select(
            "cluster", "group_id", "generation", "protocol", "started_at", "duration_ms", "cause"
        )
        .orderBy("cluster", "group_id", "generation")
        .toPandas(),
    )


def busiest_timelines(timeline: DataFrame, top: int) -> DataFrame:
    """The timeline rows of the `top` groups with the most generations (ties by cluster
    and group): one lane each on the page, whatever the fleet's size."""
    busiest = (
        timeline.groupBy("cluster", "group_id")
        .count()
        .orderBy(F.col("count").desc(), "cluster", "group_id")
        .limit(top)
    )
    return timeline.join(busiest, ["cluster", "group_id"], how="left_semi")
