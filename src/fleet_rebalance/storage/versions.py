"""A table's versions as maintenance sees them: its commits (which run made each), the
tables a warehouse holds, and what a maintenance pass did. Spark-free: `sql --engine
duckdb` lists the tables with it.

VACUUM deletes what no version younger than the retention reads, and Delta refuses time
travel to versions older than it: every version committed within the retention stays
readable, and oldest_readable says which is the first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from fleet_rebalance.filesystems import Location, exists
from fleet_rebalance.storage.commit_context import commit_context
from fleet_rebalance.storage.errors import StorageError

DELTA_LOG = "_delta_log"
MAINTAIN_JOB = "maintain"


@dataclass(frozen=True)
class Commit:
    """One version in a table's log: when it was committed and by which run."""

    version: int
    timestamp: dt.datetime
    run_id: str | None


@dataclass(frozen=True)
class Maintained:
    """What maintenance did to one table."""

    files_before: int
    files_after: int
    vacuumed_files: int | None  # None (both): Delta did not log the VACUUM's metrics
    vacuumed_bytes: int | None
    version: int
    oldest_readable: int  # every version from this one to `version` can be read

    @property
    def versions_kept(self) -> int:
        return self.version - self.oldest_readable + 1


def delta_tables(root: Location) -> list[str]:
    """The names of the Delta tables directly under the warehouse (directories holding
    a _delta_log), sorted; none when the warehouse does not exist yet."""
    fs, path = root.filesystem()
    try:
        entries = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    except FileNotFoundError:
        return []
    names = [e.base_name for e in entries if e.type == pafs.FileType.Directory]
    return sorted(n for n in names if exists(fs, root.child(n, DELTA_LOG).fs_path))


def commit_of(version: int, timestamp: dt.datetime, entry: Mapping[str, Any]) -> Commit:
    """A history entry as a Commit, with the runId its context records."""
    run_id = commit_context(entry).get("runId")
    return Commit(version, timestamp, str(run_id) if run_id else None)


def oldest_readable(history: list[Commit], cutoff: dt.datetime) -> int:
    """The oldest version time travel reads after a VACUUM at `cutoff`: the oldest
    committed at or after it (Delta refuses time travel to a version older than the
    table's deleted-file retention), else the latest (a plain read)."""
    if not history:
        raise StorageError("a table without versions")
    inside = [c.version for c in history if c.timestamp >= cutoff]
    return min(inside) if inside else max(c.version for c in history)


def whole_hours(span: dt.timedelta) -> int:
    return -(-int(span.total_seconds()) // 3600)
