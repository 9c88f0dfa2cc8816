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

Because accepted points rise in both time and offset, "the newest bracketing pair" is
left = the last point with offset <= c among points at or before now, right = the
point after it; both are found with running counts, so no sample is compared with
every point, and the table (a row per partition and capture) is broadcast. The table
is the run date's captures plus the previous date's (Lag Exporter runs continuously,
so it would have them); Lag Exporter's 60-point sliding window only bounds its memory
and is not applied. A flat table (every point at the same offset) gives no slope to
extrapolate along: null, where Lag Exporter reports infinity.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window

TP = ["cluster", "topic", "partition"]


def log_end_points(samples: DataFrame) -> DataFrame:
    """Every capture of every partition with `n_at`: accepted points at or before it;
    rows where `accepted` are the lookup table, `seq` numbering them from 1."""
    by_time = Window.partitionBy(*TP).orderBy("captured_at")
    earlier = by_time.rowsBetween(Window.unboundedPreceding, -1)
    points = (
        samples.where(F.col("log_end_offset").isNotNull())
        .groupBy(*TP, "captured_at")
        .agg(F.max("log_end_offset").alias("offset"))
    )
    high = F.max("offset").over(earlier)
    accepted = high.isNull() | (F.col("offset") >= high)
    return points.withColumn("accepted", accepted).withColumn(
        "n_at", F.sum(F.col("accepted").cast("int")).over(by_time)
    )


def _seconds(ts: F.Column) -> F.Column:
    return F.unix_micros(ts) / 1_000_000


def time_lags(samples: DataFrame, history: DataFrame) -> DataFrame:
    """`samples` plus `time_lag_seconds` (double, null when unknown) and
    `time_lag_extrapolated`; `history` holds the offsets samples the table is built from
    (a superset of `samples`' captures)."""
    points = log_end_points(history)
    table = points.where("accepted").select(
        *TP, F.col("n_at").alias("seq"), _seconds(F.col("captured_at")).alias("t"), "offset"
    )
    at = points.select(*TP, "captured_at", F.col("n_at").alias("n_now"))
    # Accepted points with offset <= c, counted by sorting points before samples in one
    # pass that carries the samples' own columns (no join back to 'samples').
    by_offset = (
        Window.partitionBy(*TP)
        .orderBy("_v", "_is_sample")
        .rowsBetween(Window.unboundedPreceding, 0)
    )
    ranked = (
        table.select(*TP, F.col("offset").alias("_v"), F.lit(0).alias("_is_sample"))
        .unionByName(
            samples.withColumn("_v", F.col("current_offset")).withColumn("_is_sample", F.lit(1)),
            allowMissingColumns=True,
        )
        .withColumn("n_le", F.sum(1 - F.col("_is_sample")).over(by_offset))
        .where("_is_sample = 1")
        .drop("_v", "_is_sample")
    )
    c = F.col("current_offset")
    left_seq = F.least("n_now", "n_le")
    extrapolated = left_seq == 0
    # The lookup table has a row per partition and capture: small enough to broadcast.
    located = (
        ranked.join(F.broadcast(at), [*TP, "captured_at"], "left")
        .withColumn("time_lag_extrapolated", extrapolated & (F.col("n_now") >= 2))
        .withColumn("l_want", F.when(extrapolated, 1).otherwise(left_seq))
        .withColumn("r_want", F.when(extrapolated, F.col("n_now")).otherwise(left_seq + 1))
    )
    for alias, want in (("last", "n_now"), ("l", "l_want"), ("r", "r_want")):
        located = _attach(located, table, alias, want)
    dy = F.col("r_o") - F.col("l_o")
    moment = F.col("r_t") - (F.col("r_o") - c) * (F.col("r_t") - F.col("l_t")) / dy
    lag = (
        F.when(c.isNull() | F.col("last_o").isNull(), None)
        .when(c >= F.col("last_o"), F.lit(0.0))
        .when((F.col("n_now") < 2) | dy.isNull() | (dy <= 0), None)
        .otherwise(F.greatest(F.lit(0.0), _seconds(F.col("captured_at")) - moment))
    )
    return located.select(
        *samples.columns,
        lag.cast("double").alias("time_lag_seconds"),
        F.when(lag.isNotNull() & (c < F.col("last_o")), F.col("time_lag_extrapolated"))
        .otherwise(F.lit(False))
        .alias("time_lag_extrapolated"),
    )


def _attach(frame: DataFrame, table: DataFrame, alias: str, want: str) -> DataFrame:
    """`frame` with the table point numbered `want` as {alias}_t and {alias}_o."""
    point = table.select(
        *[F.col(k).alias(f"{alias}_{k}") for k in TP],
        F.col("seq").alias(f"{alias}_seq"),
        F.col("t").alias(f"{alias}_t"),
        F.col("offset").alias(f"{alias}_o"),
    )
    on = F.col(f"{alias}_seq") == F.col(want)
    for k in TP:
        on = on & (F.col(k) == F.col(f"{alias}_{k}"))
    return frame.join(F.broadcast(point), on, "left").drop(
        *[f"{alias}_{k}" for k in TP], f"{alias}_seq"
    )
