"""One capture file -> ParseResult: decompress, decode, recognise the kind from content,
parse; a chunk at a time for a file too large to hold (chunks.py)."""

from __future__ import annotations

import io
import itertools
import tempfile
from collections import Counter
from collections.abc import Generator
from typing import Literal, TypeVar

from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.brokers import is_brokers_line, parse_brokers
from fleet_rebalance.capture.chunks import (
    DEFAULT_MAX_MEMORY_MB,
    Budget,
    Chunk,
    Chunks,
    Parser,
    boundary_of,
    last_boundary,
    merge,
    parse_chunk,
    quarantine_read_damage,
)
from fleet_rebalance.capture.compressed import (
    DEFAULT_GUARD,
    Guard,
    Readable,
    Source,
    Verified,
    compression,
    missing_module,
)
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.coordinator_log import is_log_line, parse_coordinator_log
from fleet_rebalance.capture.describe import header_view, parse_describe
from fleet_rebalance.capture.jsonl import parse_jsonl
from fleet_rebalance.capture.log_dirs import is_log_dirs_line, parse_log_dirs
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN, CapturePath, parse_capture_path
from fleet_rebalance.capture.result import (
    FAILED_CAPTURE,
    INCOMPLETE,
    OK,
    REJECTED,
    UNVERIFIED,
    ParseResult,
)
from fleet_rebalance.capture.text import BINARY_SHARE, LineStream, control_share
from fleet_rebalance.capture.topics import is_topics_line, parse_topics

Done = TypeVar("Done")
LOG_HEAD = 200  # lines a broker log is recognised by
CaptureKind = Literal[
    "offsets", "members", "state", "topics", "coordinator_log", "jsonl", "brokers", "log_dirs"
]


def detect_kind(text_lines: list[str]) -> CaptureKind | None:
    """The kind of the file's first line that names one; a broker log's when none does
    and its first LOG_HEAD lines hold a log4j line. A log4j line names no other kind, whatever
    words its message holds (and a log's every line is then looked at once, not by every
    view's test)."""
    log_head = False  # a log4j line among the first LOG_HEAD
    for number, line in enumerate(text_lines):
        stripped = line.strip()
        if not stripped:
            continue
        if is_log_line(line):
            log_head = log_head or number < LOG_HEAD
            continue
        header = header_view(line)
        if header is not None:
            return header[0]
        if is_topics_line(line):
            return "topics"
        if is_brokers_line(line):
            return "brokers"
        if is_log_dirs_line(line):
            return "log_dirs"
        if stripped.startswith("{"):
            return "jsonl"
    return "coordinator_log" if log_head else None


def text_kind(text_lines: list[str]) -> CaptureKind | None:
    """The kind parse_capture would give these lines, or None for an empty or a binary
    file or unrecognised content (store.is_log_head's question, on a file's head)."""
    if not any(line.strip() for line in text_lines) or _binary(*control_share(text_lines)):
        return None
    return detect_kind(text_lines)


def _binary(control: int, total: int) -> bool:
    return control > BINARY_SHARE * total


def parse_capture(
    relative: str,
    data: bytes,
    *,
    path_pattern: str = DEFAULT_PATH_PATTERN,
    log_timezone: str | None = None,
    path: CapturePath | None = None,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    guard: Guard = DEFAULT_GUARD,
) -> ParseResult:
    """Parse one file held in memory (parse_stream's result for its bytes)."""
    return parse_stream(
        relative,
        io.BytesIO(data),
        path_pattern=path_pattern,
        log_timezone=log_timezone,
        path=path,
        max_memory_mb=max_memory_mb,
        guard=guard,
    )[0]


def parse_stream(
    relative: str,
    stream: Readable,
    *,
    path_pattern: str = DEFAULT_PATH_PATTERN,
    log_timezone: str | None = None,
    path: CapturePath | None = None,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    guard: Guard = DEFAULT_GUARD,
) -> tuple[ParseResult, str]:
    """Parse one file as it is read, and the sha256 of its bytes as stored (compressed
    when it is). Never raises for bad content (it becomes quarantine rows); an OSError
    of `stream` passes through. `path` is the file's path as discovery parsed it (else
    parsed here). A gzip or zstd file is decompressed as it is read; a file larger than
    one chunk (chunks.py, from `max_memory_mb`) is parsed a chunk at a time."""
    return finish(
        stream_parts(
            relative,
            stream,
            path_pattern=path_pattern,
            log_timezone=log_timezone,
            path=path,
            max_memory_mb=max_memory_mb,
            guard=guard,
        )
    )


