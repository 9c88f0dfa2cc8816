"""What a listing entry is (RawFile), and why one is not read: the reasons ingested_files
records for a `skipped` or `failed_capture` file, shared by the listing and the reads."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from fleet_rebalance.capture.paths import parse_capture_path
from fleet_rebalance.capture.result import SKIPPED

# Why an entry is not read (ingested_files.reason of a `skipped` file).
HIDDEN_FILE = "hidden file (its name starts with '.'): not read"
HIDDEN_DIRECTORY = "hidden directory (its name starts with '.'): not entered"
UNDECODABLE_NAME = "name is not valid UTF-8 (shown escaped): not read"
UNREADABLE = "permission denied: this process may not read it"
LINK_OUTSIDE = "symbolic link leading outside raw_root: not followed"
LINK_LOOP = "symbolic link loop: not followed"
LINK_DANGLING = "dangling symbolic link (its target does not exist)"
LINK_TO_DIRECTORY = (
    "symbolic link to a directory: not entered (what it holds inside raw_root is listed "
    "under its own path)"
)
# A compressed and a plain copy of one file side by side: one view, one copy per capture.
COMPRESSED_COPY = "a compressed copy of {plain} beside it: one copy per capture, {plain} is read"
# Directories are spelled with a trailing slash in the listing.
DIRECTORY_MARK = "/"


class UnreadableFile(Exception):
    """A raw file ingest cannot or must not read (any more): `reason` for the reason
    column, `status` skipped (not opened) or failed_capture (reading failed mid-way)."""

    def __init__(self, relative: str, reason: str, status: str = SKIPPED) -> None:
        super().__init__(relative, reason, status)
        self.relative, self.reason, self.status = relative, reason, status

    def __str__(self) -> str:
        return f"{self.relative}: {self.reason}"


@dataclass(frozen=True, slots=True)
class RawFile:
    """One entry under raw_root, its path parsed once at discovery. `is_log` is None
    until the file's head has been read (see with_log_kinds): that costs a request per
    file on an object store, so only the files whose choice depends on it are read.
    `skipped` is why ingest must not read it (None: it may); such an entry's size is
    None unless it is a regular file."""

    relative: str
    size: int | None
    cluster: str | None = None
    captured_at: dt.datetime | None = None
    group: str | None = None
    is_log: bool | None = None
    skipped: str | None = None

    @classmethod
    def at(
        cls, relative: str, size: int | None, path_pattern: str, skipped: str | None = None
    ) -> RawFile:
        path = parse_capture_path(relative, path_pattern)
        return cls(relative, size, path.cluster, path.captured_at, path.group, skipped=skipped)

    @property
    def path_date(self) -> dt.date | None:
        return self.captured_at.date() if self.captured_at else None


def os_reason(exc: OSError) -> str:
    """An OSError as the short text a reason column holds ("Permission denied")."""
    return exc.strerror or type(exc).__name__
