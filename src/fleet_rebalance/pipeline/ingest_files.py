"""Which raw files a run ingests (listing and reading them: capture/store.py)."""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.capture.store import RawFile, is_neighbour

__all__ = ["RawFile", "files_for"]


def files_for(files: list[RawFile], day: dt.date) -> list[RawFile]:
    """Captures of `day`; broker logs dated a neighbour (a local-time zone can put an
    hour's lines on the next UTC date); files with no date in the path. The neighbours
    must have been sniffed (capture.store.with_log_kinds): a log is known by content."""
    chosen = []
    for raw in files:
        date = raw.path_date
        if date is None or date == day:
            chosen.append(raw)
        elif is_neighbour(raw, day):
            if raw.is_log is None:
                raise ValueError(f"{raw.relative}: not sniffed; call with_log_kinds first")
            if raw.is_log:
                chosen.append(raw)
    return chosen
