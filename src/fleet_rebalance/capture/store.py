"""Raw captures on any store: list them, tell broker logs by their first bytes, read them.

Object stores go through the store's pyarrow filesystem (filesystems.Location), so the
driver lists and the executors read the same files whether raw_root is a local path or
an object store. Spark-free: the executors import it.

Hostile entries (issue 19). A local tree may hold what an object store cannot: FIFOs,
sockets, devices, symbolic links (looping, dangling, or leading out of raw_root),
unreadable files, names that are not UTF-8. The listing classifies every entry from
its lstat (and, for a link, the stat of its target) without opening anything, and
reports the ones ingest cannot or must not read with the reason (`RawFile.skipped`,
status `skipped` in ingested_files) instead of failing or blocking:
- only regular files are ever opened; a FIFO would block the open forever, a device
  may act on being opened;
- a symbolic link is read only when it resolves to a regular file inside raw_root; one
  leading outside is not followed (its target is neither read nor named); links to
  directories are not entered (a link to an ancestor would never end);
- hidden entries (a name starting with '.': an uploader's partial file, a staging
  directory) are reported, never read; a hidden directory is one entry, not entered;
- a name that is not UTF-8 is reported under an escaped spelling (b'\\xff.txt' as the
  text `\\xff.txt`), never read: no table column can hold it as it is;
- a directory that cannot be listed is one entry with the reason.
Every read checks the entry again (it may have changed since the listing) and opens it
non-blocking, refusing what fstat says is not a regular file: UnreadableFile carries
the reason and the status, `skipped` when the file could not be opened, and
`failed_capture` when reading failed mid-way (part of a capture was there and is lost).
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import BinaryIO, TypeAlias

import pyarrow as pa
import pyarrow.fs as pafs

from fleet_rebalance.capture.compressed import opened_head
from fleet_rebalance.capture.parse import text_kind
from fleet_rebalance.capture.paths import parse_capture_path
from fleet_rebalance.capture.result import FAILED_CAPTURE, SKIPPED
from fleet_rebalance.capture.text import decode
from fleet_rebalance.filesystems import Location

Stream: TypeAlias = BinaryIO | pa.NativeFile  # a local file, or an object store's

HEAD_BYTES = 1 << 16  # what parse_capture looks at to tell text from binary
BLOCK_BYTES = 1 << 20
SNIFF_THREADS = 16  # each sniff is one small ranged GET: latency-bound, not CPU-bound

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
# Directories are spelled with a trailing slash in the listing.
DIRECTORY_MARK = "/"
# Opening never waits: a FIFO swapped in after the listing opens at once and is refused.
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


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
    return sorted(found, key=lambda raw: raw.relative)


Entry = tuple[str, int | None, str | None]  # relative path, size, why it is not read
Verdict = tuple[int | None, str | None]  # size, why it is not read


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
            yield directory + DIRECTORY_MARK, None, f"cannot list the directory: {_os_reason(exc)}"
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
        return False, (_spelling(relative), None, f"cannot stat: {_os_reason(exc)}")
    directory = stat.S_ISDIR(info.st_mode)
    mark = DIRECTORY_MARK if directory else ""
    spelled = _spelling(relative)
    if spelled != relative:
        return False, (spelled + mark, None, UNDECODABLE_NAME)
    if relative.rsplit("/", 1)[-1].startswith("."):
        return False, (relative + mark, None, HIDDEN_DIRECTORY if directory else HIDDEN_FILE)
    if directory:
        return True, None
    size, why = _local_verdict(path, info, real_root)
    return False, (relative, size, why)


def _local_verdict(path: str, info: os.stat_result, real_root: str) -> Verdict:
    """(size, why not read) of a local non-directory entry from its lstat; the target's
    stat for a link. Nothing is opened."""
    if stat.S_ISLNK(info.st_mode):
        return _link_verdict(path, real_root)
    if not stat.S_ISREG(info.st_mode):
        return None, f"not a regular file ({_type_name(info.st_mode)}): never opened"
    return info.st_size, None if _permitted(path) else UNREADABLE


def _link_verdict(path: str, real_root: str) -> Verdict:
    if not _inside(os.path.realpath(path), real_root):
        return None, LINK_OUTSIDE
    try:
        target = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, LINK_LOOP
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None, LINK_DANGLING
        return None, f"symbolic link cannot be followed: {_os_reason(exc)}"
    if stat.S_ISDIR(target.st_mode):
        return None, LINK_TO_DIRECTORY
    if not stat.S_ISREG(target.st_mode):
        kind = _type_name(target.st_mode)
        return None, f"symbolic link to {kind}, not a regular file: never opened"
    return target.st_size, None if _permitted(path) else UNREADABLE


def _permitted(path: str) -> bool:
    """Whether this process may read the file, asked without opening it."""
    return os.access(path, os.R_OK)


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _type_name(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "a special file")


def _spelling(relative: str) -> str:
    """The relative path as text every table column can hold: bytes that are not UTF-8
    (os.fsdecode's surrogate escapes) written as backslash escapes."""
    return os.fsencode(relative).decode("utf-8", errors="backslashreplace")


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _relative(path: str, root: str) -> str:
    """`path` below `root`, as the selector spells both (bucket/key on object stores)."""
    prefix = root.rstrip("/") + "/"
    if not path.startswith(prefix):
        raise ValueError(f"listing of {root!r} returned {path!r}, which is not under it")
    return path[len(prefix) :]


def is_log_head(head: bytes, complete: bool) -> bool:
    """Whether a file starting with `head` is a broker log, as parse_capture would
    decide: text whose lines are log lines and hold no describe header, topic or JSON.
    When `head` is not the whole file its cut last line is left out."""
    head, complete = opened_head(head, complete, HEAD_BYTES)  # a rotated server.log.1.gz
    lines = decode(head).lines
    if not complete and len(lines) > 1:
        lines = lines[:-1]
    return text_kind(lines) == "coordinator_log"


def sniff(raw_root: Location, raw: RawFile) -> RawFile:
    """`raw` with is_log decided from its first 64 KiB (one ranged read); skipped, with
    the reason, when it cannot be read any more."""
    if raw.is_log is not None or raw.skipped is not None:
        return raw
    try:
        with _reading(raw_root, raw.relative) as stream:
            head = stream.read(HEAD_BYTES)
    except UnreadableFile as exc:
        return replace(raw, skipped=exc.reason)
    return replace(raw, is_log=is_log_head(head, complete=len(head) >= (raw.size or 0)))


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


def needs_kind(raw: RawFile, day: dt.date) -> bool:
    """Whether taking `raw` for `day` depends on its being a log: a readable file dated
    a neighbour of `day`, or with no date in its path."""
    return raw.skipped is None and (raw.path_date is None or is_neighbour(raw, day))


def with_log_kinds(raw_root: Location, files: list[RawFile], day: dt.date) -> list[RawFile]:
    """`files` with is_log decided for the ones files_for(files, day) needs it for (the
    neighbours of `day` and the undated); records already decided are not read again."""
    return with_kinds_where(raw_root, files, lambda raw: needs_kind(raw, day))


def with_kinds_where(
    raw_root: Location, files: list[RawFile], needed: Callable[[RawFile], bool]
) -> list[RawFile]:
    """`files` with is_log decided for the undecided readable ones `needed` selects."""
    todo = [
        i
        for i, raw in enumerate(files)
        if raw.is_log is None and raw.skipped is None and needed(raw)
    ]
    result = list(files)
    for i, raw in zip(todo, sniff_all(raw_root, [files[i] for i in todo]), strict=True):
        result[i] = raw
    return result


def latest_capture_date(raw_root: Location, files: list[RawFile]) -> dt.date | None:
    """The newest path date that has a readable capture other than a log. Newest date
    first, a few files at a time, so that usually only a handful of heads are read."""
    readable = [raw for raw in files if raw.skipped is None and raw.path_date]
    for date in sorted({raw.path_date for raw in readable if raw.path_date}, reverse=True):
        dated = [raw for raw in readable if raw.path_date == date]
        for start in range(0, len(dated), SNIFF_THREADS):
            chunk = sniff_all(raw_root, dated[start : start + SNIFF_THREADS])
            if any(raw.skipped is None and not raw.is_log for raw in chunk):
                return date
    return None


@contextmanager
def open_capture(raw_root: Location, relative: str) -> Iterator[Stream]:
    """A capture open for reading as a stream, for the parse tasks: an OSError while
    reading it becomes UnreadableFile (failed_capture). Raises UnreadableFile."""
    with _reading(raw_root, relative) as stream:
        yield stream


def read_capture(raw_root: Location, relative: str) -> bytes:
    """A capture's bytes, for the parse tasks. Raises UnreadableFile."""
    with _reading(raw_root, relative) as stream:
        return stream.read()


def sha256(raw_root: Location, relative: str) -> str:
    """The file's sha256, streamed: a broker log may be larger than a driver wants to
    hold. Raises UnreadableFile."""
    digest = hashlib.sha256()
    with _reading(raw_root, relative) as stream:
        while block := stream.read(BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _reading(raw_root: Location, relative: str) -> Iterator[Stream]:
    """The file open for reading; any failure as UnreadableFile: skipped when it could
    not be opened, failed_capture when reading failed mid-way."""
    stream = _open(raw_root, relative)
    try:
        with stream:
            yield stream
    except OSError as exc:
        reason = f"reading failed mid-way: {_os_reason(exc)}"
        raise UnreadableFile(relative, reason, FAILED_CAPTURE) from exc


def _open(raw_root: Location, relative: str) -> Stream:
    """A sequential stream over one file; the path is spelled as discover() found it."""
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
        raise UnreadableFile(relative, f"cannot open: {_os_reason(exc)}") from exc


def _open_local(root: str, relative: str) -> BinaryIO:
    """The entry checked again as the listing checks it (it may have changed since),
    then opened without following a link or waiting, and refused unless fstat says it
    is a regular file."""
    path = os.path.join(root, relative)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise UnreadableFile(relative, f"cannot open: {_os_reason(exc)}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise UnreadableFile(relative, "a directory since the listing: not read")
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    _, why = _local_verdict(path, info, real_root)
    if why is None and not _inside(real, real_root):
        why = "leads outside raw_root (a directory on its path was replaced by a link)"
    if why is not None:
        raise UnreadableFile(relative, why)
    try:
        fd = os.open(real, OPEN_FLAGS)
    except OSError as exc:
        raise UnreadableFile(relative, f"cannot open: {_os_reason(exc)}") from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = _type_name(mode)
        raise UnreadableFile(relative, f"not a regular file ({kind}) when opened: not read")
    return os.fdopen(fd, "rb")
