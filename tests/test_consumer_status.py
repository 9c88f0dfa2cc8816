"""consumer_status's numpy core on Arrow tables: what the Spark gold tests can't reach
cheaply (row order, the day boundary, skipped entries)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from sample_tables import sample_table

from fleet_rebalance.metrics.consumer_status import INPUT_COLUMNS, group_consumer_status

DAY = dt.date(2026, 11, 20)
MIDNIGHT = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)


def entries(topic: str, partition: int, minutes_and_values, owner: str | None = "m1"):
    rows = []
    for minute, offset, lag in minutes_and_values:
        when = MIDNIGHT + dt.timedelta(minutes=minute)
        rows.append(
            {
                "cluster": "c",
                "group_id": "g",
                "topic": topic,
                "partition": partition,
                "captured_at": when,
                "capture_date": when.date(),
                "current_offset": offset,
                "lag": lag,
                "consumer_id": owner,
            }
        )
    return rows


def status(rows: list[dict], intervals: int = 3) -> dict[tuple, dict]:
    columns = group_consumer_status(sample_table(rows, INPUT_COLUMNS), DAY, intervals)
    instant = pa.timestamp("us", tz="UTC")
    table = pa.table(
        {
            k: pa.array(v, instant if k in ("evaluated_at", "worst_status_at") else None)
            for k, v in columns.items()
        }
    )
    return {(r["topic"], r["partition"]): r for r in table.to_pylist()}


def test_yesterdays_entries_fill_the_first_windows_but_are_not_rated():
    rows = entries("t", 0, [(-20, 30, 5), (-10, 20, 6), (10, 25, 4), (20, 30, 3)])
    got = status(rows)[("t", 0)]
    # 00:10 sees 30 -> 20 (yesterday) in its window: REWIND; by 00:20 it has slid out.
    assert (got["windows"], got["status"], got["worst_status"]) == (2, "OK", "REWIND")
    assert got["worst_status_at"] == MIDNIGHT + dt.timedelta(minutes=10)
    assert got["non_ok_windows"] == 1 and got["group_worst_status"] == "REWIND"


def test_partitions_are_rated_apart_whatever_the_row_order():
    a = entries("a", 0, [(0, 10, 5), (10, 10, 6), (20, 10, 7)])  # STALL
    b = entries("b", 0, [(0, 10, 7), (10, 20, 6), (20, 30, 5)])  # catching up: OK
    rows = [a[2], b[1], a[0], b[2], b[0], a[1]]
    got = status(rows)
    assert {k: r["status"] for k, r in got.items()} == {("a", 0): "STALL", ("b", 0): "OK"}
    assert {r["group_status"] for r in got.values()} == {"ERR"}  # STALL, capped at ERR
    assert got[("b", 0)]["current_lag"] == 5


def test_entries_without_an_offset_or_lag_are_skipped():
    rows = entries("t", 0, [(0, 10, 5), (10, None, None), (20, 20, None), (30, 30, 4)])
    got = status(rows)[("t", 0)]
    assert (got["windows"], got["status"], got["current_lag"]) == (2, "OK", 4)
    assert status(entries("t", 1, [(0, None, 5)])) == {}
    assert status(entries("t", 1, [(-10, 10, 5)])) == {}  # nothing of the date to rate
