"""Share groups in the lag metrics (issue 33 item 2, metrics/share_groups.py): their lag
distribution is the tool's LAG, they get no time lag, and consumer_status rates none of
them, saying so in one log line."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import pyarrow as pa
import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.schemas import TABLES
from fleet_rebalance.metrics import consumer_status, lag_distribution, share_groups

DATA = Path(__file__).resolve().parent / "data" / "share_streams"
DAY = dt.date(2026, 11, 20)
COLUMNS = [*lag_distribution.INPUT_COLUMNS, "consumer_id"]


def samples(name: str, times: list[str]) -> pa.Table:
    """The offsets rows of capture `name` taken at each of `times` (HHMM of DAY), in the
    columns the lag metrics read."""
    rows = []
    for at in times:
        result = parse_capture(f"lab/2026-11-20T{at}Z/{name}", (DATA / name).read_bytes())
        assert result.quarantined_lines == 0, result.quarantine
        rows += [{c: r.get(c) for c in COLUMNS} for r in result.records("offsets")]
    schema = pa.schema([TABLES["offsets"].field(c) for c in COLUMNS])
    return pa.Table.from_pylist(rows, schema)


def group(table: pa.Table, group_id: str) -> pa.Table:
    return table.filter(pa.compute.equal(table["group_id"], group_id))


def test_share_lag_distribution_is_the_tools_lag_without_time_lag():
    """Given inventory-share's 4.2 offsets (lags 4, -, 0) captured twice, Then its
    distribution counts the known lags, the unknown ones apart, and no time lag."""
    table = group(samples("share_offsets_4.2.txt", ["0900", "0920"]), "inventory-share")
    (row,) = lag_distribution.topic_lag_distribution(table, DAY)
    assert (row["group_id"], row["topic"], row["partitions"]) == ("inventory-share", "inventory", 3)
    assert (row["samples"], row["unknown_lag_samples"]) == (4, 2)
    assert (row["lag_p50"], row["lag_max"]) == (2.0, 4)
    assert row["histogram"] == [2, 0, 0, 2]  # 0, 0, then 4 twice in bucket 3 (4 <= lag < 8)
    assert row["time_lag_samples"] == 0 and row["time_lag_p50_seconds"] is None


def test_a_41_share_capture_has_only_unknown_lags():
    """Given the 4.1 layout (START-OFFSET, no LAG), Then every sample is unknown."""
    table = group(samples("share_offsets_4.1.txt", ["0900"]), "payments-workers")
    (row,) = lag_distribution.topic_lag_distribution(table, DAY)
    assert (row["samples"], row["unknown_lag_samples"], row["lag_max"]) == (0, 2, None)


def test_consumer_status_rates_no_share_group():
    """Given payments-workers' lag growing over three captures (STALL or WARN for a
    consumer group), Then consumer_status has no row for it: no committed offset."""
    table = group(samples("share_offsets_4.2.txt", ["0900", "0920", "0940"]), "payments-workers")
    assert table.num_rows == 6 and table["lag"].null_count == 0
    assert consumer_status.group_consumer_status(table, DAY, intervals=3) == {}


@pytest.mark.spark
def test_the_unrated_share_groups_are_reported_in_one_line(spark, caplog):
    """Given group_states rows of two share groups (one twice), a consumer group and a
    list row of unknown type, Then two share groups are reported, in one line."""
    rows = [
        ("lab", "inventory-share", "share"),
        ("lab", "inventory-share", "share"),
        ("east", "inventory-share", "share"),
        ("lab", "orders-app", "consumer"),
        ("lab", "old-group", None),
    ]
    states = spark.createDataFrame(rows, "cluster string, group_id string, group_type string")
    with caplog.at_level(logging.INFO, logger="fleet_rebalance.metrics"):
        assert share_groups.report_unrated(states, DAY) == 2
    lines = [r.getMessage() for r in caplog.records if "share group" in r.getMessage()]
    assert lines == [
        "consumer_status: 2 share group(s) of 2026-11-20 not rated (Burrow's rules need one "
        "consumer's committed offsets; metrics/share_groups.py); their lag is in "
        "lag_distribution"
    ]
    older = states.drop("group_type")  # a table written before group_type existed
    assert share_groups.report_unrated(older, DAY) == 0
