"""`stickiness` and `skew`: replay_metrics rolled up per group, date and assignor."""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, GroupedData

KEY = ["cluster", "group_id", "date", "assignor"]


def _by_assignor(replay_metrics: DataFrame) -> GroupedData:
    return replay_metrics.withColumn("date", F.col("event_date")).groupBy(*KEY)


def stickiness(replay_metrics: DataFrame) -> DataFrame:
    """Movement per assignor over the day.

    `stickiness` pools the day (sum kept / sum kept + reassigned) so a busy event weighs
    more than a quiet one; `mean_stickiness` and `min_stickiness` are over the events
    where stickiness is defined. Conformance counts only events where it applies.
    `paused_partition_seconds` adds up the events a coordinator log times
    (`timed_events` of `events`); null when it times none, so an untimed day never
    reads as a day without pauses.
    """
    kept, reassigned = F.sum("kept"), F.sum("reassigned")
    return _by_assignor(replay_metrics).agg(
        F.first("protocol", ignorenulls=True).alias("protocol"),
        F.count(F.lit(1)).cast("int").alias("events"),
        kept.cast("long").alias("kept"),
        reassigned.cast("long").alias("reassigned"),
        F.sum("orphaned").cast("long").alias("orphaned"),
        F.sum("fresh").cast("long").alias("fresh"),
        F.when(kept + reassigned > 0, kept / (kept + reassigned)).alias("stickiness"),
        ordered_mean(F.col("stickiness")).alias("mean_stickiness"),
        F.min("stickiness").alias("min_stickiness"),
        F.sum("revoked").cast("long").alias("revoked"),
        F.sum("rounds").cast("long").alias("rounds"),
        F.sum("paused_partitions").cast("long").alias("paused_partitions"),
        F.max("paused_partitions").cast("int").alias("max_paused_partitions"),
        F.count_if(F.col("conforms")).cast("int").alias("conforming_events"),
        F.count_if(~F.col("conforms")).cast("int").alias("nonconforming_events"),
        F.sum("differing_partitions").cast("long").alias("differing_partitions"),
        seconds_sum(F.col("paused_partition_seconds")).alias("paused_partition_seconds"),
        F.count("paused_partition_seconds").cast("int").alias("timed_events"),
        F.sum("messages_delayed").cast("long").alias("messages_delayed"),
    )


def seconds_sum(seconds: F.Column) -> F.Column:
    """The sum of partition-seconds (partitions x milliseconds / 1000), added as whole
    milliseconds: a sum of doubles depends on the order Spark adds them in, and a
    cluster run must give the local run's value bit for bit (14.0, not
    13.999999999999998). Null when every value is null."""
    return (F.sum(F.round(seconds * 1000).cast("long")) / F.lit(1000.0)).cast("double")


def ordered_mean(values: F.Column) -> F.Column:
    """The mean of doubles added smallest first: F.avg adds them in the order Spark's
    partitions arrive, so a cluster run's mean stickiness could differ from the local
    run's in the last bit (0.8705882352941178 against ...176). Nulls are left out, as
    F.avg leaves them; null when there is none."""
    known = F.array_sort(F.collect_list(values))
    total = F.aggregate(known, F.lit(0.0).cast("double"), lambda acc, x: acc + x)
    return F.when(F.size(known) > 0, total / F.size(known))


def skew(replay_metrics: DataFrame) -> DataFrame:
    """Load balance per assignor over the day: partition-count spread and lag skew.

    `last_*` is the state the day ended in (the last event's assignment), which is what
    the group runs with until its next rebalance.
    """
    last = F.max_by
    ordered = F.struct("event_seq")
    return _by_assignor(replay_metrics).agg(
        F.count(F.lit(1)).cast("int").alias("events"),
        F.avg("count_spread").alias("mean_count_spread"),
        F.max("count_spread").cast("int").alias("max_count_spread"),
        F.count_if(F.col("count_spread") > 1).cast("int").alias("unbalanced_events"),
        F.max("count_max").cast("int").alias("max_partitions_per_member"),
        ordered_mean(F.col("lag_skew")).alias("mean_lag_skew"),
        F.max("lag_skew").alias("max_lag_skew"),
        F.max("lag_max_member").cast("long").alias("max_member_lag"),
        last("count_spread", ordered).cast("int").alias("last_count_spread"),
        last("lag_skew", ordered).alias("last_lag_skew"),
    )
