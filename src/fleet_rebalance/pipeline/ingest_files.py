"""Which raw files a run ingests for a date (listing and reading them: capture/store/).

For a date D, a readable file is
- taken when its path is dated D, when it is a broker log dated a neighbour of D (a
  local-time zone can put an hour's lines on the next UTC date), or when it is a broker
  log with no valid timestamp in its path (logs carry their own: the parser keeps D's
  lines);
- rejected when its path has no valid timestamp and it is not a log: it cannot be a
  capture of any date (its rows would have no capture time), so it is recorded for D
  with the reason and never parsed. It is no evidence that D was captured (D with
  only such files has no capture files) and, having no rows, it never makes D look
  changed.
An entry ingest must not read (store.RawFile.skipped) is recorded for its path date,
or for every date when its path has none. One dated D counts as a capture of D: it is
a capture that failed, a gap to record, not a night without captures.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN, timestamp_problem
from fleet_rebalance.capture.store import RawFile, needs_kind

__all__ = ["RawFile", "Selection", "files_for", "rejection", "select"]


@dataclass(frozen=True)
class Selection:
    """A date's entries: taken (to parse), rejected (no valid path timestamp, not a
    log) and skipped (must not be read)."""

    day: dt.date
    taken: list[RawFile] = field(default_factory=list)
    rejected: list[RawFile] = field(default_factory=list)
    skipped: list[RawFile] = field(default_factory=list)

    @property
    def has_captures(self) -> bool:
        """A file to parse, or one dated this day that could not be read."""
        return bool(self.taken) or any(raw.path_date == self.day for raw in self.skipped)


def select(files: list[RawFile], day: dt.date) -> Selection:
    """`day`'s entries. Those whose choice depends on their being a log must have been
    sniffed (capture.store.with_log_kinds): a log is known by its content."""
    selection = Selection(day)
    for raw in files:
        date = raw.path_date
        if raw.skipped is not None:
            if date is None or date == day:
                selection.skipped.append(raw)
            continue
        if date == day:
            selection.taken.append(raw)
            continue
        if not needs_kind(raw, day):
            continue
        if raw.is_log is None:
            raise ValueError(f"{raw.relative}: not sniffed; call with_log_kinds first")
        if raw.is_log:
            selection.taken.append(raw)
        elif date is None:
            selection.rejected.append(raw)
    return selection


def files_for(files: list[RawFile], day: dt.date) -> list[RawFile]:
    """The files parsed for `day` (select's `taken`)."""
    return select(files, day).taken


def rejection(raw: RawFile, path_pattern: str = DEFAULT_PATH_PATTERN) -> str:
    """The reason a file with no valid path timestamp that is not a log is rejected."""
    return f"{timestamp_problem(raw.relative, path_pattern)} (only broker logs may do without)"
