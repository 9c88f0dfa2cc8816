"""Reading one capture for the parse tasks: opened as the listing found it (a local entry
checked again, since it may have changed), every failure an UnreadableFile: `skipped`
when it could not be opened, `failed_capture` when reading failed mid-way."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, TypeAlias

import pyarrow as pa

from fleet_rebalance.capture.result import FAILED_CAPTURE
from fleet_rebalance.capture.store.entries import (
    HIDDEN_DIRECTORY,
    HIDDEN_FILE,
    UnreadableFile,
    os_reason,
)
from fleet_rebalance.capture.store.local_checks import inside, local_verdict, type_name
from fleet_rebalance.filesystems import Location

Stream: TypeAlias = BinaryIO | pa.NativeFile  # a local file, or an object store's

BLOCK_BYTES = 1 << 20
# Opening never waits: a FIFO swapped in after the listing opens at once and is refused.
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@contextmanager
def open_capture(raw_root: Location, relative: str) -> Iterator[Stream]:
    """A capture open for reading as a stream, for the parse tasks: an OSError while
    reading it becomes UnreadableFile (failed_capture). Raises UnreadableFile."""
    stream = open_stream(raw_root, relative)
    try:
        with stream:
            yield stream
    except OSError as exc:
        reason = f"reading failed mid-way: {os_reason(exc)}"
        raise UnreadableFile(relative, reason, FAILED_CAPTURE) from exc


def read_capture(raw_root: Location, relative: str) -> bytes:
    """A capture's bytes, for the parse tasks. Raises UnreadableFile."""
    with open_capture(raw_root, relative) as stream:
        return stream.read()


def sha256(raw_root: Location, relative: str) -> str:
    """The file's sha256, streamed: a broker log may be larger than a driver wants to
    hold. Raises UnreadableFile."""
    digest = hashlib.sha256()
    with open_capture(raw_root, relative) as stream:
        while block := stream.read(BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def open_stream(raw_root: Location, relative: str) -> Stream:
    """A sequential stream over one file; the path is spelled as discover() found it.
    Raises UnreadableFile when it cannot be opened."""
    fs, root = raw_root.filesystem()
    parts = relative.split("/")
    if any(part.startswith(".") for part in parts):
        hidden = HIDDEN_FILE if parts[-1].startswith(".") else HIDDEN_DIRECTORY
        raise UnreadableFile(relative, hidden)
    if raw_root.is_local:
        return _open_local(root, relative)
    try:
        return fs.open_input_stream(f"{root.rstrip('/')}/{relative}")
    except OSError as exc:
        raise UnreadableFile(relative, f"cannot open: {os_reason(exc)}") from exc


def _open_local(root: str, relative: str) -> BinaryIO:
    """The entry checked again as the listing checks it (it may have changed since),
    then opened without following a link or waiting, and refused unless fstat says it
    is a regular file."""
    path = os.path.join(root, relative)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise UnreadableFile(relative, f"cannot open: {os_reason(exc)}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise UnreadableFile(relative, "a directory since the listing: not read")
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    _, why = local_verdict(path, info, real_root)
    if why is None and not inside(real, real_root):
        why = "leads outside raw_root (a directory on its path was replaced by a link)"
    if why is not None:
        raise UnreadableFile(relative, why)
    try:
        fd = os.open(real, OPEN_FLAGS)
    except OSError as exc:
        raise UnreadableFile(relative, f"cannot open: {os_reason(exc)}") from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = type_name(mode)
        raise UnreadableFile(relative, f"not a regular file ({kind}) when opened: not read")
    return os.fdopen(fd, "rb")
