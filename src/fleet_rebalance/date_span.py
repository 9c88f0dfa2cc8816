"""The dates a backfill runs: those of the dates there are (capture dates under raw_root,
or the dates bronze holds) that fall in its span (DateSpan: --all, --from D, --to D;
inclusive).

A day of the span with nothing to run is named in one warning line rather than passed
over in silence: a missing night of captures is a broken capture pipeline, not a quiet
day. A span with no date at all fails the run. Spark-free: the launcher resolves a local
raw_root's dates before the JVM starts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from fleet_rebalance.config import Config
from fleet_rebalance.errors import NO_RAW_ROOT_HINT, JobFailed, error_text
from fleet_rebalance.filesystems import location

# Gaps named one by one in the warning line before the rest are only counted.
GAPS_SHOWN = 10


@dataclass(frozen=True)
class DateSpan:
    """The dates of a backfill (--all, --from, --to), both ends inclusive; None: from
    the oldest date there is, or through the newest."""

    first: dt.date | None = None
    last: dt.date | None = None

    def text(self) -> str:
        """The span as a message names it."""
        if self.first and self.last:
            return f"from {self.first} to {self.last}"
        if self.first:
            return f"from {self.first} on"
        if self.last:
            return f"up to {self.last}"
        return "at all"


@dataclass(frozen=True)
class SpanDates:
    """The dates to run, oldest first, and the span's days without one: (first, last)
    runs of consecutive days, inclusive."""

    dates: list[dt.date]
    gaps: list[tuple[dt.date, dt.date]]

    def gaps_text(self, what: str) -> str | None:
        """The warning naming the gaps (`what`: what they lack), or None without gaps."""
        if not self.gaps:
            return None
        days = sum((last - first).days + 1 for first, last in self.gaps)
        shown = [
            str(first) if first == last else f"{first}..{last}"
            for first, last in self.gaps[:GAPS_SHOWN]
        ]
        more = len(self.gaps) - GAPS_SHOWN
        return f"no {what} on {days} day(s) of the backfill, not run: {', '.join(shown)}" + (
            f" and {more} more gap(s)" if more > 0 else ""
        )


def span_dates(available: Iterable[dt.date], span: DateSpan) -> SpanDates:
    """The dates of `available` within `span`, and the span's days missing from it. An
    open end is the oldest or newest available date."""
    have = sorted(set(available))
    if not have:
        return SpanDates([], [])
    first, last = span.first or have[0], span.last or have[-1]
    dates = [day for day in have if first <= day <= last]
    gaps = []
    expected = first
    for day in [*dates, last + dt.timedelta(days=1)]:
        if day > expected:
            gaps.append((expected, day - dt.timedelta(days=1)))
        expected = day + dt.timedelta(days=1)
    return SpanDates(dates, gaps)


def capture_span(config: Config, span: DateSpan) -> SpanDates:
    """The capture dates (path dates of the entries under raw_root, as ingest takes
    them) within `span`; JobFailed when there is none."""
    available = capture_dates(config)
    dates = span_dates(available, span)
    if dates.dates:
        return dates
    root, pattern = config.raw_root, config.capture.path_pattern
    message = f"no capture dates {span.text()} under {root} (path_pattern {pattern!r})"
    if available:
        message += f"; the captures there are dated {available[0]} to {available[-1]}"
    else:
        message += "; no file there is dated: check --raw-root and capture.path_pattern"
    raise JobFailed(message)


def capture_dates(config: Config) -> list[dt.date]:
    """Every path date under raw_root, oldest first: the dates `ingest --all` runs
    (an entry that cannot be read counts: its date is a capture that failed)."""
    from fleet_rebalance.capture import store

    root = location(config.raw_root, config.storage.options)
    try:
        files = store.survey(root, config.capture.path_pattern)
    except FileNotFoundError as exc:
        raise JobFailed(f"{error_text(exc)}; {NO_RAW_ROOT_HINT}") from None
    return sorted({raw.path_date for raw in files if raw.path_date})


def bronze_span(available: Iterable[dt.date], span: DateSpan, warehouse: str) -> SpanDates:
    """The dates bronze holds within `span`; JobFailed when there is none."""
    have = sorted(set(available))
    dates = span_dates(have, span)
    if dates.dates:
        return dates
    message = f"no ingested dates {span.text()} in {warehouse} (ingested_files)"
    if have:
        message += f"; bronze holds {have[0]} to {have[-1]}"
    else:
        message += "; run ./spark-submit.sh ingest (or nightly) first"
    raise JobFailed(message)
