"""lag_distribution and time lags: numpy per topic, checked by hand and against Spark."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyspark.sql.functions as F
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_tables import sample_table

from fleet_rebalance.metrics.lag_distribution import (
    INPUT_COLUMNS,
    PERCENTILES,
    lag_percentiles,
    log2_buckets,
    percentiles,
    topic_lag_distribution,
    topic_time_lags,
)
from fleet_rebalance.metrics.offset_samples import offset_samples
from fleet_rebalance.pipeline import bronze
from fleet_rebalance.pipeline.metrics import lag_distribution

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def sample(seconds: float, committed: int | None, log_end: int | None, **more) -> dict:
    when = at(seconds)
    return {
        "cluster": "c",
        "group_id": "g",
        "topic": "t",
        "partition": 0,
        "captured_at": when,
        "capture_date": when.date(),
        "current_offset": committed,
        "log_end_offset": log_end,
        "lag": None if committed is None or log_end is None else log_end - committed,
        **more,
    }


def table(rows: list[dict]) -> pa.Table:
    return sample_table(rows, INPUT_COLUMNS)


def time_lags_of(rows: list[dict], mine) -> list[tuple[float | None, bool]]:
    t = table(rows)
    seconds, extrapolated = topic_time_lags(t, np.array([mine(r) for r in rows]))
    return [
        (None if np.isnan(s) else float(s), bool(e))
        for r, s, e in zip(rows, seconds, extrapolated, strict=True)
        if mine(r)
    ]


def test_log2_buckets_are_exact_at_powers_of_two():
    values = [0, -3, 1, 2, 3, 4, 7, 8, 2**40 - 1, 2**40, 2**53 + 1, 2**62, 2**63 - 1]
    got = log2_buckets(np.array(values, np.int64)).tolist()
    assert got == [0, 0, 1, 2, 2, 3, 3, 4, 40, 41, 54, 63, 63]


@settings(max_examples=100, derandomize=True)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=50))
def test_log2_bucket_is_the_bit_length(values):
    want = [v.bit_length() if v > 0 else 0 for v in values]
    assert log2_buckets(np.array(values, np.int64)).tolist() == want


def test_percentiles_equal_sparks_to_the_last_bit(spark):
    rng = np.random.default_rng(7)
    groups = [rng.integers(0, 10**6, size) for size in (1, 2, 3, 7, 100, 1001)]
    groups += [rng.exponential(100.0, 57), np.array([5.0] * 4 + [6.0])]
    rows = [(i, float(v)) for i, values in enumerate(groups) for v in values]
    df = spark.createDataFrame(rows, "g int, v double")
    pct = F.array(*[F.lit(p) for p in PERCENTILES])
    spark_values = {
        r["g"]: r["p"] for r in df.groupBy("g").agg(F.percentile("v", pct).alias("p")).collect()
    }
    for i, values in enumerate(groups):
        assert percentiles(values) == spark_values[i]
    assert percentiles(np.array([])) == [None, None, None]


def test_lag_percentiles_drop_the_interpolations_float_noise():
    """Given: two whole-number lags; Spark's formula gives p99 = 2232390.9899999998.
    Then: the stored percentile is the exact value, 2232390.99 (two decimals at most)."""
    lags = np.array([2232390, 2232391], np.int64)
    assert percentiles(lags)[2] != 2232390.99
    assert lag_percentiles(lags) == [2232390.5, 2232390.9, 2232390.99]
    assert lag_percentiles(np.array([], np.int64)) == [None, None, None]


def test_time_lag_interpolates_extrapolates_and_ignores_the_future():
    leo = {0: 100, 60: 200, 120: 300, 180: 250}  # 250 goes backwards: not a point
    history = [sample(t, o, o, group_id="other") for t, o in leo.items()]
    mine = [
        (0, 50, None),  # one point only: unknown
        (60, 150, 30.0),  # between 100@0 and 200@60 -> 30 s; 300@120 is not known yet
        (120, 300, 0.0),  # at the log end
        (120, 250, 30.0),  # 200@60 .. 300@120 -> 90 s
        (120, 200, 60.0),  # exactly an old log end: when it was last that
        (120, 50, 150.0),  # before the oldest point: extrapolated along 100@0 .. 300@120
        (180, 250, 90.0),  # 250@180 was refused, so the newest point is 300@120
    ]
    # One group per sample: a group has one row per partition and capture.
    rows = history + [sample(t, c, leo[t], group_id=f"g{i}") for i, (t, c, _) in enumerate(mine)]
    got = time_lags_of(rows, lambda r: r["group_id"] != "other")
    for (t, c, want), (lag, extrapolated) in zip(mine, got, strict=True):
        assert lag == (pytest.approx(want) if want is not None else None), (t, c)
        assert extrapolated == (c == 50 and t == 120)


def test_time_lag_uses_yesterdays_log_ends_and_partitions_apart():
    night = -11 * 3600  # 23:00 the day before
    yesterday = [sample(night, 0, 1000), sample(night, 0, 5, partition=1)]
    today = [
        sample(0, 1500, 2000),  # 1000 @ 23:00 .. 2000 @ 10:00: 1500 was the end at 04:30
        sample(0, 5, 5, partition=1),  # caught up on its own partition
        sample(60, 10, None, partition=1),  # no log end in its own capture: unknown
        sample(60, None, 2100),  # committed offset unknown
    ]
    got = time_lags_of(yesterday + today, lambda r: r["capture_date"] == DAY)
    assert got == [(19800.0, False), (0.0, False), (None, False), (None, False)]


def test_time_lag_of_a_flat_log_is_unknown():
    rows = [sample(t, 50, 100) for t in (0, 60)]
    assert time_lags_of(rows, lambda r: True) == [(None, False), (None, False)]


def test_topic_rows_are_per_group_and_only_of_the_run_date():
    rows = [
        sample(-11 * 3600, 0, 10),  # yesterday: a point, not a row
        sample(0, 90, 100),
        sample(0, 100, 100, group_id="h"),
        sample(0, 5, 100, group_id=None),  # kept, as a group of its own
    ]
    got = {r["group_id"]: r for r in topic_lag_distribution(table(rows), DAY)}
    assert set(got) == {"g", "h", None}
    assert got["g"]["lag_max"] == 10 and got["g"]["histogram"] == [0, 0, 0, 0, 1]
    assert got["h"]["time_lag_max_seconds"] == 0.0 and got[None]["lag_max"] == 95
    assert topic_lag_distribution(table(rows[:1]), DAY) == []


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 500), st.integers(0, 50)),
        min_size=1,
        max_size=40,
    )
)
def test_time_lag_is_never_negative_and_zero_at_the_log_end(captures):
    rows = [sample(60 * t, end - behind, end, partition=p) for t, p, end, behind in captures]
    for (lag, _), r in zip(time_lags_of(rows, lambda r: True), rows, strict=True):
        assert lag is None or lag >= 0
        if r["lag"] == 0 and lag is not None:
            assert lag == 0.0


def test_lag_distribution_percentiles_histogram_and_unknown_lag(spark):
    rows = [sample(0, 100, 100 + lag, partition=p) for p, lag in enumerate([0, 10, 20, 30])]
    rows.append(sample(0, None, 5, partition=9))
    filled = [{**r, "source_file": "f", "line_number": i} for i, r in enumerate(rows)]
    offsets = spark.createDataFrame(
        [tuple(r.get(f.name) for f in bronze.TABLES["offsets"].fields) for r in filled],
        bronze.TABLES["offsets"],
    )
    got = lag_distribution(offset_samples(offsets), DAY).collect()
    assert len(got) == 1
    r = got[0].asDict()
    assert (r["samples"], r["unknown_lag_samples"], r["partitions"]) == (4, 1, 5)
    # numpy.percentile([0, 10, 20, 30], [50, 90, 99]) with linear interpolation.
    assert (r["lag_p50"], r["lag_p90"], r["lag_p99"]) == pytest.approx((15.0, 27.0, 29.7))
    assert r["lag_max"] == 30
    assert r["histogram"] == [1, 0, 0, 0, 1, 2]  # 0 | 8 <= 10 < 16 | 16 <= 20, 30 < 32
    assert (r["time_lag_samples"], r["time_lag_max_seconds"]) == (1, 0.0)
    assert lag_distribution(offset_samples(offsets.limit(0)), DAY).count() == 0
