"""Files of a table that has no commit yet: what a job's first write of it left when it
failed before committing (the data files its tasks wrote). VACUUM never sees them:
without a commit there is no Delta table. maintain removes those older than its
retention, as VACUUM removes a table's unreferenced files; younger ones may belong to a
first write still running, and stay."""

from __future__ import annotations

import datetime as dt
import posixpath
from dataclasses import dataclass

import pyarrow.fs as pafs

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage.versions import DELTA_LOG


@dataclass(frozen=True)
class Removed:
    files: int  # removed, older than the retention
    size: int  # their bytes
    kept: int  # younger files left in place


def has_files_without_commit(table: Location) -> bool:
    """Whether `table` is a directory holding files but no commit in its _delta_log."""
    fs, path = table.filesystem()
    files = _files(fs, path)
    return bool(files) and not any(_is_commit(path, f.path) for f in files)


def remove_uncommitted(
    table: Location, retention: dt.timedelta, now: dt.datetime | None = None
) -> Removed:
    """Every file of a table without a commit older than `retention` removed, then the
    directories left empty (the table's own included)."""
    fs, path = table.filesystem()
    cutoff = (now or dt.datetime.now(dt.UTC)) - retention
    removed = size = kept = 0
    for info in _files(fs, path):
        if info.mtime is not None and _aware(info.mtime) < cutoff:
            fs.delete_file(info.path)
            removed, size = removed + 1, size + (info.size or 0)
        else:
            kept += 1
    if not kept:
        fs.delete_dir(path)  # nothing left but empty directories
    return Removed(removed, size, kept)


def _files(fs: pafs.FileSystem, path: str) -> list[pafs.FileInfo]:
    selector = pafs.FileSelector(path, recursive=True, allow_not_found=True)
    return [i for i in fs.get_file_info(selector) if i.type == pafs.FileType.File]


def _is_commit(table: str, file: str) -> bool:
    """A commit of the table's log: `_delta_log/<version>.json` (or a checkpoint)."""
    directory, name = posixpath.split(file)
    return (
        posixpath.normpath(directory) == posixpath.join(table.rstrip("/"), DELTA_LOG)
        and (name.endswith(".json") or ".checkpoint" in name)
        and name.split(".", 1)[0].isdigit()
    )


def _aware(at: dt.datetime) -> dt.datetime:
    return at if at.tzinfo else at.replace(tzinfo=dt.UTC)
