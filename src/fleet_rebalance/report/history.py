"""The report's last N days, read from the warehouse: fleet totals per day, the listed
groups' daily numbers, and what is new since last week.

Every read names the window's dates (partition filters on `date`), so the report costs
N days whatever the warehouse holds; only per-day totals, the listed groups' rows and
top-N lists reach the driver.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd
import pyspark.sql.functions as F
from pyspark.sql import DataFrame

from fleet_rebalance.storage.warehouse import Warehouse
from fleet_rebalance.vocabulary import Change

WEEK = 7
KEYS = ["cluster", "group_id"]
GROUP_COLUMNS = (
    "cluster",
    "group_id",
    "date",
    "rebalances",
    "paused_partition_seconds",
    "last_status",
    "lag_p99",
)


@dataclass
class HistoryFacts:
    dates: list[dt.date]  # every calendar date of the window, oldest first
    # date, groups (group_health rows), rebalances, paused_partition_seconds,
    # needing_attention (severity > 0), changes (a change other than keep): dates with rows
    fleet: pd.DataFrame
    # GROUP_COLUMNS for the listed groups; lag_p99 is the worst topic's p99 (messages)
    groups: pd.DataFrame
    # The date "new since last week" compares with: run date - 7 if it has rows, else
    # the oldest date within the week that has; None when the run date is the first.
    baseline: dt.date | None
    started: pd.DataFrame  # cluster, group_id, severity, attention: needing it, not before
    started_total: int
    appeared: pd.DataFrame  # cluster, group_id, change_kind, was (the baseline's kind)
    appeared_total: int
    gone: pd.DataFrame  # cluster, group_id, change_kind (now), was
    gone_total: int


def window(run_date: dt.date, days: int) -> list[dt.date]:
    """The `days` dates ending at run_date, oldest first."""
    return [run_date - dt.timedelta(days=days - 1 - i) for i in range(days)]


def baseline_date(run_date: dt.date, present: list[dt.date]) -> dt.date | None:
    """Last week's date to compare with: run_date - 7 when the warehouse has it, else the
    oldest date of the week before run_date that it has (None: nothing before)."""
    week = [d for d in present if run_date - dt.timedelta(days=WEEK) <= d < run_date]
    return min(week) if week else None


def gather(
    warehouse: Warehouse,
    run_date: dt.date,
    days: int,
    listed: pd.DataFrame,
    top: int,
) -> HistoryFacts:
    dates = window(run_date, max(days, WEEK + 1))
    shown = dates[-days:]
    # The window's partitions only (a week back at least, for "new since last week").
    health = warehouse.read("group_health", where={"date": dates})
    fleet = (
        health.where(F.col("date").isin(shown))
        .groupBy("date")
        .agg(
            F.count(F.lit(1)).alias("groups"),
            F.sum("rebalances").alias("rebalances"),
            F.sum("paused_partition_seconds").alias("paused_partition_seconds"),
            F.sum(F.when(F.col("severity") > 0, 1).otherwise(0)).alias("needing_attention"),
            F.sum(F.when(_changing(F.col("change_kind")), 1).otherwise(0)).alias("changes"),
        )
        .orderBy("date")
        .toPandas()
    )
    present = [r["date"] for r in health.select("date").distinct().collect()]
    baseline = baseline_date(run_date, present)
    keys = _keys(warehouse, listed)
    lag = (
        warehouse.read("lag_distribution", where={"date": shown})
        .join(keys, KEYS, how="left_semi")
        .groupBy(*KEYS, "date")
        .agg(F.max("lag_p99").alias("lag_p99"))
    )
    groups = (
        health.where(F.col("date").isin(shown))
        .join(keys, KEYS, how="left_semi")
        .join(lag, [*KEYS, "date"], how="left")
        .select(*GROUP_COLUMNS)
        .orderBy(*KEYS, "date")
        .toPandas()
    )
    started, appeared, gone = _compared(health, run_date, baseline)
    return HistoryFacts(
        dates=shown,
        fleet=fleet,
        groups=groups,
        baseline=baseline,
        started=_first(started, top, F.col("severity").desc()),
        started_total=started.count(),
        appeared=_first(appeared, top, F.col("paused_partition_seconds_saved").desc_nulls_last()),
        appeared_total=appeared.count(),
        gone=_first(gone, top),
        gone_total=gone.count(),
    )


def _changing(kind: F.Column) -> F.Column:
    return kind.isNotNull() & (kind != Change.KEEP)


def _keys(warehouse: Warehouse, listed: pd.DataFrame) -> DataFrame:
    rows = [(r.cluster, r.group_id) for r in listed.itertuples()]
    return warehouse.spark.createDataFrame(rows, "cluster string, group_id string")


def _compared(
    health: DataFrame, run_date: dt.date, baseline: dt.date | None
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Groups that started needing attention, changes that appeared and changes that
    went away between the baseline date and the run date (nothing without a baseline)."""
    now = health.where(F.col("date") == F.lit(run_date)).select(
        *KEYS,
        "severity",
        "attention",
        "change_kind",
        "paused_partition_seconds_saved",
    )
    if baseline is None:
        empty = now.limit(0).withColumn("was", F.lit(None).cast("string"))
        return empty, empty, empty
    before = health.where(F.col("date") == F.lit(baseline)).select(
        *KEYS,
        F.col("severity").alias("severity_before"),
        F.col("change_kind").alias("was"),
    )
    both = now.join(before, KEYS, how="full")
    kind, was = F.col("change_kind"), F.col("was")
    started = both.where(
        (F.col("severity") > 0) & (F.coalesce(F.col("severity_before"), F.lit(0)) == 0)
    )
    appeared = both.where(_changing(kind) & (was.isNull() | (was != kind)))
    gone = both.where(_changing(was) & (kind.isNull() | (kind != was)))
    return started, appeared, gone


def _first(frame: DataFrame, top: int, *order: F.Column) -> pd.DataFrame:
    columns = ["cluster", "group_id", "severity", "attention", "change_kind", "was"]
    return frame.orderBy(*order, *KEYS).select(*columns).limit(top).toPandas()
