"""Issue 36 item 6: a log-end reading that contradicts its partition's neighbours is
refused with a reason and moves no other group's time lag."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from chispa import assert_df_equality
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_tables import sample_table

from fleet_rebalance.metrics.lag_distribution import (
    INPUT_COLUMNS,
    topic_lag_distribution,
    topic_refused_log_ends,
)
from fleet_rebalance.metrics.log_end_checks import (
    ABOVE_LATER,
    BELOW_EARLIER,
    BEYOND_CAPTURE,
    refused_log_ends,
)
from fleet_rebalance.metrics.offset_samples import offset_samples
from fleet_rebalance.pipeline import bronze
from fleet_rebalance.pipeline.metrics import lag_distribution

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC)
ABSURD = 2**63 - 1


def sample(group: str, minute: int, committed: int, log_end: int, lag: int | None = None):
    when = T0 + dt.timedelta(minutes=minute)
    return {
        "cluster": "c",
        "group_id": group,
        "topic": "t",
        "partition": 0,
        "captured_at": when,
        "capture_date": when.date(),
        "current_offset": committed,
        "log_end_offset": log_end,
        "lag": log_end - committed if lag is None else lag,
    }


def two_groups(bad_minute: int | None, bad_group: str = "b") -> list[dict]:
    """Groups a (behind, 10 messages/min produced) and b (caught up) read one partition
    every minute; at bad_minute bad_group's row reads LOG-END-OFFSET = LAG = 2^63-1."""
    rows = []
    for m in range(6):
        end = 1000 + 10 * m
        for group, committed in (("a", end - 25), ("b", end)):
            if m == bad_minute and group == bad_group:
                rows.append(sample(group, m, committed, ABSURD, lag=ABSURD))
            else:
                rows.append(sample(group, m, committed, end))
    return rows


def refusals(readings: list[tuple[int, int]]) -> list[str | None]:
    times, ends = (np.array(v, np.int64) for v in zip(*readings, strict=True))
    refused = refused_log_ends(times, ends)
    return [refused.get(i) for i in range(len(readings))]


def test_one_absurd_reading_is_the_one_refused():
    """Given: captures 1..3, two groups each, one reading 2^63-1 in capture 2
    Then: that reading alone is refused, as above a later capture's log end."""
    got = refusals([(1, 10), (1, 11), (2, 20), (2, ABSURD), (3, 30), (3, 30)])
    assert got == [None, None, None, ABOVE_LATER, None, None]


def test_a_low_reading_is_refused_as_below_an_earlier_one():
    got = refusals([(1, 10), (1, 10), (2, 20), (2, 0), (3, 30)])
    assert got == [None, None, None, BELOW_EARLIER, None]


def test_a_high_reading_in_the_newest_capture_is_beyond_its_capture():
    """Given: the newest capture has no later neighbour; its groups read 30 and 2^63-1
    Then: 2^63-1 is above 30 by more than the partition ever grew between captures (10)."""
    got = refusals([(1, 10), (2, 20), (3, 30), (3, ABSURD)])
    assert got == [None, None, None, BEYOND_CAPTURE]


def test_spread_within_a_capture_up_to_the_growth_between_captures_is_kept():
    """A capture's groups are described one after the other: the later ones may read a
    higher log end, up to what the partition produces between two captures."""
    assert refusals([(1, 10), (2, 20), (2, 29), (3, 30), (3, 40)]) == [None] * 5


def test_a_single_capture_allows_no_spread_its_lowest_reading_is_the_point():
    assert refusals([(1, 10), (1, 12), (1, ABSURD)]) == [None, BEYOND_CAPTURE, BEYOND_CAPTURE]


def test_a_recreated_topic_s_shorter_side_is_refused():
    """Given: log ends 500, 600 then (topic recreated, no topic id in offsets) 5, 10, 20
    Then: the two readings before the drop are refused, the recreated topic is the table."""
    got = refusals([(1, 500), (2, 600), (3, 5), (4, 10), (5, 20)])
    assert got == [ABOVE_LATER, ABOVE_LATER, None, None, None]


def test_between_two_equally_long_runs_the_later_readings_win():
    assert refusals([(1, 10), (2, 1000), (3, 20)]) == [None, ABOVE_LATER, None]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=30), st.data())
def test_clean_history_is_untouched_and_one_spike_is_all_that_is_refused(steps, data):
    """Given: a non-decreasing log end over captures, read by two groups per capture
    Then: nothing is refused; with one reading replaced by 2^63-1, only that one."""
    ends = np.cumsum(steps)
    readings = [(t, int(e)) for t, e in enumerate(ends) for _ in range(2)]
    assert refusals(readings) == [None] * len(readings)
    spike = data.draw(st.integers(0, len(readings) - 1))
    readings[spike] = (readings[spike][0], ABSURD)
    got = refusals(readings)
    assert [i for i, r in enumerate(got) if r is not None] == [spike]


@pytest.mark.parametrize("bad_minute", [0, 3, 5])
def test_the_other_group_s_numbers_equal_the_clean_run_s(bad_minute):
    clean = {r["group_id"]: r for r in topic_lag_distribution(table(two_groups(None)), DAY)}
    dirty = {r["group_id"]: r for r in topic_lag_distribution(table(two_groups(bad_minute)), DAY)}
    assert dirty["a"] == clean["a"]
    assert clean["a"]["time_lag_max_seconds"] == 150.0  # 25 behind at 10/min
    # b's own offset lag is its own: the absurd row stays in it.
    assert dirty["b"]["lag_max"] == ABSURD
    assert dirty["b"]["time_lag_max_seconds"] == 0.0


def test_a_caught_up_group_stays_at_zero_when_the_other_reads_absurd_last():
    """Given: a's reading in the newest capture is 2^63-1 (no later capture to contradict)
    Then: b, caught up at every capture, still has time lag 0 (unrefused: 30 s at the end)."""
    clean = {r["group_id"]: r for r in topic_lag_distribution(table(two_groups(None)), DAY)}
    dirty = topic_lag_distribution(table(two_groups(5, bad_group="a")), DAY)
    assert {r["group_id"]: r for r in dirty}["b"] == clean["b"]
    assert clean["b"]["time_lag_max_seconds"] == 0.0


def test_the_refused_row_is_recorded_with_its_reason():
    got = topic_refused_log_ends(table(two_groups(3)), DAY)
    assert got == [
        {
            "cluster": "c",
            "group_id": "b",
            "topic": "t",
            "partition": 0,
            "captured_at": T0 + dt.timedelta(minutes=3),
            "log_end_offset": ABSURD,
            "reason": ABOVE_LATER,
            "date": DAY,
        }
    ]
    assert topic_refused_log_ends(table(two_groups(None)), DAY) == []


def table(rows):
    return sample_table(rows, INPUT_COLUMNS)


def offsets_frame(spark, rows):
    filled = [{**r, "source_file": "f", "line_number": i} for i, r in enumerate(rows)]
    schema = bronze.TABLES["offsets"]
    return spark.createDataFrame(
        [tuple(r.get(f.name) for f in schema.fields) for r in filled], schema
    )


def test_spark_lag_distribution_of_the_other_group_equals_the_clean_run_s(spark):
    clean = offset_samples(offsets_frame(spark, two_groups(None)))
    dirty = offset_samples(offsets_frame(spark, two_groups(3)))
    other = "group_id = 'a'"
    assert_df_equality(
        lag_distribution(dirty, DAY).where(other),
        lag_distribution(clean, DAY).where(other),
    )
    assert lag_distribution(clean, DAY).where(other).first()["time_lag_max_seconds"] == 150.0
