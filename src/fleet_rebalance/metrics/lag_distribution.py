"""`lag_distribution`: per cluster, group, topic and date, the day's partition lag.

Offset lag: exact percentiles with linear interpolation between closest ranks (Spark's
`percentile`, numpy's default), max, and a log2 histogram where bucket 0 counts lag 0
and bucket k counts 2^(k-1) <= lag < 2^k; `histogram[k]` is bucket k's count. A
negative lag (a committed offset past the log end, seen after unclean truncation) is
counted in bucket 0. Samples whose lag is unknown (`-` in the capture) are counted in
`unknown_lag_samples`, not dropped. Time lag: see time_lag.py.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

PERCENTILES = (0.5, 0.9, 0.99)


def log2_bucket(lag: F.Column) -> F.Column:
    """0 for lag <= 0, else the bit length of lag (exact, no float rounding)."""
    guess = F.floor(F.log2(lag)).cast("int") + 1
    one = F.lit(1).cast("long")
    return (
        F.when(lag <= 0, 0)
        .when(F.call_function("shiftleft", one, guess - 1) > lag, guess - 1)
        .when((guess < 63) & (F.call_function("shiftleft", one, guess) <= lag), guess + 1)
        .otherwise(guess)
    )


def _histogram(buckets: F.Column) -> F.Column:
    counts = F.transform(
        F.sequence(F.lit(0), F.array_max(buckets)),
        lambda k: F.size(F.filter(buckets, lambda b: b == k)).cast("long"),
    )
    return F.when(F.size(buckets) > 0, counts).otherwise(F.array().cast("array<long>"))


def lag_distribution(samples_with_time_lag: DataFrame) -> DataFrame:
    s = samples_with_time_lag.withColumn("date", F.col("capture_date"))
    lag, time_lag = F.col("lag"), F.col("time_lag_seconds")
    pct = [F.lit(p) for p in PERCENTILES]
    grouped = s.groupBy("cluster", "group_id", "topic", "date").agg(
        F.count_distinct("partition").cast("int").alias("partitions"),
        F.count(lag).cast("long").alias("samples"),
        F.count_if(lag.isNull()).cast("long").alias("unknown_lag_samples"),
        F.percentile(lag, F.array(*pct)).alias("_p"),
        F.max(lag).alias("lag_max"),
        F.collect_list(F.when(lag.isNotNull(), log2_bucket(lag))).alias("_b"),
        F.count(time_lag).cast("long").alias("time_lag_samples"),
        F.count_if(F.col("time_lag_extrapolated")).cast("long").alias("time_lag_extrapolated"),
        F.percentile(time_lag, F.array(*pct)).alias("_t"),
        F.max(time_lag).alias("time_lag_max_seconds"),
    )
    return grouped.select(
        "cluster",
        "group_id",
        "topic",
        "date",
        "partitions",
        "samples",
        "unknown_lag_samples",
        F.col("_p")[0].alias("lag_p50"),
        F.col("_p")[1].alias("lag_p90"),
        F.col("_p")[2].alias("lag_p99"),
        "lag_max",
        _histogram(F.col("_b")).alias("histogram"),
        "time_lag_samples",
        "time_lag_extrapolated",
        F.col("_t")[0].alias("time_lag_p50_seconds"),
        F.col("_t")[1].alias("time_lag_p90_seconds"),
        F.col("_t")[2].alias("time_lag_p99_seconds"),
        "time_lag_max_seconds",
    )
