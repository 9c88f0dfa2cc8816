"""Cluster and capture time from a capture's path relative to raw_root (DESIGN.md).

The default pattern takes the first directory as the cluster and the first timestamp in
the path as the capture time, in ISO-8601 basic or extended form, with or without
seconds (2026-11-20T0910Z, 2026-11-20T091000Z, 20261120T091000Z, 2026-11-20T09:10:00Z),
and hourly log names (server.log.2026-11-20-09). A custom pattern may name groups
`cluster`, `timestamp` and `group` (for layouts without a GROUP column). A timestamp
that names no real instant (hour 25, an offset past 23:59, a year past 9999 once in
UTC) is no timestamp: the path has none, and timestamp_problem says why.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

DEFAULT_PATH_PATTERN = r"^(?P<cluster>[^/]+)/"
# How a capture time may be spelled in a path, for the messages that ask for one.
SPELLINGS = "2026-11-20T0910Z, 2026-11-20T091000Z, 20261120T091000Z or 2026-11-20T09:10:00Z"
TIMESTAMP = re.compile(
    r"(?P<y>\d{4})-?(?P<mo>\d{2})-?(?P<d>\d{2})"
    r"(?:[T_ ](?P<h>\d{2}):?(?P<mi>\d{2})(?::?(?P<s>\d{2}))?(?:\.\d+)?(?P<z>Z|[+-]\d{2}:?\d{2})?"
    r"|-(?P<lh>\d{2})(?!\d))"
)
MAX_OFFSET_HOURS, MAX_OFFSET_MINUTES = 23, 59


@dataclass(frozen=True)
class CapturePath:
    cluster: str | None
    captured_at: dt.datetime | None
    group: str | None


def parse_capture_path(relative: str, pattern: str = DEFAULT_PATH_PATTERN) -> CapturePath:
    groups = _groups(relative, pattern)
    return CapturePath(
        cluster=groups.get("cluster"),
        captured_at=parse_timestamp(_timestamp_text(relative, groups)),
        group=groups.get("group"),
    )


def _groups(relative: str, pattern: str) -> dict[str, str | None]:
    match = re.search(pattern, relative)
    return match.groupdict() if match else {}


def _timestamp_text(relative: str, groups: dict[str, str | None]) -> str:
    stamp = groups.get("timestamp")
    return stamp if stamp else relative


def parse_timestamp(text: str) -> dt.datetime | None:
    """The first timestamp in text, as UTC; None when there is none or it is invalid."""
    for match in TIMESTAMP.finditer(text):
        try:
            return _to_datetime(match)
        except (ValueError, OverflowError):
            continue
    return None


def timestamp_problem(relative: str, pattern: str = DEFAULT_PATH_PATTERN) -> str:
    """Why parse_capture_path finds no capture time in `relative`, for a reason column:
    the path holds none, or only ones that name no real instant."""
    text = _timestamp_text(relative, _groups(relative, pattern))
    invalid = []
    for match in TIMESTAMP.finditer(text):
        try:
            _to_datetime(match)
        except (ValueError, OverflowError) as exc:
            invalid.append(f"{match.group(0)!r} is not a valid time ({exc})")
    found = "; ".join(invalid) if invalid else "it holds no timestamp"
    return f"no capture time in the path {relative!r}: {found}; expected e.g. {SPELLINGS}"


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
        hours, minutes = int(digits[:2]), int(digits[2:])
        if hours > MAX_OFFSET_HOURS or minutes > MAX_OFFSET_MINUTES:
            raise ValueError(f"UTC offset {zone} out of range")
        offset = dt.timedelta(hours=hours, minutes=minutes)
        value -= sign * offset
    return value
