"""The report of a day on which no group moved a partition: every assignor's stickiness
is kept / (kept + reassigned) = 0 / 0, which is unknown (null), not a failed run."""

from __future__ import annotations

import datetime as dt

import pytest

from fleet_rebalance.pipeline import metrics, replay
from fleet_rebalance.pipeline.nightly import report
from fleet_rebalance.report.facts import gather
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
DAY = dt.date(2026, 11, 20)


def test_a_day_without_moves_reports_unknown_stickiness(spark, small_fleet):
    config, _ = small_fleet
    replay.run(spark, config, DAY)
    metrics.run(spark, config, DAY)
    sticky = read_table(spark, config.table_path("stickiness")).groupBy("assignor").sum()
    unmoved = {
        r["assignor"] for r in sticky.collect() if r["sum(kept)"] + r["sum(reassigned)"] == 0
    }
    assert unmoved, "the fleet moved partitions: it does not test 0 / 0"
    per_assignor = gather(spark, config, DAY).per_assignor.set_index("assignor")
    assert per_assignor.loc[sorted(unmoved), "stickiness"].isna().all()
    lines = report(spark, config, DAY)
    assert lines[-1] == f"report: {config.warehouse}/reports/{DAY}.html"
