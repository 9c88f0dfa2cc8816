"""Which raw files a run ingests, and whether a date needs re-ingesting at all."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from fleet_rebalance.capture.paths import parse_capture_path

LOG_NAME = "log"  # broker logs: server.log, server.log.2026-11-20-09


@dataclass(frozen=True)
class RawFile:
    relative: str
    size: int
    path_time: dt.datetime | None

    @property
    def is_log(self) -> bool:
        return LOG_NAME in Path(self.relative).name

    @property
    def path_date(self) -> dt.date | None:
        return self.path_time.date() if self.path_time else None


def discover(raw_root: str, path_pattern: str) -> list[RawFile]:
    """Every non-hidden file under raw_root, sorted by path."""
    found = []
    root = Path(raw_root)
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            found.append(
                RawFile(
                    relative,
                    path.stat().st_size,
                    parse_capture_path(relative, path_pattern).captured_at,
                )
            )
    return found


def files_for(files: list[RawFile], day: dt.date) -> list[RawFile]:
    """Captures of `day`; broker logs named for the day or a neighbour (a local-time zone
    can put an hour's lines on the next UTC date); files with no date in the path."""
    chosen = []
    for raw in files:
        date = raw.path_date
        if date is None or date == day or (raw.is_log and abs((date - day).days) == 1):
            chosen.append(raw)
    return chosen


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
