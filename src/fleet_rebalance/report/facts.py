"""The small, driver-sized facts the summary and the report show, read from the tables.

Every query reads the run date's partitions only and aggregates in Spark first; only
top-N lists (the timeline: the top-N groups' rebalances) and per-assignor totals reach
the driver.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.replay.events import BOTH, LOGS
from fleet_rebalance.report import cross_zone, details, history, migration
from fleet_rebalance.report.details import GroupDetails
from fleet_rebalance.report.history import HistoryFacts
from fleet_rebalance.storage.warehouse import Reads, Warehouse
from fleet_rebalance.vocabulary import Change

# group_health's columns the first two sections show.
ATTENTION_COLUMNS = (
    "cluster",
    "group_id",
    "severity",
    "attention",
    "last_status",
    "worst_status",
    "rebalances",
    "paused_partition_seconds",
    "mean_lag_skew",
    "max_count_spread",
    "change_kind",
    "declared_assignor",
    "recommended_assignor",
    "rebalances_saved",
    "paused_partitions_saved",
    "paused_partition_seconds_saved",
    "messages_delayed_saved",
    "cross_zone_bytes_saved",
    "cross_zone_cost_saved",
    # KIP-848 convergence (null for groups no capture shows an epoch of)
    "epoch_bumps",
    "epochs_converged",
    "convergence_max_seconds",
    "convergence_median_seconds",
    "members_stuck_reconciling",
    "classic_members",
)
CHANGE_COLUMNS = (
    "cluster",
    "group_id",
    "change_kind",
    "protocol",
    "declared_assignor",
    "recommended_assignor",
    "prerequisites",
    "rebalances",
    "rebalances_saved",
    "paused_partitions_saved",
    "paused_partition_seconds_saved",
    "messages_delayed_saved",
    "cross_zone_bytes_saved",
    "cross_zone_cost_saved",
    "change_reason",
)

# A cell of the frames below: None or NaN where the table holds null (check it with
# metrics.attention.present), else the column's value (a list column arrives as an array).
Cell = Any


class GroupRow(Protocol):
    """A DataFrame.itertuples() row of a frame keyed by group."""

    cluster: str
    group_id: str


class SavingRow(GroupRow, Protocol):
    """The columns ATTENTION_COLUMNS and CHANGE_COLUMNS share: what a change saves."""

    change_kind: Cell
    declared_assignor: Cell
    recommended_assignor: Cell
    rebalances: Cell
    rebalances_saved: Cell
    paused_partitions_saved: Cell
    paused_partition_seconds_saved: Cell
    messages_delayed_saved: Cell
    cross_zone_bytes_saved: Cell
    cross_zone_cost_saved: Cell


class AttentionRow(SavingRow, Protocol):
    """A row of DayFacts.attention and DayFacts.listed (ATTENTION_COLUMNS)."""

    severity: Cell
    attention: Cell  # the reasons, an array
    last_status: Cell
    worst_status: Cell
    paused_partition_seconds: Cell
    mean_lag_skew: Cell
    max_count_spread: Cell
    epoch_bumps: Cell
    epochs_converged: Cell
    convergence_max_seconds: Cell
    convergence_median_seconds: Cell
    members_stuck_reconciling: Cell
    classic_members: Cell


class ChangeRow(SavingRow, Protocol):
    """A row of DayFacts.changes (CHANGE_COLUMNS)."""

    protocol: Cell
    prerequisites: Cell
    change_reason: Cell


@dataclass
class DayFacts:
    run_date: dt.date
    groups: int
    rebalances: int  # non-initial rebalance events (rebalance_causes rows)
    rebalances_logged: int  # of those, logged generations (source logs or both)
    initial_events: int  # the replay's baseline events, one per group and first capture
    generations_logged: int  # rebalance_timeline rows: what the coordinator logs saw
    follow_ups: int  # of those, cooperative revocation rounds (part of the one before)
    replay_errors: int
    quarantined: int
    # group_health: the groups that need attention (most severe first, then most paused
    # partition-time), the changes to make (largest saving first), and the totals.
    attention: pd.DataFrame  # ATTENTION_COLUMNS, at most report_top rows
    attention_total: int
    changes: pd.DataFrame  # CHANGE_COLUMNS, at most report_top rows
    # Groups that need attention or have a change to make (ATTENTION_COLUMNS), most
    # severe first, then largest saving: the terminal summary's table.
    listed: pd.DataFrame
    listed_total: int
    changes_by_kind: dict[str, int]  # change_kind (keep included) -> groups
    per_assignor: pd.DataFrame  # assignor, stickiness, paused_partitions, events
    # cluster, group_id and the recommendation's change_kind, compared_with,
    # recommended_assignor, declared_ (what runs) and recommended_ paused and skew
    top_paused: pd.DataFrame
    top_lag_skew: pd.DataFrame  # the same columns
    worst_lag: pd.DataFrame  # cluster, group_id, topic, lag bands, time lag
    # cluster, group_id, generation, protocol, started_at, duration_ms, cause (the
    # logged reason) and cause_kind (details.with_cause_kind): the busiest groups
    timeline: pd.DataFrame
    # The last report.history_days dates, and each listed group's own section: None
    # where not gathered (the page then has neither).
    history: HistoryFacts | None = None
    details: GroupDetails | None = None
    migration: migration.MigrationFacts | None = None  # None: no plan in the warehouse
    cross_zone: cross_zone.CrossZoneFacts | None = None  # None: no such table


def gather(spark: SparkSession, config: Config, run_date: dt.date) -> DayFacts:
    warehouse = Warehouse(spark, config.warehouse)
    reads = Reads(warehouse)
    try:
        return _gather(warehouse, reads, config, run_date)
    finally:
        reads.release()


def _gather(warehouse: Warehouse, reads: Reads, config: Config, run_date: dt.date) -> DayFacts:
    def table(name: str, date_column: str) -> DataFrame:
        """The run date's partition only: the report costs its day, not the history."""
        return reads(name, date_column, run_date)

    def cached(name: str, date_column: str) -> DataFrame:
        """table(), persisted: several queries below read it, and Delta lists its files
        once, not per query. reads.release() unpersists it."""
        return table(name, date_column).persist()

    top = config.metrics.report_top
    sticky = table("stickiness", "date")
    recs = cached("recommendations", "date")
    health = cached("group_health", "date")
    needs_attention = F.col("severity") > 0
    has_change = F.col("change_kind").isNotNull() & (F.col("change_kind") != Change.KEEP)
    needing = health.where(needs_attention)
    changing = health.where(has_change)
    listed = health.where(needs_attention | has_change)
    # One pass each for the counts a table gives.
    by_kind = (
        health.groupBy("change_kind")
        .agg(
            F.count(F.lit(1)).alias("groups"),
            F.count_if(needs_attention).alias("needing"),
            F.count_if(needs_attention | has_change).alias("listed"),
        )
        .collect()
    )
    not_initial = F.col("trigger") != "initial"
    [events] = (
        table("rebalance_events", "event_date")
        .agg(
            F.count_if(not_initial).alias("rebalances"),
            F.count_if(not_initial & F.col("source").isin(LOGS, BOTH)).alias("logged"),
            F.count_if(F.col("trigger") == "initial").alias("initial"),
        )
        .collect()
    )
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
            # null, not a division by zero, when no group moved a partition
            F.try_divide(F.sum("kept"), F.sum("kept") + F.sum("reassigned")).alias("stickiness"),
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
    ).where(F.col("compared_with").isNotNull())
    timeline = details.with_cause_kind(
        cached("rebalance_timeline", "date"), cached("rebalance_causes", "date")
    )
    [generations] = timeline.agg(
        F.count(F.lit(1)).alias("logged"), F.count_if(F.col("follow_up")).alias("follow_ups")
    ).collect()
    lag = table("lag_distribution", "date").orderBy(F.col("lag_p99").desc_nulls_last()).limit(top)
    listed_rows = _top(
        listed,
        ATTENTION_COLUMNS,
        top,
        F.col("severity").desc(),
        F.col("paused_partition_seconds_saved").desc_nulls_last(),
        F.col("rebalances").desc(),
    )
    return DayFacts(
        run_date=run_date,
        groups=captured,
        rebalances=events["rebalances"],
        rebalances_logged=events["logged"],
        initial_events=events["initial"],
        generations_logged=generations["logged"],
        follow_ups=generations["follow_ups"],
        replay_errors=table("replay_errors", "event_date").count(),
        quarantined=table("quarantine", "capture_date").count(),
        per_assignor=per_assignor,
        attention=_top(
            needing,
            ATTENTION_COLUMNS,
            top,
            F.col("severity").desc(),
            F.col("paused_partition_seconds").desc_nulls_last(),
            F.col("rebalances").desc(),
        ),
        attention_total=sum(row["needing"] for row in by_kind),
        changes=_top(
            changing,
            CHANGE_COLUMNS,
            top,
            F.col("paused_partition_seconds_saved").desc_nulls_last(),
            F.col("paused_partitions_saved").desc_nulls_last(),
            F.col("cross_zone_cost_saved").desc_nulls_last(),
        ),
        listed=listed_rows,
        listed_total=sum(row["listed"] for row in by_kind),
        changes_by_kind={
            row["change_kind"]: row["groups"] for row in by_kind if row["change_kind"] is not None
        },
        top_paused=recommended.where(F.col("declared_paused_partitions").isNotNull())
        .orderBy(F.col("declared_paused_partitions").desc(), "group_id")
        .limit(top)
        .toPandas(),
        top_lag_skew=recommended.where(F.col("declared_mean_lag_skew").isNotNull())
        .orderBy(F.col("declared_mean_lag_skew").desc(), "group_id")
        .limit(top)
        .toPandas(),
        worst_lag=lag.toPandas(),
        timeline=busiest_timelines(timeline, top)
        .select(*details.TIMELINE_COLUMNS)
        .orderBy("cluster", "group_id", "generation")
        .toPandas(),
        history=history.gather(warehouse, run_date, config.report.history_days, listed_rows, top),
        details=details.gather(reads, run_date, listed_rows),
        migration=migration.gather(warehouse, run_date, top),
        cross_zone=cross_zone.gather(reads, run_date, top),
    )


def _top(frame: DataFrame, columns: tuple[str, ...], top: int, *order: F.Column) -> pd.DataFrame:
    """The first `top` rows in `order` (then by cluster and group), as pandas."""
    return frame.orderBy(*order, "cluster", "group_id").select(*columns).limit(top).toPandas()


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
