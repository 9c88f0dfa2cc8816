"""Snapshots into raw_root, whole or not at all.

A snapshot's files are written into a hidden staging directory beside the captures
(`<cluster>/captures/.<time>.<pid>.partial`), fsynced, and the directory is renamed to
`<cluster>/captures/<time>` in one step: a reader (ingest) sees every file of it or
none, and a process killed mid-write leaves only the hidden staging directory, which
ingest reports as hidden and never reads (capture/store.py) and the next agent start
removes. Local disk only; gzip is not offered because ingest reads plain text only.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

CAPTURES = "captures"
# The capture directory's name: ISO-8601 basic UTC to the second (capture/paths.py
# reads it; the lab's LabCapture uses the same spelling).
DIRECTORY_TIME = "%Y-%m-%dT%H%M%SZ"
STAGING = re.compile(r"^\.(?P<name>[^/]+)\.(?P<pid>\d+)\.partial$")


def capture_directory_name(captured_at: dt.datetime) -> str:
    return captured_at.astimezone(dt.UTC).strftime(DIRECTORY_TIME)


def write_snapshot(
    raw_root: Path,
    cluster: str,
    captured_at: dt.datetime,
    files: Iterable[tuple[str, Iterable[str]]],
) -> Path:
    """Write `files` (name, lines) as `<raw_root>/<cluster>/captures/<time>/` and
    return that directory. Lines are streamed, never joined in memory."""
    captures = raw_root / cluster / CAPTURES
    captures.mkdir(parents=True, exist_ok=True)
    name = capture_directory_name(captured_at)
    final = captures / name
    staging = captures / f".{name}.{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        for file_name, lines in files:
            _write_lines(staging / file_name, lines)
        _fsync_directory(staging)
        _publish(staging, final)
        _fsync_directory(captures)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for line in lines:
            out.write(line)
            out.write("\n")
        out.flush()
        os.fsync(out.fileno())


def _publish(staging: Path, final: Path) -> None:
    try:
        os.rename(staging, final)
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
        # A capture of this second already exists (a re-run of --once): replace its
        # files one by one, each atomically; a re-run rewrites, never duplicates.
        for child in sorted(staging.iterdir()):
            os.replace(child, final / child.name)


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_stale_staging(raw_root: Path, cluster: str) -> list[Path]:
    """Remove the staging directories a killed agent left for `cluster` (their pid no
    longer runs); return them."""
    captures = raw_root / cluster / CAPTURES
    removed: list[Path] = []
    if not captures.is_dir():
        return removed
    for entry in captures.iterdir():
        match = STAGING.match(entry.name)
        if match and entry.is_dir() and not _running(int(match.group("pid"))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
