"""Time lag per offsets sample, estimated as Kafka Lag Exporter does.

Each topic partition's log-end offsets across captures form a lookup table of
(offset, time) points. Lag Exporter keeps only points that move forward in time and do
not go backwards in offset; so does this. For a committed offset c captured at `now`:
- c at or past the table's newest log end (as of now): time lag 0;
- fewer than two points: unknown (null);
- otherwise find the newest pair of neighbouring points with left.offset <= c <=
  right.offset and interpolate the moment the log end was c; when c is older than the
  oldest point, extrapolate along the line from the oldest to the newest point;
- time lag = max(0, now - that moment), in seconds.

Because accepted points rise in both time and offset, the points with offset <= c are
a prefix of the table: "the newest bracketing pair" is the last point with offset <= c
(which carries the point after it), found by sorting the partition's points and
samples together by offset; the newest point as of `now` and the oldest point come
from a second sort by time. No sample is compared with every point, joined or
broadcast, so the cost grows with the rows. The table is the run date's captures plus
the previous date's (Lag Exporter runs continuously, so it would have them); Lag
Exporter's 60-point sliding window only bounds its memory and is not applied. A flat
table (every point at the same offset) gives no slope to extrapolate along: null,
where Lag Exporter reports infinity. A sample whose capture has no log-end offset for
its partition is null too.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window

TP = ["cluster", "topic", "partition"]


def log_end_points(samples: DataFrame) -> DataFrame:
    """Every capture of every partition with its log end as `offset`; rows where
    `accepted` (not below an earlier point) are the lookup table."""
    earlier = (
        Window.partitionBy(*TP).orderBy("captured_at").rowsBetween(Window.unboundedPreceding, -1)
    )
    points = (
        samples.where(F.col("log_end_offset").isNotNull())
        .groupBy(*TP, "captured_at")
        .agg(F.max("log_end_offset").alias("offset"))
    )
    high = F.max("offset").over(earlier)
    accepted = high.isNull() | (F.col("offset") >= high)
    return points.withColumn("accepted", accepted)


def _seconds(ts: F.Column) -> F.Column:
    return F.unix_micros(ts) / 1_000_000


def time_lags(samples: DataFrame, history: DataFrame) -> DataFrame:
    """`samples` plus `time_lag_seconds` (double, null when unknown) and
    `time_lag_extrapolated`; `history` holds the offsets samples the table is built from
    (a superset of `samples`' captures)."""
    points = log_end_points(history)
    # Each table point carries the next one (the nearest later accepted point, from a
    # growing frame: Spark re-scans look-ahead frames for every row).
    later = (
        Window.partitionBy(*TP)
        .orderBy(F.desc("captured_at"))
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    accepted = F.col("accepted")
    t = _seconds(F.col("captured_at"))
    point = F.struct(
        t.alias("t"),
        F.col("offset").alias("o"),
        F.last(F.when(accepted, t), True).over(later).alias("_nt"),
        F.last(F.when(accepted, F.col("offset")), True).over(later).alias("_no"),
    )
    table = points.select(
        *TP,
        "captured_at",
        F.col("offset").alias("_v"),
        F.when(accepted, point).alias("_p"),
        F.lit(0).alias("_kind"),
    )
    rows = table.unionByName(
        samples.withColumn("_v", F.col("current_offset")).withColumn("_kind", F.lit(1)),
        allowMissingColumns=True,
    )
    # Points sort before samples at the same offset (offset <= c) and at the same time
    # (at or before now); among equal offsets the older point first, as in the table.
    upto = (
        Window.partitionBy(*TP)
        .orderBy("_v", "_kind", "captured_at")
        .rowsBetween(Window.unboundedPreceding, 0)
    )
    until_now = (
        Window.partitionBy(*TP)
        .orderBy("captured_at", "_kind")
        .rowsBetween(Window.unboundedPreceding, 0)
    )
    point_at = F.when(F.col("_kind") == 0, F.col("captured_at"))
    located = rows.select(
        "*",
        F.last("_p", True).over(upto).alias("_left"),
        F.first("_p", True).over(until_now).alias("_first"),
        F.last("_p", True).over(until_now).alias("_last"),
        F.count("_p").over(until_now).alias("_n_now"),
        F.last(point_at, True).over(until_now).alias("_point_at"),
    ).where(F.col("_kind") == 1)
    c = F.col("current_offset")
    # No table point with offset <= c: extrapolate from the oldest to the newest.
    extrapolated = F.col("_left").isNull()
    l_t = F.when(extrapolated, F.col("_first.t")).otherwise(F.col("_left.t"))
    l_o = F.when(extrapolated, F.col("_first.o")).otherwise(F.col("_left.o"))
    r_t = F.when(extrapolated, F.col("_last.t")).otherwise(F.col("_left._nt"))
    r_o = F.when(extrapolated, F.col("_last.o")).otherwise(F.col("_left._no"))
    dy = r_o - l_o
    moment = r_t - (r_o - c) * (r_t - l_t) / dy
    last_o = F.col("_last.o")
    lag = (
        F.when(c.isNull() | last_o.isNull(), None)
        .when(F.col("_point_at") != F.col("captured_at"), None)
        .when(c >= last_o, F.lit(0.0))
        .when((F.col("_n_now") < 2) | dy.isNull() | (dy <= 0), None)
        .otherwise(F.greatest(F.lit(0.0), _seconds(F.col("captured_at")) - moment))
    )
    return located.select(
        *samples.columns,
        lag.cast("double").alias("time_lag_seconds"),
        (lag.isNotNull() & (c < last_o) & extrapolated & (F.col("_n_now") >= 2)).alias(
            "time_lag_extrapolated"
        ),
    )
