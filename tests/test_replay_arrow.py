"""The replay behind the cogrouped Arrow UDF: the same rows as replay_group, as Spark
would send them (instants as UTC timestamps, arrays as Arrow lists), each table's rows
in its schema."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import to_arrow_schema
from test_replay_group import COLUMNS, DAY, at, lag_rows, member_row

from fleet_rebalance.pipeline import silver
from fleet_rebalance.replay import arrow_io
from fleet_rebalance.replay.arrow_io import replay_group_arrow, tables_of
from fleet_rebalance.replay.group import instants, replay_group

TABLES = {name: to_arrow_schema(schema) for name, schema in silver.TABLES.items()}
CAPTURES = pa.schema(
    [
        ("captured_at", pa.timestamp("us", tz="UTC")),
        ("state", pa.string()),
        ("assignment_strategy", pa.string()),
        ("consumer_id", pa.string()),
        ("group_instance_id", pa.string()),
        ("host", pa.string()),
        ("client_id", pa.string()),
        ("subscription", pa.list_(pa.string())),
        ("assigned_topics", pa.list_(pa.string())),
        ("assigned_partitions", pa.list_(pa.int32())),
    ]
)
LAGS = pa.schema(
    [
        ("captured_at", pa.timestamp("us", tz="UTC")),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("lag", pa.int64()),
    ]
)
KEY = (pa.scalar("c"), pa.scalar("g"))
KWARGS = {"run_date": DAY, "assignors": ["range", "roundrobin", "observed"], "topic_history": {}}


def spark_side(rows: list[dict], schema: pa.Schema) -> pa.Table:
    utc = [{**r, "captured_at": r["captured_at"].tz_localize("UTC")} for r in rows]
    return pa.Table.from_pylist(utc, schema)


def test_rows_equal_replay_group_on_the_same_group():
    baseline, same, left = at(19, 23 * 60 + 50), at(20, 0), at(20, 10)
    captures = [
        member_row(baseline, "c1", [0, 1]),
        member_row(baseline, "c2", [2, 3]),
        member_row(same, "c2", [2, 3]),
        member_row(same, "c1", [0, 1]),
        member_row(left, "c2", [0, 1, 2, 3]),
        {**member_row(left, None, []), "state": "Empty", "assigned_topics": None},
    ]
    lags = lag_rows(left, [5, None, 7, 1]) + lag_rows(baseline, [1, 1, 1, 1])
    got = replay_group_arrow(
        KEY, spark_side(captures, CAPTURES), spark_side(lags, LAGS), tables=TABLES, **KWARGS
    )
    expected = replay_group(
        ("c", "g"),
        pd.DataFrame(captures),
        pd.DataFrame(lags, columns=["captured_at", "topic", "partition", "lag"]),
        columns=COLUMNS,
        **KWARGS,
    )
    assert set(got) == {"rebalance_events", "assignment_replay", "replay_metrics"}
    for name, schema in TABLES.items():
        rows = expected[expected["_table"] == name][schema.names]
        want = pa.Table.from_pandas(rows, schema=schema, preserve_index=False)
        assert got.get(name, schema.empty_table()).equals(want)


def test_a_group_without_captures_gives_an_empty_table_of_the_schema():
    got = replay_group_arrow(
        KEY,
        CAPTURES.empty_table(),
        spark_side(lag_rows(at(20, 0), [3]), LAGS),
        tables=TABLES,
        **KWARGS,
    )
    assert got == {}


def test_nan_in_a_float_column_is_null():
    rows = [
        {"_table": "replay_metrics", "lag_skew": float("nan"), "stickiness": 0.5},
        {"_table": "replay_metrics", "lag_skew": 2.0, "stickiness": None},
    ]
    table = tables_of(rows, TABLES)["replay_metrics"]
    assert table.column("lag_skew").to_pylist() == [None, 2.0]
    assert table.column("stickiness").to_pylist() == [0.5, None]


def test_a_row_arrow_cannot_hold_becomes_a_replay_error(monkeypatch):
    bad = [{"_table": "replay_metrics", "cluster": "c", "kept": "three"}]
    monkeypatch.setattr(arrow_io, "replay_rows", lambda *args, **kwargs: bad)
    got = replay_group_arrow(
        KEY, CAPTURES.empty_table(), LAGS.empty_table(), tables=TABLES, **KWARGS
    )
    assert list(got) == ["replay_errors"]
    rows = got["replay_errors"].to_pylist()
    assert [(r["cluster"], r["group_id"]) for r in rows] == [("c", "g")]
    assert "three" in rows[0]["reason"]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata"])
def test_instants_reach_the_replay_as_naive_utc(zone):
    table = pa.table({"captured_at": pa.array([0], pa.timestamp("us", tz=zone))})
    times = instants(table.column("captured_at"))
    assert times.tolist() == [0] and times.dtype == np.dtype("datetime64[ns]")
