"""`consumer_status`: Burrow's partition evaluation over windows of captured offsets.

Burrow keeps, per partition, the last `intervals` commits (offset, lag, timestamp) and
rates them (evaluator/caching.go): OK when the lag is zero now or anywhere in the
window; otherwise, worst first, REWIND (an offset went backwards), STOP (time since the
last commit exceeds the window's span), STALL (offsets never move), WARN (lag never
decreases), else OK. A group's status is its worst partition's, capped at ERR.

Captures are not commits, so each capture is one window entry and its timestamp says
when the consumer last showed life: the capture time while a member owns the
partition (a live consumer commits on every poll), else the first capture that showed
the current offset (nobody has committed since). So a partition left without an owner
STOPs, and one whose owner keeps the offset still STALLs, as Burrow tells them apart.
The previous date's captures fill the first windows of the day; one status is rated at
every capture of the date. A window of a single capture has nothing to compare and is
OK (Burrow, rating one commit, would call it STALL or STOP).
"""

from __future__ import annotations

import datetime as dt

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window

RANKS = {"OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5, "REWIND": 6}
PARTITION = ["cluster", "group_id", "topic", "partition"]


def _rank(status: F.Column) -> F.Column:
    return F.create_map(*[F.lit(x) for kv in RANKS.items() for x in kv])[status]


def _status_of(rank: F.Column) -> F.Column:
    by_rank = {v: k for k, v in RANKS.items()}
    return F.create_map(*[F.lit(x) for kv in by_rank.items() for x in kv])[rank]


def window_status(samples: DataFrame, intervals: int) -> DataFrame:
    """One row per committed sample: its window's Burrow status.

    A window is the sample and the `intervals - 1` committed samples before it. Rules
    over neighbouring entries (an offset going back, moving, the lag shrinking) are
    flags on each entry against the one before it, so "any pair in the window" is a
    max over the window less its first entry: sliding aggregates of numbers, no array
    of entries per row."""
    by_time = Window.partitionBy(*PARTITION).orderBy("captured_at")
    window = by_time.rowsBetween(-(intervals - 1), 0)
    pairs = by_time.rowsBetween(-(intervals - 2), 0) if intervals > 1 else None
    committed = samples.where(F.col("current_offset").isNotNull() & F.col("lag").isNotNull())
    offset, lag = F.col("current_offset"), F.col("lag")
    previous_offset, previous_lag = F.col("_previous_offset"), F.col("_previous_lag")
    seconds = F.unix_micros("captured_at") / 1_000_000
    changed = previous_offset.isNull() | (offset != previous_offset)
    # One window order for everything: since = when the offset last changed.
    since = F.max(F.when(F.col("_changed"), seconds)).over(
        by_time.rowsBetween(Window.unboundedPreceding, 0)
    )

    def any_pair(flag: F.Column) -> F.Column:
        if pairs is None:
            return F.lit(False)
        return F.max(F.coalesce(flag, F.lit(False))).over(pairs)

    entries = (
        committed.withColumn("_previous_offset", F.lag(offset).over(by_time))
        .withColumn("_previous_lag", F.lag(lag).over(by_time))
        .withColumn("_changed", changed)
        .withColumn("since", since)
        .withColumn(
            "ts", F.when(F.col("consumer_id").isNotNull(), seconds).otherwise(F.col("since"))
        )
    )
    rated = entries.select(
        "*",
        F.count(F.lit(1)).over(window).alias("_size"),
        F.max(lag == 0).over(window).alias("_zero"),
        F.first("ts").over(window).alias("_first_ts"),
        any_pair(offset < previous_offset).alias("_rewound"),
        any_pair(offset != previous_offset).alias("_moved"),
        any_pair(lag < previous_lag).alias("_shrank"),
    )
    now, ts = seconds, F.col("ts")
    status = (
        F.when((lag <= 0) | F.col("_zero"), "OK")
        .when(F.col("_size") < 2, "OK")
        .when(F.col("_rewound"), "REWIND")
        .when(now - ts > ts - F.col("_first_ts"), "STOP")
        .when(~F.col("_moved"), "STALL")
        .when(~F.col("_shrank"), "WARN")
        .otherwise("OK")
    )
    return rated.select(*PARTITION, "captured_at", "capture_date", "lag", status.alias("status"))


def consumer_status(samples: DataFrame, run_date: dt.date, intervals: int = 10) -> DataFrame:
    """Per partition: its status at the date's last capture, its worst over the date,
    and its group's Burrow status (worst partition at the end, capped at ERR) and worst
    partition status over the date."""
    rated = window_status(samples, intervals).where(F.col("capture_date") == F.lit(run_date))
    rated = rated.withColumn("rank", _rank(F.col("status")))
    latest = F.struct("captured_at")
    worst_first = F.struct(F.col("rank"), -F.unix_micros("captured_at"))
    per_partition = rated.groupBy(*PARTITION).agg(
        F.count(F.lit(1)).cast("int").alias("windows"),
        F.max_by("status", latest).alias("status"),
        F.max_by("lag", latest).alias("current_lag"),
        F.max("captured_at").alias("evaluated_at"),
        F.max("rank").alias("_worst"),
        F.max_by("captured_at", worst_first).alias("worst_status_at"),
        F.count_if(F.col("rank") > 1).cast("int").alias("non_ok_windows"),
    )
    group = Window.partitionBy("cluster", "group_id")
    end_rank = F.max(_rank(F.col("status"))).over(group)
    return per_partition.select(
        *PARTITION,
        F.lit(run_date).cast("date").alias("date"),
        "windows",
        "status",
        "current_lag",
        "evaluated_at",
        _status_of(F.col("_worst")).alias("worst_status"),
        "worst_status_at",
        "non_ok_windows",
        _status_of(F.least(end_rank, F.lit(RANKS["ERR"]))).alias("group_status"),
        _status_of(F.max("_worst").over(group)).alias("group_worst_status"),
    )
