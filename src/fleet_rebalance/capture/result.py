"""What parsing one file yields: rows per bronze table, quarantine rows, line accounting."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

# Bronze table each capture kind feeds (jsonl feeds three).
OFFSETS, MEMBERS, GROUP_STATES, TOPIC_PARTITIONS, COORDINATOR_EVENTS = (
    "offsets",
    "members",
    "group_states",
    "topic_partitions",
    "coordinator_events",
)
# The optional broker views (cross-zone traffic): racks, replicas' sizes.
BROKERS, PARTITION_SIZES = "brokers", "partition_sizes"

OK, FAILED_CAPTURE, REJECTED = "ok", "failed_capture", "rejected"
# A members capture that lost lines: the replay treats the groups it lost lines of as
# a gap in it (DESIGN.md, ingested_files).
INCOMPLETE = "incomplete"
# A file ingest cannot or must not read (a FIFO, a link out of raw_root, unreadable).
SKIPPED = "skipped"
# Read whole, from zstd frames without a checksum: complete, but nothing could verify
# their bytes (a flipped byte decodes to other rows); its rows are stored as read.
UNVERIFIED = "unverified"
# Statuses whose rows are the whole file as read (a members file quarantining a line
# becomes incomplete).
READ_WHOLE = (OK, UNVERIFIED)


@dataclass
class ParseResult:
    """Every line of a file is a row, a quarantined line or a structural line."""

    kind: str
    lines: int = 0
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    structural: int = 0
    # Lines that produced a row; a line can feed several tables (jsonl), counted once.
    row_lines: int = 0
    # Lines the whole-file quarantine row (line_number null) stands for.
    file_lines: int = 0
    status: str = OK
    notes: Counter = field(default_factory=Counter)
    # Bulk rows as Arrow batches (the offsets view's fast path); the file's common values
    # (cluster, captured_at, capture_date, source_file) are in `common`, not repeated.
    batches: dict[str, list[Any]] = field(default_factory=dict)
    common: dict[str, Any] = field(default_factory=dict)
    # Groups the tool warned it described mid-rebalance (members.rebalancing).
    rebalancing: set[str] = field(default_factory=set)
    # The decoded lines, for quarantining a row after parsing (bronze_batches).
    text_lines: list[str] = field(default_factory=list, repr=False)
    # Groups the exporter says it failed to capture (jsonl `capture_error`), with its
    # error: a gap for each at that capture, no rows (capture/jsonl.py).
    failed_groups: dict[str, str] = field(default_factory=dict)
    # The file shows the 3.8/3.9 offsets layout, whose last row ends without a newline
    # as printed (FORMATS 1.2): its last line is no cut for wanting one.
    open_end: bool = False

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.rows.setdefault(table, []).append(row)

    def reject(self, line_number: int, line: str, reason: str) -> None:
        self._quarantine(line_number, line, reason)

    def reject_foreign(self, line_number: int, line: str, failure: str | None, view: str) -> None:
        """A line that is none of a view's: the tool's failure (`failure`, or a stack
        trace: the capture failed) or a line that is `view`'s in no release."""
        if failure is not None:
            self.reject(line_number, line, f"tool error: {failure}")
            self.status = FAILED_CAPTURE
        else:
            self.reject(line_number, line, f"not a {view} line")

    def reject_file(self, reason: str, line: str = "", *, lines: int | None = None) -> None:
        """One quarantine row for the whole file (line_number null), standing for `lines`
        of its lines: by default all of them, as such a file is not parsed further. It
        is one row of the quarantine table but that many quarantined lines, so the line
        accounting holds (an empty file: 0 lines, one file row)."""
        self.file_lines = self.lines if lines is None else lines
        self._quarantine(None, line, reason)

    def _quarantine(self, line_number: int | None, line: str, reason: str) -> None:
        self.quarantine.append(
            {"line_number": line_number, "line": line, "reason": _capped(reason), "kind": self.kind}
        )

    def quarantine_lines(self, lines: dict[int, str], reason: str) -> None:
        """Move the rows of `lines` (number -> text as it should be shown) to quarantine
        after parsing; lines the parser quarantined itself keep their reason."""
        moved: set[int] = set()
        for table, rows in self.rows.items():
            kept = [r for r in rows if r.get("line_number") not in lines]
            moved |= {r["line_number"] for r in rows if r.get("line_number") in lines}
            self.rows[table] = kept
        wanted = pa.array(sorted(lines), pa.int32())
        for batches in self.batches.values():
            for i, batch in enumerate(batches):
                hit = pc.is_in(batch["line_number"], wanted)
                moved |= set(batch["line_number"].filter(hit).to_pylist())
                batches[i] = batch.filter(pc.invert(hit))
        for row in self.quarantine:
            if row["line_number"] in lines:
                row["line"] = lines[row["line_number"]]
        for number in sorted(moved):
            self.reject(number, lines[number], reason)
        self.row_lines -= len(moved)
        self.quarantine.sort(key=lambda q: q["line_number"] or 0)

    @property
    def row_count(self) -> int:
        return sum(len(v) for v in self.rows.values()) + sum(
            b.num_rows for batches in self.batches.values() for b in batches
        )

    def records(self, table: str) -> list[dict[str, Any]]:
        """Every row of a table as dicts, whichever way it was stored."""
        rows = list(self.rows.get(table, []))
        for batch in self.batches.get(table, []):
            rows += [{**row, **self.common} for row in batch.to_pylist()]
        return sorted(rows, key=lambda r: r.get("line_number") or 0)

    @property
    def quarantined_lines(self) -> int:
        """Lines in quarantine: one per line's row, and those a whole-file row stands for."""
        return sum(q["line_number"] is not None for q in self.quarantine) + self.file_lines

    @property
    def file_reason(self) -> str | None:
        """The reason of the whole-file quarantine row, if there is one."""
        return next((q["reason"] for q in self.quarantine if q["line_number"] is None), None)

    @property
    def failed_groups_note(self) -> str | None:
        """ingested_files.reason's word on the groups the exporter failed to capture:
        `2 groups the exporter failed to capture: a (COORDINATOR_NOT_AVAILABLE), b (...)`,
        a few named, the rest counted."""
        if not self.failed_groups:
            return None
        named = sorted(self.failed_groups.items())
        shown = ", ".join(
            f"{group} ({_error_head(error)})" for group, error in named[:GROUPS_NAMED]
        )
        more = f" and {len(named) - GROUPS_NAMED} more" if len(named) > GROUPS_NAMED else ""
        noun = "group" if len(named) == 1 else "groups"
        return f"{len(named)} {noun} the exporter failed to capture: {shown}{more}"

    def reconciles(self) -> bool:
        return self.lines == self.row_lines + self.quarantined_lines + self.structural

    def reconciliation(self) -> str:
        return accounting(self.lines, self.row_lines, self.quarantined_lines, self.structural)


def accounting(lines: int, parsed: int, quarantined: int, structural: int) -> str:
    """The identity every file's lines must satisfy, as the run log prints it."""
    return f"{lines} lines = {parsed} parsed + {quarantined} quarantined + {structural} structural"


REASON_CHARS = 500  # a reason may quote a value; a value may be a megabyte of garbage
GROUPS_NAMED = 5  # failed groups named in a file's reason; the rest are counted
ERROR_HEAD_CHARS = 40


def _error_head(error: str) -> str:
    """An error's name: librdkafka's `COORDINATOR_NOT_AVAILABLE: Broker: ...` up to
    its colon, any other text cut short."""
    head = error.split(": ", 1)[0]
    return head if len(head) <= ERROR_HEAD_CHARS else head[: ERROR_HEAD_CHARS - 3] + "..."


def _capped(reason: str) -> str:
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 3] + "..."
