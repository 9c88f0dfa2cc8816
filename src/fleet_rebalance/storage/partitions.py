"""Delta partition values in their log's string form (dates `2026-11-20`, timestamps
`2026-11-20 09:10:00.000000`, null as null): how a write's replace_where and a read's
`where` name partitions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any


def partition_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def partition_strings(where: Mapping[str, Any]) -> dict[str, list[str | None]]:
    """{"capture_date": date or dates} -> each column's values in the log's string form."""
    normalised = {}
    for column, value in where.items():
        values = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
        normalised[column] = sorted({partition_value(v) for v in values}, key=str)
    return normalised
