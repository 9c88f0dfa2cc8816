"""Cluster and capture time from a capture's path relative to raw_root (DESIGN.md).

The default pattern takes the first directory as the cluster and the first timestamp in
the path as the capture time, in ISO-8601 basic or extended form, with or without
seconds (2026-11-20T0910Z, 2026-11-20T091000Z, 20261120T091000Z, 2026-11-20T09:10:00Z),
and hourly log names (server.log.2026-11-20-09). A custom pattern may name groups
`cluster`, `timestamp` and `group` (for layouts without a GROUP column).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

DEFAULT_PATH_PATTERN = r"^(?P<cluster>[^/]+)/"
TIMESTAMP = re.compile(
    r"(?P<y>\d{4})-?(?P<mo>\d{2})-?(?P<d>\d{2})"
    r"(?:[T_ ](?P<h>\d{2}):?(?P<mi>\d{2})(?::?(?P<s>\d{2}))?(?:\.\d+)?(?P<z>Z|[+-]\d{2}:?\d{2})?"
    r"|-(?P<lh>\d{2})(?!\d))"
)


@dataclass(frozen=True)
class CapturePath:
    cluster: str | None
    captured_at: dt.datetime | None
    group: str | None


def parse_capture_path(relative: str, pattern: str = DEFAULT_PATH_PATTERN) -> CapturePath:
    match = re.search(pattern, relative)
    groups = match.groupdict() if match else {}
    stamp = groups.get("timestamp")
    return CapturePath(
        cluster=groups.get("cluster"),
        captured_at=parse_timestamp(stamp if stamp else relative),
        group=groups.get("group"),
    )


def parse_timestamp(text: str) -> dt.datetime | None:
    """The first timestamp in text, as UTC; None when there is none or it is invalid."""
    for match in TIMESTAMP.finditer(text):
        try:
            return _to_datetime(match)
        except ValueError:
            continue
    return None


def _to_datetime(match: re.Match) -> dt.datetime:
    parts = match.groupdict()
    hour = parts["h"] if parts["h"] is not None else parts["lh"]
    if hour is None:
        raise ValueError("date without a time")
    value = dt.datetime(
        int(parts["y"]),
        int(parts["mo"]),
        int(parts["d"]),
        int(hour),
        int(parts["mi"] or 0),
        int(parts["s"] or 0),
        tzinfo=dt.UTC,
    )
    zone = parts.get("z")
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        value -= sign * offset
    return value
