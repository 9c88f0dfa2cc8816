"""Delta file statistics (numRecords, minValues, maxValues, nullCount) from Arrow data.

Readers use them to skip files, so every bound must be safe: a min that is <= every
value and a max that is >= every value. Strings are truncated like delta-spark's
(prefix as the min; the max only when it needs no truncation), timestamps are stored
in milliseconds with the max rounded up, and NaN or nested columns get no bounds.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

STRING_PREFIX_LENGTH = 32


@dataclass
class FileStats:
    num_records: int = 0
    minimum: dict[str, Any] = field(default_factory=dict)
    maximum: dict[str, Any] = field(default_factory=dict)
    null_count: dict[str, int] = field(default_factory=dict)
    # Columns that lost their bounds (NaN, over-long strings): never re-added later.
    unbounded: set[str] = field(default_factory=set)

    def update(self, batch: pa.RecordBatch) -> None:
        self.num_records += batch.num_rows
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            kind = column.type
            if pa.types.is_nested(kind):
                continue
            self.null_count[name] = self.null_count.get(name, 0) + column.null_count
            if not _has_bounds(kind) or name in self.unbounded:
                continue
            if pa.types.is_floating(kind) and pc.any(pc.is_nan(column)).as_py():
                self._drop_bounds(name)
                continue
            bounds = pc.min_max(column)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            if low is None:
                continue
            if name not in self.minimum or low < self.minimum[name]:
                self.minimum[name] = low
            if name not in self.maximum or high > self.maximum[name]:
                self.maximum[name] = high

    def _drop_bounds(self, name: str) -> None:
        self.unbounded.add(name)
        self.minimum.pop(name, None)
        self.maximum.pop(name, None)

    def to_json(self) -> str:
        minimum = {k: m for k, v in self.minimum.items() if (m := _json_min(v)) is not None}
        maximum = {k: m for k, v in self.maximum.items() if (m := _json_max(v)) is not None}
        return json.dumps(
            {
                "numRecords": self.num_records,
                "minValues": minimum,
                "maxValues": maximum,
                "nullCount": self.null_count,
            },
            separators=(",", ":"),
        )


def _has_bounds(kind: pa.DataType) -> bool:
    return (
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_date(kind)
        or pa.types.is_timestamp(kind)
    )


def _json_min(value: Any) -> Any:
    if isinstance(value, str):
        return value[:STRING_PREFIX_LENGTH]
    return _json_scalar(value, round_up=False)


def _json_max(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= STRING_PREFIX_LENGTH else None
    return _json_scalar(value, round_up=True)


def _json_scalar(value: Any, *, round_up: bool) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        millis = value.replace(microsecond=value.microsecond // 1000 * 1000)
        if round_up and millis != value:
            millis += dt.timedelta(milliseconds=1)
        return millis.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis.microsecond // 1000:03d}Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float) and math.isinf(value):
        return None
    return value
