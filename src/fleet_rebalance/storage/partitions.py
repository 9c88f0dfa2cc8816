"""Delta partition values: their string form in the log and their Hive-style directory.

The log stores partition values as strings (dates `2026-11-20`, timestamps
`2026-11-20 09:10:00.000000`, null as null); directories use Hive's escaping, the same
characters Spark's ExternalCatalogUtils.escapePathName escapes, so Spark's partition
discovery and other Delta writers agree with us.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^")


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


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 else c for c in text)


def partition_dir(columns: Sequence[str], values: Mapping[str, str | None]) -> str:
    parts = []
    for column in columns:
        value = values[column]
        text = HIVE_NULL if value is None or value == "" else escape_path_name(value)
        parts.append(f"{escape_path_name(column)}={text}")
    return "/".join(parts)
