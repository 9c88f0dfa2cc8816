import datetime as dt
import json

import pyarrow as pa

from fleet_rebalance.storage.partitions import (
    escape_path_name,
    partition_dir,
    partition_value,
)
from fleet_rebalance.storage.stats import FileStats

UTC = dt.UTC


def stats_of(*batches: pa.RecordBatch) -> dict:
    stats = FileStats()
    for batch in batches:
        stats.update(batch)
    return json.loads(stats.to_json())


def test_bounds_and_null_counts_merge_across_batches():
    first = pa.record_batch({"lag": pa.array([5, None], pa.int64()), "t": ["b", "c"]})
    second = pa.record_batch({"lag": pa.array([-3, 9], pa.int64()), "t": ["a", None]})
    assert stats_of(first, second) == {
        "numRecords": 4,
        "minValues": {"lag": -3, "t": "a"},
        "maxValues": {"lag": 9, "t": "c"},
        "nullCount": {"lag": 1, "t": 1},
    }


def test_timestamps_are_milliseconds_with_the_max_rounded_up():
    ts = pa.array(
        [dt.datetime(2026, 11, 20, 9, 10, 0, 123456, tzinfo=UTC)], pa.timestamp("us", tz="UTC")
    )
    stats = stats_of(pa.record_batch({"ts": ts}))
    assert stats["minValues"]["ts"] == "2026-11-20T09:10:00.123Z"
    assert stats["maxValues"]["ts"] == "2026-11-20T09:10:00.124Z"


def test_long_strings_keep_a_prefix_min_and_no_max():
    value = "x" * 40
    stats = stats_of(pa.record_batch({"id": [value]}))
    assert stats["minValues"]["id"] == "x" * 32
    assert "id" not in stats["maxValues"]


def test_nan_drops_bounds_for_good_and_nested_columns_get_none():
    batch = pa.record_batch(
        {
            "skew": pa.array([1.0, float("nan")]),
            "assignment": pa.array([[{"topic": "t", "partition": 1}], []]),
        }
    )
    later = pa.record_batch(
        {"skew": pa.array([0.5, 2.0]), "assignment": pa.array([[], []], batch.schema.field(1).type)}
    )
    stats = stats_of(batch, later)
    assert "skew" not in stats["minValues"] and "skew" not in stats["maxValues"]
    assert "assignment" not in stats["nullCount"]
    assert stats["nullCount"]["skew"] == 0


def test_dates_are_iso():
    stats = stats_of(pa.record_batch({"d": pa.array([dt.date(2026, 11, 20)])}))
    assert stats["minValues"]["d"] == "2026-11-20"


def test_partition_values_follow_the_delta_spec():
    assert partition_value(dt.date(2026, 11, 20)) == "2026-11-20"
    assert partition_value(dt.datetime(2026, 11, 20, 9, 10)) == "2026-11-20 09:10:00.000000"
    assert partition_value(None) is None
    assert partition_value(True) == "true"
    assert partition_value(7) == "7"


def test_directories_use_hive_escaping():
    assert escape_path_name("prod:east/1") == "prod%3Aeast%2F1"
    directory = partition_dir(
        ["cluster", "capture_date"], {"cluster": "prod:east", "capture_date": None}
    )
    assert directory == "cluster=prod%3Aeast/capture_date=__HIVE_DEFAULT_PARTITION__"