Parts = Generator[ParseResult, None, tuple[ParseResult, str]]


def stream_parts(
    relative: str,
    stream: Readable,
    *,
    path_pattern: str = DEFAULT_PATH_PATTERN,
    log_timezone: str | None = None,
    path: CapturePath | None = None,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    guard: Guard = DEFAULT_GUARD,
) -> Parts:
    """parse_stream a chunk at a time, so its caller can write a big file's rows as they
    come: of a file parsed in chunks, yields each chunk's result but the last one's
    (numbered as the file's lines) before it joins the file's; whatever the caller takes
    out of a part is not in the file's result, returned with the sha256 at the end. The
    last chunk is never handed out: the end of a damaged stream may still quarantine its
    last line."""
    source = Source(stream)
    blocks = source.blocks()
    first = next(blocks, b"")
    method = compression(first)
    refused = missing_module(method)
    raw = itertools.chain([first], blocks)
    budget = Budget.of(max_memory_mb)
    with tempfile.SpooledTemporaryFile(max_size=budget.chunk_chars // SPOOL_SHARE) as spool:
        verified = None
        if method is not None and refused is None:
            verified = Verified(raw, method, guard, spool)
            refused = verified.refused
        if refused is not None:
            source.drain()
            result = ParseResult(kind="unknown", status=REJECTED)
            result.reject_file(refused, lines=0)
            return result, source.sha256()
        lines = LineStream(verified.text() if verified is not None else raw, budget.longest_line)
        chunks = Chunks(iter(lines), budget.chunk_chars)
        result = yield from _parse_chunks(relative, chunks, lines, path, path_pattern, log_timezone)
    source.drain()
    problem = verified.problem if verified is not None else None
    if verified is not None:
        result.notes[f"read {method}-compressed"] += 1
        if problem is not None:
            _damaged(result, problem)
    if lines.unterminated and chunks.last_line is not None and result.lines:
        _unterminated(result, chunks.last_line, problem)
    if verified is not None and verified.check.unchecked and result.status == OK:
        result.status = UNVERIFIED
        result.notes[UNCHECKED_FRAMES] += verified.check.unchecked
    return result, source.sha256()


def finish(parts: Generator[ParseResult, None, Done]) -> Done:
    """What a parts generator returns, every part left in the result."""
    while True:
        try:
            next(parts)
        except StopIteration as end:
            return end.value


def _parse_chunks(
    relative: str,
    chunks: Chunks,
    stream: LineStream,
    path: CapturePath | None,
    path_pattern: str,
    log_timezone: str | None,
) -> Generator[ParseResult, None, ParseResult]:
    """The first chunk decides the kind (and refuses the file) as a whole file would;
    each further one is parsed with the same parser and merged (chunks.py). Every chunk
    but the last is yielded before it is merged (stream_parts)."""
    first = chunks.next()
    if first is None:
        result = ParseResult(kind="unknown", status=FAILED_CAPTURE)
        result.reject_file("empty capture file (failed capture: a gap, not 'no groups')", lines=0)
        return result
    result, reader = _parse_first(relative, first, path, path_pattern, log_timezone)
    if reader is None:
        refused_lines = result.lines
        rest = chunks.count_rest()
        result.lines += rest
        if result.file_lines == refused_lines and refused_lines:
            result.file_lines += rest  # the whole-file row stands for every line
        else:
            result.structural += rest
        return result
    parser, context = reader
    chunks.boundary = boundary_of(result.kind)
    if chunks.more():
        result.text_lines = []  # not kept for a file parsed in chunks (memory)
        result.notes[f"parsed in chunks of {chunks.limit} characters"] += 1
    carried = last_boundary(first.lines, chunks.boundary)
    del first  # a chunk's lines are not kept while the next is read (nor its rows)
    if chunks.more():
        yield result  # the first chunk's rows: the result holds only them so far
    while (chunk := chunks.next()) is not None:
        part, carried = parse_chunk(chunk, carried, parser, context, result.kind)
        offset = chunk.start - 1
        del chunk
        if chunks.more():
            numbered = ParseResult(kind=part.kind, status=part.status, common=part.common)
            merge(numbered, part, offset)
            del part
            yield numbered
            merge(result, numbered, 0)
            del numbered
        else:
            merge(result, part, offset)
            del part
    if stream.encoding != "utf-8" or stream.bom:
        result.notes[f"decoded as {stream.encoding} (byte-order mark)"] += 1
    return result


def _parse_first(
    relative: str,
    chunk: Chunk,
    path: CapturePath | None,
    path_pattern: str,
    log_timezone: str | None,
) -> tuple[ParseResult, tuple[Parser, ParseContext] | None]:
    """The first chunk's result, with the parser and context for the next chunks; none
    when the file is refused (empty, binary, unrecognised, no capture time)."""
    text_lines = chunk.lines
    if not any(line.strip() for line in text_lines):
        blank = len(text_lines)
        result = ParseResult(kind="unknown", lines=blank, structural=blank, status=FAILED_CAPTURE)
        result.reject_file("empty capture file (failed capture: a gap, not 'no groups')", lines=0)
        return result, None
    control, total = control_share(text_lines)
    if _binary(control, total):
        result = ParseResult(kind="unknown", lines=len(text_lines), status=REJECTED)
        result.reject_file(f"not a text capture: {control} control characters in the first {total}")
        return result, None
    kind = detect_kind(text_lines)
    path = path or parse_capture_path(relative, path_pattern)
    if kind is None and msg.only_messages(text_lines):
        # A group with nothing to tabulate (Empty without offsets, Dead, no such group).
        result = ParseResult(kind="unknown", lines=len(text_lines), structural=len(text_lines))
        result.notes["no table: only the tool's messages"] += 1
        return result, None
    if kind is None:
        failed = any(msg.tool_error(line.strip()) for line in text_lines)
        result = ParseResult(
            kind="unknown", lines=len(text_lines), status=FAILED_CAPTURE if failed else REJECTED
        )
        result.reject_file(
            "tool error, no capture content (failed capture)"
            if failed
            else "unrecognised content: no describe header, topic, log or JSON line",
            text_lines[0][:500] if text_lines else "",
        )
        return result, None
    result = ParseResult(kind=kind, lines=len(text_lines), text_lines=text_lines)
    if kind != "coordinator_log" and path.captured_at is None:
        result.status = REJECTED
        result.reject_file(
            f"no capture time in the path {relative!r} (expected e.g. 2026-11-20T0910Z)"
        )
        return result, None
    context: ParseContext = {
        "group": path.group,
        "log_timezone": log_timezone,
        "common": {
            "cluster": path.cluster,
            "captured_at": path.captured_at,
            "capture_date": path.captured_at.date() if path.captured_at else None,
            "source_file": relative,
        },
    }
    parser = PARSERS.get(kind, parse_describe)
    parser(text_lines, result, context)
    quarantine_read_damage(result, chunk)
    return result, (parser, context)


def _damaged(result: ParseResult, problem: str) -> None:
    """A compressed stream cut or damaged: the lines of its verified part stay, the file
    is incomplete (a capture that was there, lost in part or whole), and one quarantine
    row for the file (standing for no line) names the damage."""
    if result.lines == 0:  # not "empty": nothing of it could be verified
        result.quarantine, result.notes, result.status = [], Counter(), INCOMPLETE
    elif result.status == OK:
        result.status = INCOMPLETE
    if result.file_reason is None:
        result.reject_file(problem, lines=0)
    else:
        result.notes[problem] += 1


def _unterminated(result: ParseResult, last_line: str, problem: str | None) -> None:
    """The last line without its line end is cut (a file still being written, a copy
    cut short, a damaged stream's verified part ending mid-line): its rows are
    quarantined, in every tabular view, whose last value a cut shortens unseen. Only
    the 3.8/3.9 offsets view ends its last row so as printed (ParseResult.open_end),
    when the file shows that layout. A log line ends with its `(logger)` and a JSON
    line with its closing brace: their readers quarantine a cut one themselves, and a
    whole one may end a file (JSON Lines allows it)."""
    if problem is None and (result.open_end or result.kind in ENDS_ITSELF):
        return
    reason = f"cut where the verified part ends ({problem})" if problem else UNTERMINATED
    result.quarantine_lines({result.lines: last_line}, reason)


UNTERMINATED = (
    "last line without its line end: cut short (a file still being written or copied), "
    "its rows not stored; a 3.8/3.9 offsets view of one group ends so too, and cannot "
    "be told from a cut"
)
ENDS_ITSELF = ("coordinator_log", "jsonl", "log_dirs")
UNCHECKED_FRAMES = "zstd frames without a checksum (their rows cannot be verified)"
SPOOL_SHARE = 16  # a compressed file's stored bytes held in memory: 1/16 of a chunk


PARSERS: dict[str, Parser] = {
    "topics": parse_topics,
    "coordinator_log": parse_coordinator_log,
    "jsonl": parse_jsonl,
    "brokers": parse_brokers,
    "log_dirs": parse_log_dirs,
}
