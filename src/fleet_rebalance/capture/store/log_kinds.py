"""Which raw files are broker logs, told by their first bytes (one ranged read each, many
at once: on an object store each is a round trip), read only for the files whose choice
for a date depends on it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from fleet_rebalance.capture.compressed import opened_head
from fleet_rebalance.capture.parse import text_kind
from fleet_rebalance.capture.store.entries import RawFile, UnreadableFile
from fleet_rebalance.capture.store.reading import open_capture
from fleet_rebalance.capture.text import decode
from fleet_rebalance.filesystems import Location

HEAD_BYTES = 1 << 16  # what parse_capture looks at to tell text from binary
SNIFF_THREADS = 16  # each sniff is one small ranged GET: latency-bound, not CPU-bound


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
        with open_capture(raw_root, raw.relative) as stream:
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
