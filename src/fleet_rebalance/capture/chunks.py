"""A large file parsed a chunk of lines at a time, so a parse task's memory is bounded.

The parsers take a list of lines; a file's list costs about ten times its size (a str
per line, the Arrow copies of the describe views), so a 2 GB broker log cannot be one
list. Lines are gathered into chunks of at most `Budget.chunk_chars` characters, from
capture.max_memory_mb; a file that fits in one chunk is parsed exactly as a whole file.
Each further chunk goes to the same parser with the same context, and its result is
merged into the file's with its line numbers moved to the file's.

Where a chunk may end. Log and jsonl lines stand alone. A describe view's rows take
their meaning from the header above them, a topics partition line from its topic line:
a chunk ends before its last such line, so the next chunk starts with it; when a block
is longer than a chunk, its header is put in front of the next chunk again and taken
out of the accounting (its structural line and notes are counted once). One thing a
chunk does not see: the layouts without GROUP column (0.10.2 - 2.2) take their group
from a tool message that names one group in the whole file, looked for per chunk;
those releases describe one group per run, in files far smaller than a chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture.brokers import is_brokers_line
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.describe import HEADER_WORDS, header_view
from fleet_rebalance.capture.result import OK, ParseResult
from fleet_rebalance.capture.text import BLANKS, Text
from fleet_rebalance.capture.topics import is_topics_line

DEFAULT_MAX_MEMORY_MB = 512
# A parse task holds about this many bytes per character of the chunk it parses
# (measured with benchmarks/large_inputs.py: lines as str, describe's Arrow copies,
# the rows made of them).
BYTES_PER_CHAR = 12
LINE_SHARE = 4  # the longest line read whole is a quarter of a chunk
# What a line costs besides its characters (its str, list slot, Arrow offsets and the
# per-line arrays of describe), in characters: a chunk of empty lines is not millions.
LINE_CHARS = 8
SHOWN_CHARS = 500  # of a cut line, in its quarantine row

Parser = Callable[[list[str], ParseResult, ParseContext], None]
Boundary = Callable[[str], bool]


@dataclass(frozen=True)
class Budget:
    chunk_chars: int
    longest_line: int

    @classmethod
    def of(cls, max_memory_mb: int) -> Budget:
        chunk = max(max_memory_mb, 1) * (1 << 20) // BYTES_PER_CHAR
        return cls(chunk, chunk // LINE_SHARE)


@dataclass
class Chunk:
    start: int  # the file's number of the chunk's first line (1-based)
    lines: list[str]
    undecodable: dict[int, str] = field(default_factory=dict)  # chunk's line numbers
    cut: set[int] = field(default_factory=set)
    encoding: str = "utf-8"


class Chunks:
    """A LineStream's Texts regrouped into chunks of about `limit` characters; each
    chunk ends before its last `boundary` line (set once the kind is known)."""

    def __init__(self, texts: Iterator[Text], limit: int) -> None:
        self.texts, self.limit = texts, limit
        self.boundary: Boundary | None = None
        self.start = 1
        self.last_line: str | None = None
        self.encoding = "utf-8"
        self._lines: list[str] = []
        self._bad: dict[int, str] = {}
        self._cut: set[int] = set()
        self._peeked: Text | None = None
        self._ended = False

    def next(self) -> Chunk | None:
        # The previous chunk's Arrow arrays are freed by now, but the allocator keeps
        # their pages (mimalloc: ~150 MiB per chunk of a big offsets file) and would
        # add them to this chunk's peak: handed back first.
        pa.default_memory_pool().release_unused()
        size = sum(map(len, self._lines)) + LINE_CHARS * len(self._lines)
        while size < self.limit and (text := self._take()) is not None:
            base = len(self._lines)
            self._lines += text.lines
            self._bad.update({base + n: line for n, line in text.undecodable.items()})
            self._cut |= {base + n for n in text.cut}
            size += sum(map(len, text.lines)) + LINE_CHARS * len(text.lines)
        if not self._lines:
            return None
        end = len(self._lines)
        if self.boundary is not None and self.more_input():
            end = last_boundary_index(self._lines, self.boundary) or end
        chunk = Chunk(
            self.start,
            self._lines[:end],
            {n: line for n, line in self._bad.items() if n <= end},
            {n for n in self._cut if n <= end},
            self.encoding,
        )
        self._lines = self._lines[end:]
        self._bad = {n - end: line for n, line in self._bad.items() if n > end}
        self._cut = {n - end for n in self._cut if n > end}
        self.start += end
        return chunk

    def more(self) -> bool:
        """Whether lines are left after the chunks taken so far."""
        return bool(self._lines) or self.more_input()

    def more_input(self) -> bool:
        if self._peeked is None and not self._ended:
            self._peeked = next(self.texts, None)
            self._ended = self._peeked is None
        return self._peeked is not None

    def count_rest(self) -> int:
        """The lines left, read and counted but not kept (a file refused whole)."""
        count = len(self._lines)
        self._lines, self._bad, self._cut = [], {}, set()
        while (text := self._take()) is not None:
            count += len(text.lines)
        return count

    def _take(self) -> Text | None:
        if not self.more_input():
            return None
        text, self._peeked = self._peeked, None
        if text is not None and text.lines:
            self.last_line, self.encoding = text.lines[-1], text.encoding
        return text


def _describe_header(line: str) -> bool:
    return line.lstrip(BLANKS).startswith(HEADER_WORDS) and header_view(line) is not None


def _topic_line(line: str) -> bool:
    return "PartitionCount" in line and is_topics_line(line)


def boundary_of(kind: str) -> Boundary | None:
    """The lines a chunk of this kind should start with: those that give the lines
    below them their meaning; None when every line stands alone."""
    if kind in ("offsets", "members", "state"):
        return _describe_header
    if kind == "topics":
        return _topic_line
    if kind == "brokers":
        return is_brokers_line
    return None


def last_boundary_index(lines: list[str], boundary: Boundary) -> int | None:
    """The index of the last boundary line after the first line, or None."""
    for index in range(len(lines) - 1, 0, -1):
        if boundary(lines[index]):
            return index
    return None


def last_boundary(lines: list[str], boundary: Boundary | None) -> str | None:
    """The last boundary line of `lines` (the first one included), or None."""
    if boundary is None:
        return None
    index = last_boundary_index(lines, boundary)
    if index is None:
        return lines[0] if lines and boundary(lines[0]) else None
    return lines[index]


def parse_chunk(
    chunk: Chunk,
    carried: str | None,
    parser: Parser,
    context: ParseContext,
    kind: str,
) -> tuple[ParseResult, str | None]:
    """One chunk's result, numbered from its first line, and the boundary line the next
    chunk carries. A chunk that does not start with a boundary line gets `carried`,
    the one above it, in front; that line is taken out of the result again."""
    boundary = boundary_of(kind)
    lead = carried is not None and boundary is not None and not boundary(chunk.lines[0])
    lines = [carried, *chunk.lines] if lead and carried is not None else chunk.lines
    part = ParseResult(kind=kind, lines=len(lines))
    parser(lines, part, context)
    if lead and carried is not None:
        alone = ParseResult(kind=kind, lines=1)
        parser([carried], alone, context)
        part.structural -= alone.structural
        part.notes.subtract(alone.notes)
        part.notes = +part.notes  # counts at zero dropped
        merged = ParseResult(kind=kind, status=part.status, common=part.common)
        merge(merged, part, -1)
        merged.lines -= 1
        part = merged
    quarantine_read_damage(part, chunk)
    return part, last_boundary(lines, boundary)


def quarantine_read_damage(result: ParseResult, chunk: Chunk) -> None:
    """Rows of lines with undecodable bytes, or cut at the longest line read, moved to
    quarantine with the reason (chunk's line numbers = the result's)."""
    if chunk.undecodable:
        result.quarantine_lines(
            chunk.undecodable, f"undecodable bytes: not {chunk.encoding} text (shown as \\xNN)"
        )
    if chunk.cut:
        longest = max(len(chunk.lines[n - 1]) for n in chunk.cut)
        reason = (
            f"line longer than {longest} characters (capture.max_memory_mb): only its start read"
        )
        result.quarantine_lines({n: chunk.lines[n - 1][:SHOWN_CHARS] for n in chunk.cut}, reason)
        result.notes[reason] += len(chunk.cut)


def merge(into: ParseResult, part: ParseResult, offset: int) -> None:
    """`part`, parsed from lines numbered from 1, added to `into` as lines offset+1..."""
    into.lines += part.lines
    into.structural += part.structural
    into.row_lines += part.row_lines
    into.file_lines += part.file_lines
    for table, rows in part.rows.items():
        for row in rows:
            if row.get("line_number") is not None:
                row["line_number"] += offset
        into.rows.setdefault(table, []).extend(rows)
    for row in part.quarantine:
        if row["line_number"] is not None:
            row["line_number"] += offset
        into.quarantine.append(row)
    for table, batches in part.batches.items():
        into.batches.setdefault(table, []).extend(_renumbered(b, offset) for b in batches)
    into.notes.update(part.notes)
    into.rebalancing |= part.rebalancing
    into.failed_groups.update(part.failed_groups)
    into.open_end |= part.open_end
    into.common = into.common or part.common
    if into.status == OK:
        into.status = part.status


def _renumbered(batch: pa.RecordBatch, offset: int) -> pa.RecordBatch:
    if not offset or "line_number" not in batch.schema.names:
        return batch
    index = batch.schema.get_field_index("line_number")
    column = batch.column(index)
    moved = pc.add(column, pa.scalar(offset, column.type))
    return batch.set_column(index, batch.schema.field(index), moved)
