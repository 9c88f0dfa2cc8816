"""Snapshots into raw_root, whole or not at all, on a local disk or an object store.

Local disk: a snapshot's files are written into a hidden staging directory beside the
captures (`<cluster>/captures/.<time>.<pid>.partial`), fsynced, and the directory is
renamed to `<cluster>/captures/<time>` in one step: a reader (ingest) sees every file of
it or none, and a process killed mid-write leaves only the hidden staging directory,
which ingest reports as hidden and never reads (capture/store/) and the next agent
start removes.

Object store (s3://, gs://, abfs://, through filesystems.Location like the jobs): there
is no directory rename, so each file is made whole first (spooled to a local temporary
file, memory bounded) and then published under its final key with one upload that the
store makes visible only when it completes: one PutObject, or for a file above
pyarrow's part size a multipart upload that appears on CompleteMultipartUpload (S3); a
resumable upload finalized on close (GCS); staged blocks committed by one block list
(Azure). A reader never sees half a file; a killed agent leaves at most an unfinished
upload that listings do not show. Files of one snapshot appear one after the other,
groups first, so a kill between them leaves a snapshot without its topics file (less
enrichment), never topics without the groups.

`compression: gzip` writes `<name>.gz` gzip files; ingest tells them by their magic
bytes (capture/compressed.py).
"""

from __future__ import annotations

import datetime as dt
import errno
import gzip
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Literal

from fleet_rebalance.filesystems import Location

CAPTURES = "captures"
# The capture directory's name: ISO-8601 basic UTC to the second (capture/paths.py
# reads it; the lab's LabCapture uses the same spelling).
DIRECTORY_TIME = "%Y-%m-%dT%H%M%SZ"
STAGING = re.compile(r"^\.(?P<name>[^/]+)\.(?P<pid>\d+)\.partial$")
Compression = Literal["gzip"]  # or None: plain files
GZIP: Compression = "gzip"
COMPRESSIONS = (None, GZIP)
GZIP_SUFFIX = ".gz"
GZIP_LEVEL = 6
BLOCK_BYTES = 1 << 20  # lines are joined into blocks this large before they are written
SPOOL_BYTES = 8 << 20  # an object-store file is held in memory up to this, then on disk


def capture_directory_name(captured_at: dt.datetime) -> str:
    return captured_at.astimezone(dt.UTC).strftime(DIRECTORY_TIME)


def stored_name(file_name: str, compression: Compression | None) -> str:
    """The name a file gets in raw_root: `groups.jsonl.gz` when gzip-compressed."""
    return file_name + GZIP_SUFFIX if compression == GZIP else file_name


def write_snapshot(
    raw_root: Path | Location,
    cluster: str,
    captured_at: dt.datetime,
    files: Iterable[tuple[str, Iterable[str]]],
    compression: Compression | None = None,
) -> str:
    """Write `files` (name, lines) as `<raw_root>/<cluster>/captures/<time>/` and
    return that directory's path relative to raw_root. Lines are streamed, never
    joined in memory."""
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression: expected none or gzip, found {compression!r}")
    root = raw_root if isinstance(raw_root, Location) else Location(str(raw_root))
    name = capture_directory_name(captured_at)
    relative = f"{cluster}/{CAPTURES}/{name}"
    named = ((stored_name(f, compression), lines) for f, lines in files)
    if root.is_local:
        _write_local(Path(root.uri) / cluster / CAPTURES, name, named, compression)
    else:
        _write_remote(root.child(relative), named, compression)
    return relative


def _write_local(
    captures: Path,
    name: str,
    files: Iterable[tuple[str, Iterable[str]]],
    compression: Compression | None,
) -> None:
    captures.mkdir(parents=True, exist_ok=True)
    final = captures / name
    staging = captures / f".{name}.{os.getpid()}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        for file_name, lines in files:
            with open(staging / file_name, "wb") as out:
                _encode(out, lines, compression)
                out.flush()
                os.fsync(out.fileno())
        _fsync_directory(staging)
        _publish(staging, final)
        _fsync_directory(captures)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_remote(
    directory: Location,
    files: Iterable[tuple[str, Iterable[str]]],
    compression: Compression | None,
) -> None:
    """Every file made whole before the first is published: lines that fail half-way
    (a bug, a full disk) publish nothing."""
    fs, path = directory.filesystem()
    spooled: list[tuple[str, IO[bytes]]] = []
    try:
        for file_name, lines in files:
            spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
            spooled.append((file_name, spool))
            _encode(spool, lines, compression)
        for file_name, spool in spooled:
            spool.seek(0)
            with fs.open_output_stream(f"{path}/{file_name}") as stream:
                while block := spool.read(BLOCK_BYTES):
                    stream.write(block)
    finally:
        for _, spool in spooled:
            spool.close()


def _encode(out: IO[bytes], lines: Iterable[str], compression: Compression | None) -> None:
    if compression != GZIP:
        for block in _blocks(lines):
            out.write(block)
        return
    # mtime 0: the same snapshot compresses to the same bytes (and the same sha256).
    # Level 6, gzip's own default: Python's 9 costs more time for little gain here.
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, compresslevel=GZIP_LEVEL) as packed:
        for block in _blocks(lines):
            packed.write(block)


def _blocks(lines: Iterable[str]) -> Iterator[bytes]:
    pending: list[bytes] = []
    size = 0
    for line in lines:
        encoded = line.encode("utf-8") + b"\n"
        pending.append(encoded)
        size += len(encoded)
        if size >= BLOCK_BYTES:
            yield b"".join(pending)
            pending, size = [], 0
    if pending:
        yield b"".join(pending)


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


def remove_stale_staging(raw_root: Path | Location, cluster: str) -> list[Path]:
    """Remove the staging directories a killed agent left for `cluster` (their pid no
    longer runs); return them. An object store has none: nothing is staged there."""
    if isinstance(raw_root, Location):
        if not raw_root.is_local:
            return []
        raw_root = Path(raw_root.uri)
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
