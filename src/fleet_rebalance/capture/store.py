"""Raw captures on any store: list them, tell broker logs by their first bytes, read them.

Everything goes through the store's pyarrow filesystem (filesystems.Location), so the
driver lists and the executors read the same files whether raw_root is a local path or
an object store. Spark-free: the executors import it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.fs as pafs

from fleet_rebalance.capture.parse import BINARY_SHARE, CONTROL_BYTES, detect_kind
from fleet_rebalance.capture.paths import parse_capture_path
from fleet_rebalance.filesystems import Location

HEAD_BYTES = 1 << 16  # what parse_capture looks at to tell text from binary
BLOCK_BYTES = 1 << 20
SNIFF_THREADS = 16  # each sniff is one small ranged GET: latency-bound, not CPU-bound


@dataclass(frozen=True, slots=True)
class RawFile:
    """One file under raw_root, its path parsed once at discovery. `is_log` is None
    until the file's head has been read (see with_log_kinds): that costs a request per
    file on an object store, so only the files whose choice depends on it are read."""

    relative: str
    size: int
    cluster: str | None = None
    captured_at: dt.datetime | None = None
    group: str | None = None
    is_log: bool | None = None

    @classmethod
    def at(cls, relative: str, size: int, path_pattern: str) -> RawFile:
        path = parse_capture_path(relative, path_pattern)
        return cls(relative, size, path.cluster, path.captured_at, path.group)

    @property
    def path_date(self) -> dt.date | None:
        return self.captured_at.date() if self.captured_at else None


def discover(raw_root: Location, path_pattern: str) -> list[RawFile]:
    """Every non-hidden file under raw_root, sorted by relative path (code points, the
    order S3 lists keys in). Raises FileNotFoundError when raw_root does not exist."""
    fs, root = raw_root.filesystem()
    found = []
    try:
        for info in _listing(fs, root, raw_root.is_local):
            relative = _relative(info.path, root)
            if info.type == pafs.FileType.File and not _hidden(relative):
                found.append(RawFile.at(relative, info.size, path_pattern))
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise FileNotFoundError(f"raw_root {raw_root}: no such directory") from exc
    return sorted(found, key=lambda raw: raw.relative)


def _listing(fs: pafs.FileSystem, root: str, local: bool) -> Iterator[pafs.FileInfo]:
    """An object store's whole listing at once (a few paginated requests). A local tree
    directory by directory, as os.walk did: hidden directories and symbolic links to
    directories are not entered (a link to an ancestor would never end)."""
    if not local:
        yield from fs.get_file_info(pafs.FileSelector(root, recursive=True))
        return
    pending = [root]
    while pending:
        for info in fs.get_file_info(pafs.FileSelector(pending.pop())):
            if _enters(info):
                pending.append(info.path)
            yield info


def _enters(info: pafs.FileInfo) -> bool:
    """A local directory os.walk would have entered: not hidden, not a symbolic link."""
    directory = info.type == pafs.FileType.Directory
    return directory and not info.base_name.startswith(".") and not os.path.islink(info.path)


def _relative(path: str, root: str) -> str:
    """`path` below `root`, as the selector spells both (bucket/key on object stores)."""
    prefix = root.rstrip("/") + "/"
    if not path.startswith(prefix):
        raise ValueError(f"listing of {root!r} returned {path!r}, which is not under it")
    return path[len(prefix) :]


def _hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


def is_log_head(head: bytes, complete: bool) -> bool:
    """Whether a file starting with `head` is a broker log, as parse_capture would
    decide: text whose lines are log lines and hold no describe header, topic or JSON.
    When `head` is not the whole file its cut last line is left out."""
    if not head.strip():
        return False
    sample = head[:HEAD_BYTES]
    control = len(sample) - len(sample.translate(None, CONTROL_BYTES))
    if control > BINARY_SHARE * len(sample):
        return False
    lines = head.decode("utf-8", errors="replace").splitlines()
    if not complete and len(lines) > 1:
        lines = lines[:-1]
    return detect_kind(lines) == "coordinator_log"


def sniff(raw_root: Location, raw: RawFile) -> RawFile:
    """`raw` with is_log decided from its first 64 KiB (one ranged read)."""
    if raw.is_log is not None:
        return raw
    with _open(raw_root, raw.relative) as stream:
        head = stream.read(HEAD_BYTES)
    return replace(raw, is_log=is_log_head(head, complete=len(head) >= raw.size))


def sniff_all(raw_root: Location, files: Iterable[RawFile]) -> list[RawFile]:
    """sniff() over many files in a thread pool: on an object store each is a round trip."""
    files = list(files)
    if not files:
        return []
    raw_root.filesystem()  # made once here, not by several threads at once
    with ThreadPoolExecutor(min(SNIFF_THREADS, len(files))) as pool:
        return list(pool.map(lambda raw: sniff(raw_root, raw), files))


def is_neighbour(raw: RawFile, day: dt.date) -> bool:
    """Dated the day before or after `day`: taken for `day` only if it is a log."""
    date = raw.path_date
    return date is not None and abs((date - day).days) == 1


def with_log_kinds(raw_root: Location, files: list[RawFile], day: dt.date) -> list[RawFile]:
    """`files` with is_log decided for the ones files_for(files, day) needs it for (the
    neighbours of `day`); records already decided are not read again."""
    return with_kinds_where(raw_root, files, lambda raw: is_neighbour(raw, day))


def with_kinds_where(
    raw_root: Location, files: list[RawFile], needed: Callable[[RawFile], bool]
) -> list[RawFile]:
    """`files` with is_log decided for the undecided ones `needed` selects."""
    todo = [i for i, raw in enumerate(files) if raw.is_log is None and needed(raw)]
    result = list(files)
    for i, raw in zip(todo, sniff_all(raw_root, [files[i] for i in todo]), strict=True):
        result[i] = raw
    return result


def latest_capture_date(raw_root: Location, files: list[RawFile]) -> dt.date | None:
    """The newest path date that has a capture other than a log. Newest date first, a
    few files at a time, so that usually only a handful of heads are read."""
    for date in sorted({raw.path_date for raw in files if raw.path_date}, reverse=True):
        dated = [raw for raw in files if raw.path_date == date]
        for start in range(0, len(dated), SNIFF_THREADS):
            chunk = sniff_all(raw_root, dated[start : start + SNIFF_THREADS])
            if any(not raw.is_log for raw in chunk):
                return date
    return None


def read_capture(raw_root: Location, relative: str) -> bytes:
    """A capture's bytes, for the parse tasks."""
    with _open(raw_root, relative) as stream:
        return stream.read()


def sha256(raw_root: Location, relative: str) -> str:
    """The file's sha256, streamed: a broker log may be larger than a driver wants to hold."""
    digest = hashlib.sha256()
    with _open(raw_root, relative) as stream:
        while block := stream.read(BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def _open(raw_root: Location, relative: str) -> pa.NativeFile:
    """A sequential stream over one file; the path is spelled as discover() found it."""
    fs, root = raw_root.filesystem()
    return fs.open_input_stream(f"{root.rstrip('/')}/{relative}")
