"""log_end_quarantine (issue 36 item 6): the offsets rows whose log end is kept out of the
shared time-lag points are a gold table, with their reason, from lag_distribution's pass."""

from __future__ import annotations

import datetime as dt

import pytest
from test_log_end_points import ABSURD, DAY, T0, offsets_frame, table, two_groups

from fleet_rebalance.metrics.lag_distribution import (
    topic_lag_distribution,
    topic_refused_log_ends,
    topic_tables,
)
from fleet_rebalance.metrics.log_end_checks import ABOVE_LATER, BELOW_EARLIER


def test_one_pass_gives_both_tables_as_the_separate_functions_do():
    """Given: group b reads LOG-END-OFFSET 2^63-1 at minute 3. Then: topic_tables' two
    lists are topic_lag_distribution's and topic_refused_log_ends'; the clean day's
    quarantine is empty."""
    dirty = table(two_groups(3))
    got = topic_tables(dirty, DAY)
    assert got["lag_distribution"] == topic_lag_distribution(dirty, DAY)
    assert got["log_end_quarantine"] == topic_refused_log_ends(dirty, DAY)
    assert [(r["group_id"], r["reason"]) for r in got["log_end_quarantine"]] == [("b", ABOVE_LATER)]
    clean = topic_tables(table(two_groups(None)), DAY)
    assert clean["log_end_quarantine"] == []
    assert len(clean["lag_distribution"]) == 2


def test_only_the_run_dates_refusals_are_its_rows():
    """Given: a low reading the day before and one on the run date. Then: only the run
    date's is a row of the run date (yesterday's was that day's)."""
    rows = two_groups(None)
    before = T0 - dt.timedelta(days=1)
    rows.append(rows[0] | {"captured_at": before, "capture_date": before.date()})
    rows.append(rows[0] | {"captured_at": before, "capture_date": before.date(), "group_id": "z"})
    rows[-1]["log_end_offset"] = 5000  # above every later reading: refused, but yesterday
    low = rows[4] | {"group_id": "c", "log_end_offset": 3}
    rows.append(low)
    got = topic_tables(table(rows), DAY)["log_end_quarantine"]
    assert [(r["group_id"], r["captured_at"], r["reason"]) for r in got] == [
        ("c", low["captured_at"], BELOW_EARLIER)
    ]


@pytest.mark.spark
def test_the_gold_table_shows_the_absurd_row_with_its_reason(spark):
    from fleet_rebalance.metrics.offset_samples import offset_samples
    from fleet_rebalance.pipeline import gold
    from fleet_rebalance.pipeline.metrics import (
        lag_distribution,
        log_end_quarantine,
        per_topic_frame,
    )

    dirty = offset_samples(offsets_frame(spark, two_groups(3)))
    got = log_end_quarantine(dirty, DAY)
    assert got.schema == gold.TABLES["log_end_quarantine"]
    assert [r.asDict() for r in got.collect()] == [
        {
            "cluster": "c",
            "group_id": "b",
            "date": DAY,
            "topic": "t",
            "partition": 0,
            # Spark hands timestamps back naive, in the session's zone (UTC).
            "captured_at": (T0 + dt.timedelta(minutes=3)).replace(tzinfo=None),
            "log_end_offset": ABSURD,
            "reason": ABOVE_LATER,
        }
    ]
    clean = offset_samples(offsets_frame(spark, two_groups(None)))
    assert log_end_quarantine(clean, DAY).collect() == []
    # The tagged pass holds both tables' rows, nothing else.
    tags = sorted(r["_table"] for r in per_topic_frame(dirty, DAY).collect())
    assert tags == ["lag_distribution"] * 2 + ["log_end_quarantine"]
    assert lag_distribution(dirty, DAY).schema == gold.TABLES["lag_distribution"]
