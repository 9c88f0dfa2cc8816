"""Offsets samples as the lag metrics' Arrow calls receive them (Spark's Arrow types)."""

from __future__ import annotations

import pyarrow as pa

TYPES = {
    "cluster": pa.string(),
    "group_id": pa.string(),
    "topic": pa.string(),
    "partition": pa.int32(),
    "captured_at": pa.timestamp("us", tz="UTC"),
    "capture_date": pa.date32(),
    "current_offset": pa.int64(),
    "log_end_offset": pa.int64(),
    "lag": pa.int64(),
    "consumer_id": pa.string(),
}


def sample_table(rows: list[dict], columns: list[str]) -> pa.Table:
    return pa.Table.from_pylist(rows, pa.schema([(name, TYPES[name]) for name in columns]))
