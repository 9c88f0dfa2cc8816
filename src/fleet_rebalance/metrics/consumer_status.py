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

# Rules 2-5 over `w`, an array of struct(offset, lag, ts) oldest first, and `now`.
_PAIRS = "sequence(1, size(w) - 1)"  # windows of two or more entries
REWIND = f"exists({_PAIRS}, i -> get(w, i).offset < get(w, i - 1).offset)"
STOP = "now - get(w, size(w) - 1).ts > get(w, size(w) - 1).ts - get(w, 0).ts"
STALL = f"forall({_PAIRS}, i -> get(w, i).offset = get(w, i - 1).offset)"
WARN = f"forall({_PAIRS}, i -> get(w, i).lag >= get(w, i - 1).lag)"


def _rank(status: F.Column) -> F.Column:
    return F.create_map(*[F.lit(x) for kv in RANKS.items() for x in kv])[status]


def _status_of(rank: F.Column) -> F.Column:
    by_rank = {v: k for k, v in RANKS.items()}
    return F.create_map(*[F.lit(x) for kv in by_rank.items() for x in kv])[rank]


def window_status(samples: DataFrame, intervals: int) -> DataFrame:
    """One row per committed sample: its window's Burrow status."""
    by_time = Window.partitionBy(*PARTITION).orderBy("captured_at")
    committed = samples.where(F.col("current_offset").isNotNull() & F.col("lag").isNotNull())
    previous = F.lag("current_offset").over(by_time)
    seconds = F.unix_micros("captured_at") / 1_000_000
    changed = previous.isNull() | (F.col("current_offset") != previous)
    # One window order for everything: since = when the offset last changed.
    since = F.max(F.when(F.col("_changed"), seconds)).over(
        by_time.rowsBetween(Window.unboundedPreceding, 0)
    )
    entries = (
        committed.withColumn("_changed", changed)
        .withColumn("since", since)
        .withColumn(
            "ts", F.when(F.col("consumer_id").isNotNull(), seconds).otherwise(F.col("since"))
        )
    )
    window = by_time.rowsBetween(-(intervals - 1), 0)
    rated = entries.withColumn(
        "w",
        F.collect_list(F.struct(F.col("current_offset").alias("offset"), "lag", "ts")).over(window),
    ).withColumn("now", seconds)
    no_zero = F.expr("NOT exists(w, e -> e.lag = 0)")
    status = (
        F.when((F.col("lag") <= 0) | ~no_zero, "OK")
        .when(F.size("w") < 2, "OK")
        .when(F.expr(REWIND), "REWIND")
        .when(F.expr(STOP), "STOP")
        .when(F.expr(STALL), "STALL")
        .when(F.expr(WARN), "WARN")
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
