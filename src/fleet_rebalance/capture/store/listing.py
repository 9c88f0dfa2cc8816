"""The listing of raw_root: every entry, those ingest may read and those it must not with
the reason, nothing opened. An object store's keys in a few paginated requests; a local
tree directory by directory, each entry classified from its lstat (local_checks.py)."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterator

import pyarrow.fs as pafs

from fleet_rebalance.capture.store.entries import (
    COMPRESSED_COPY,
    DIRECTORY_MARK,
    HIDDEN_DIRECTORY,
    HIDDEN_FILE,
    UNDECODABLE_NAME,
    RawFile,
    os_reason,
)
from fleet_rebalance.capture.store.local_checks import local_verdict
from fleet_rebalance.filesystems import Location

Entry = tuple[str, int | None, str | None]  # relative path, size, why it is not read
COMPRESSED_SUFFIXES = ("gz", "gzip", "zst", "zstd")


def discover(raw_root: Location, path_pattern: str) -> list[RawFile]:
    """Every file under raw_root that ingest may read, sorted by relative path (code
    points, the order S3 lists keys in). Raises FileNotFoundError when raw_root does
    not exist."""
    return [raw for raw in survey(raw_root, path_pattern) if raw.skipped is None]


def survey(raw_root: Location, path_pattern: str) -> list[RawFile]:
    """Every entry under raw_root, sorted by relative path: the files ingest may read,
    and those it must not with the reason (`skipped`). Nothing is opened."""
    fs, root = raw_root.filesystem()
    try:
        entries = list(_local_entries(root) if raw_root.is_local else _remote_entries(fs, root))
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise FileNotFoundError(f"raw_root {raw_root}: no such directory") from exc
    found = [RawFile.at(relative, size, path_pattern, why) for relative, size, why in entries]
    return sorted(_one_copy(found), key=lambda raw: raw.relative)


def _one_copy(found: list[RawFile]) -> list[RawFile]:
    """`x.txt.gz` (or .gzip, .zst, .zstd) beside a readable `x.txt`: the same view twice
    in one capture, whose rows would be stored twice. The plain file is read; the
    compressed one is skipped with the reason (by name: nothing is opened here)."""
    readable = {raw.relative for raw in found if raw.skipped is None}
    copies = {}
    for raw in found:
        plain = _plain_name(raw.relative)
        if raw.skipped is None and plain in readable:
            copies[raw.relative] = COMPRESSED_COPY.format(plain=plain.rsplit("/", 1)[-1])
    return [
        dataclasses.replace(raw, skipped=copies[raw.relative]) if raw.relative in copies else raw
        for raw in found
    ]


def _plain_name(relative: str) -> str | None:
    """The name a compressed file's plain copy would have, or None (not compressed)."""
    stem, dot, suffix = relative.rpartition(".")
    return stem if dot and suffix.lower() in COMPRESSED_SUFFIXES and stem else None


def _remote_entries(fs: pafs.FileSystem, root: str) -> Iterator[Entry]:
    """An object store's whole listing at once (a few paginated requests). Keys are
    UTF-8 and there are no links or special files; hidden entries are reported as a
    local listing reports them: a hidden directory once, whatever it holds."""
    hidden_dirs = set()
    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        parts = _relative(info.path, root).split("/")
        hidden = next((i for i, part in enumerate(parts) if part.startswith(".")), None)
        directory = info.type == pafs.FileType.Directory
        if hidden is None:
            if info.type == pafs.FileType.File:
                yield "/".join(parts), info.size, None
        elif hidden < len(parts) - 1 or directory:
            hidden_dirs.add("/".join(parts[: hidden + 1]) + DIRECTORY_MARK)
        else:
            yield "/".join(parts), None, HIDDEN_FILE
    for relative in hidden_dirs:
        yield relative, None, HIDDEN_DIRECTORY


def _local_entries(root: str) -> Iterator[Entry]:
    """A local tree directory by directory, each entry classified from its lstat."""
    if not stat.S_ISDIR(os.stat(root).st_mode):
        raise NotADirectoryError(root)
    real_root = os.path.realpath(root)
    pending = [""]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(os.path.join(root, directory)) as listing:
                names = sorted(entry.name for entry in listing)
        except OSError as exc:
            if not directory:
                raise
            yield directory + DIRECTORY_MARK, None, f"cannot list the directory: {os_reason(exc)}"
            continue
        for name in names:
            relative = f"{directory}/{name}" if directory else name
            enter, entry = _local_entry(root, relative, real_root)
            if enter:
                pending.append(relative)
            elif entry is not None:
                yield entry


def _local_entry(root: str, relative: str, real_root: str) -> tuple[bool, Entry | None]:
    """Whether to enter the entry (a directory), else what to report of it: nothing
    when it was deleted between the directory's listing and its lstat, like a file
    deleted a moment before the listing."""
    path = os.path.join(root, relative)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False, None
    except OSError as exc:
        return False, (_spelling(relative), None, f"cannot stat: {os_reason(exc)}")
    directory = stat.S_ISDIR(info.st_mode)
    mark = DIRECTORY_MARK if directory else ""
    spelled = _spelling(relative)
    if spelled != relative:
        return False, (spelled + mark, None, UNDECODABLE_NAME)
    if relative.rsplit("/", 1)[-1].startswith("."):
        return False, (relative + mark, None, HIDDEN_DIRECTORY if directory else HIDDEN_FILE)
    if directory:
        return True, None
    size, why = local_verdict(path, info, real_root)
    return False, (relative, size, why)


def _spelling(relative: str) -> str:
    """The relative path as text every table column can hold: bytes that are not UTF-8
    (os.fsdecode's surrogate escapes) written as backslash escapes."""
    return os.fsencode(relative).decode("utf-8", errors="backslashreplace")


def _relative(path: str, root: str) -> str:
    """`path` below `root`, as the selector spells both (bucket/key on object stores)."""
    prefix = root.rstrip("/") + "/"
    if not path.startswith(prefix):
        raise ValueError(f"listing of {root!r} returned {path!r}, which is not under it")
    return path[len(prefix) :]
