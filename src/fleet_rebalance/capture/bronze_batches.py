"""A capture unit's rows per bronze table, as the parse tasks hand them to Spark.

Spark-free: this is the code inside the ingest's parse tasks. It reads each file of one
capture from the store, parses it, completes the members rows from the same capture's
offsets, and yields typed Arrow batches per bronze table plus one line-accounting
summary per file; the task hands the batches back to Spark (pipeline/ingest/tasks.py).

Memory. An offsets file parsed in chunks (capture/chunks.py) has its rows handed on a
chunk at a time (parse.stream_parts, parse_file_parts); once handed on, only what members
enrichment reads of them stays until the capture's end (enrichment_keys.py). A file of
the other kinds is held whole until its summary (their bulk is in logs, whose rows are
few per line).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture import store
from fleet_rebalance.capture.chunks import DEFAULT_MAX_MEMORY_MB
from fleet_rebalance.capture.compressed import DEFAULT_GUARD, Guard
from fleet_rebalance.capture.enrichment_keys import OffsetsKept, owner_groups
from fleet_rebalance.capture.members_enrichment import MEMBERS_SCHEMA
from fleet_rebalance.capture.parse import Parts, finish, stream_parts
from fleet_rebalance.capture.paths import CapturePath
from fleet_rebalance.capture.result import INCOMPLETE, MEMBERS, OFFSETS, READ_WHOLE, ParseResult
from fleet_rebalance.capture.schemas import TABLES
from fleet_rebalance.capture.stray_dates import quarantine_stray_dates
from fleet_rebalance.filesystems import Location

ARROW_BATCH_ROWS = 20_000
# The tables bulk-parsed into Arrow; members carry their assignment groups until enriched.
RECORD_SCHEMAS = {OFFSETS: TABLES[OFFSETS], MEMBERS: MEMBERS_SCHEMA}
FILE_REPORT = "file"
REASON_CHARS = 1000


FileParts = Generator[ParseResult, None, tuple[ParseResult, str | None]]
# What a capture_batches `parse` gives for a file: its result and sha256, or the parts
# of a file parsed in chunks that end with them (parse_file_parts).
Parsed = tuple[ParseResult, str | None] | FileParts


def parse_file(
    raw_root: Location,
    file: dict[str, Any],
    *,
    path_pattern: str,
    log_timezone: str | None,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    guard: Guard = DEFAULT_GUARD,
) -> tuple[ParseResult, str | None]:
    """One file's rows, and the sha256 of the very bytes they came from (as stored:
    compressed when the file is), read and parsed as a stream; parse_file_parts with
    every part left in the result."""
    return finish(
        parse_file_parts(
            raw_root,
            file,
            path_pattern=path_pattern,
            log_timezone=log_timezone,
            max_memory_mb=max_memory_mb,
            guard=guard,
        )
    )


def parse_file_parts(
    raw_root: Location,
    file: dict[str, Any],
    *,
    path_pattern: str,
    log_timezone: str | None,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    guard: Guard = DEFAULT_GUARD,
) -> FileParts:
    """parse_file a chunk at a time (parse.stream_parts), for capture_batches. `file`
    carries its path as discovery parsed it (relative, cluster, captured_at, group). A
    file that cannot be read any more (unreadable, vanished, or replaced by a FIFO or a
    link out of raw_root since the listing) is one whole-file quarantine row with the
    reason, status skipped (failed_capture when reading failed mid-way), and no sha256:
    no exception ends the task."""
    relative = file["relative"]
    path = CapturePath(file["cluster"], file["captured_at"], file["group"])
    try:
        with store.open_capture(raw_root, relative) as stream:  # read as it is parsed
            parts: Parts = stream_parts(
                relative,
                stream,
                path_pattern=path_pattern,
                log_timezone=log_timezone,
                path=path,
                max_memory_mb=max_memory_mb,
                guard=guard,
            )
            return (yield from parts)
    except store.UnreadableFile as exc:
        unread = ParseResult(kind="unknown", status=exc.status)
        unread.reject_file(exc.reason)
        return unread, None


@dataclass
class Written:
    """What a file's offsets rows written before its summary count (chunk by chunk,
    then the rest)."""

    rows: int = 0
    other_dates: int = 0
    taken: int = 0  # rows taken out of the parts, of any date, fit or not
    # The parts' accounting, which a file that fails mid-way loses with its result.
    seen: ParseResult = field(default_factory=lambda: ParseResult(kind=OFFSETS))


def capture_batches(
    files: list[dict[str, Any]],
    parse: Callable[[dict[str, Any]], Parsed],
    run_date: dt.date,
) -> Iterator[tuple[str, Any]]:
    """One capture's rows of the run date as (table, batch), and each file's summary as
    (FILE_REPORT, dict). Offsets leave file by file (a file parsed in chunks, chunk by
    chunk); members wait for the whole capture, whose offsets complete them. A file
    whose `head_kind` is "offsets" (ingest's ordering, pipeline/ingest) is no members
    file: once only such files are left, the groups whose members need owned
    partitions are known and OffsetsKept keeps only theirs."""
    parsed: list[tuple[str, ParseResult, str | None, int, int, int]] = []
    members_of: list[tuple[pa.Table, int]] = []
    narrowed: list[tuple[dict[str, Any], pa.Array]] = []  # files kept for `owners` only
    offsets_kept = OffsetsKept()
    for index, file in enumerate(files):
        relative = file["relative"]
        written = Written()
        owners = None
        if all(later.get("head_kind") == OFFSETS for later in files[index + 1 :]):
            owners = owner_groups(members for members, _ in members_of)
            narrowed.append((file, owners))
        outcome = parse(file)
        if isinstance(outcome, tuple):
            result, sha256 = outcome
        else:
            result, sha256 = yield from _offsets_by_chunk(
                outcome, file, run_date, written, offsets_kept, owners
            )
        quarantine_stray_dates(result, file["captured_at"], run_date)
        quarantine_unfit(result)
        table, other_dates = _on_date(_records_table(result, OFFSETS), run_date)
        offsets_kept.add(table, owners)
        written.rows += table.num_rows
        if written.taken:
            result = _after_written(result, written)
        # Written: the members pass needs them no more (the summary counts them).
        written.taken += sum(b.num_rows for b in result.batches.pop(OFFSETS, []))
        written.taken += len(result.rows.pop(OFFSETS, []))
        batches = table.to_batches(ARROW_BATCH_ROWS)[::-1]
        del table
        while batches:
            yield OFFSETS, batches.pop()
        parsed.append(
            (
                relative,
                result,
                sha256,
                written.rows,
                written.other_dates + other_dates,
                written.taken,
            )
        )
        members_of.append(_members_table(result, run_date))
    _owners_missed(narrowed, members_of, parse, run_date, offsets_kept)
    capture = offsets_kept.capture(members for members, _ in members_of)
    for entry, (members, other_members) in zip(parsed, members_of, strict=True):
        relative, result, sha256, offsets, other_dates, taken = entry
        if members.num_rows:
            for batch in capture.enrich(members).to_batches(ARROW_BATCH_ROWS):
                yield MEMBERS, batch
        counts = Counter({OFFSETS: offsets, MEMBERS: members.num_rows})
        other = other_dates + other_members
        for table, rows in result.rows.items():
            if table in (OFFSETS, MEMBERS):
                continue
            kept = [r for r in rows if (r.get("log_date") or r.get("capture_date")) == run_date]
            other += len(rows) - len(kept)  # another run (that date's) writes them
            batch = _arrow_rows(kept, TABLES[table])
            if batch is not None:
                counts[table] += batch.num_rows
                yield table, batch
        if result.quarantine:
            rows = [
                {**q, "source_file": relative, "capture_date": run_date} for q in result.quarantine
            ]
            counts["quarantine"] = len(rows)
            yield "quarantine", _arrow_rows(rows, TABLES["quarantine"])
        summary = _summary(relative, result, sha256, run_date, other, counts, taken)
        yield FILE_REPORT, summary


def _offsets_by_chunk(
    parts: FileParts,
    file: dict[str, Any],
    run_date: dt.date,
    written: Written,
    kept: OffsetsKept,
    owners: pa.Array | None = None,
) -> Generator[tuple[str, Any], None, tuple[ParseResult, str | None]]:
    """An offsets file's rows of each chunk but the last as (OFFSETS, batch), taken out
    of its parts as capture_batches treats a whole file's; what they count is added up
    in `written`, what enrichment reads of them in `kept` (of `owners`' groups only, when
    known). The parts of other kinds stay whole. Returns the file's result."""
    while True:
        try:
            part = next(parts)
        except StopIteration as end:
            return end.value
        if part.kind != OFFSETS:
            continue
        quarantine_stray_dates(part, file["captured_at"], run_date)
        quarantine_unfit(part)
        _account(written.seen, part)
        taken = ParseResult(
            kind=part.kind,
            rows={OFFSETS: part.rows.pop(OFFSETS, [])},
            batches={OFFSETS: part.batches.pop(OFFSETS, [])},
            common=part.common,
        )
        written.taken += taken.row_count
        table, other_dates = _on_date(_records_table(taken, OFFSETS), run_date)
        written.rows += table.num_rows
        written.other_dates += other_dates
        kept.add(table, owners)
        batches = table.to_batches(ARROW_BATCH_ROWS)[::-1]
        del part, taken, table  # not held while the next chunk is parsed
        while batches:
            yield OFFSETS, batches.pop()


def _owners_missed(
    narrowed: list[tuple[dict[str, Any], pa.Array]],
    members_of: list[tuple[pa.Table, int]],
    parse: Callable[[dict[str, Any]], Parsed],
    run_date: dt.date,
    kept: OffsetsKept,
) -> None:
    """Owned partitions of groups found to need them only after an offsets file was
    kept for fewer (a file holding a members view below its offsets view): that file's
    offsets rows read again, a chunk at a time, for those groups. Rare by ingest's
    ordering, and never a changed row."""
    wanted = owner_groups(members for members, _ in members_of)
    for file, owners in narrowed:
        missed = wanted.filter(pc.invert(pc.is_in(wanted, value_set=owners)))
        if len(missed):
            for table in _offsets_again(parse(file), file, run_date):
                kept.add(table, missed)


def _offsets_again(outcome: Parsed, file: dict[str, Any], run_date: dt.date) -> Iterator[pa.Table]:
    """A file's offsets rows of the run date, as capture_batches took them, one table per
    part (each part's rows dropped once its table is made)."""
    if isinstance(outcome, tuple):
        yield _offsets_of(outcome[0], file, run_date)
        return
    while True:
        try:
            part = next(outcome)
        except StopIteration as end:
            yield _offsets_of(end.value[0], file, run_date)
            return
        if part.kind == OFFSETS:
            yield _offsets_of(part, file, run_date)


def _offsets_of(result: ParseResult, file: dict[str, Any], run_date: dt.date) -> pa.Table:
    quarantine_stray_dates(result, file["captured_at"], run_date)
    quarantine_unfit(result)
    taken = ParseResult(
        kind=result.kind,
        rows={OFFSETS: result.rows.pop(OFFSETS, [])},
        batches={OFFSETS: result.batches.pop(OFFSETS, [])},
        common=result.common,
    )
    return _on_date(_records_table(taken, OFFSETS), run_date)[0]


def _account(seen: ParseResult, part: ParseResult) -> None:
    seen.lines += part.lines
    seen.structural += part.structural
    seen.row_lines += part.row_lines
    seen.quarantine += part.quarantine
    seen.notes.update(part.notes)


def _after_written(result: ParseResult, written: Written) -> ParseResult:
    """A file's result when some of its rows were written before it ended: as read, if
    reading failed mid-way (the lines of the chunks written stay, with the failure as a
    whole-file row standing for no line, like a cut compressed stream)."""
    if result.kind != "unknown" or result.file_reason is None:
        return result
    seen = written.seen
    read = ParseResult(
        kind=OFFSETS,
        lines=seen.lines,
        structural=seen.structural,
        row_lines=seen.row_lines,
        quarantine=list(seen.quarantine),
        status=result.status,
        notes=seen.notes,
    )
    read.notes["rows written before reading failed"] += written.rows
    read.reject_file(result.file_reason, lines=0)
    return read


def quarantine_unfit(result: ParseResult) -> None:
    """Every line with a value its table's columns cannot hold goes to quarantine with
    the reason, its rows in every table with it: a jsonl snapshot (offsets, members and
    state rows) or a log line naming several members is never stored in part. The
    parsers check every number's range and every string, so this is the net under them:
    a value is never stored as null or cut, and a bad row never fails the task."""
    unfit: dict[str, dict[int, str]] = {}
    for table, rows in result.rows.items():
        schema = RECORD_SCHEMAS.get(table, TABLES[table])
        try:
            pa.RecordBatch.from_pylist(rows, schema=schema)
            continue
        except ARROW_ERRORS:
            pass
        for row in rows:
            try:
                pa.RecordBatch.from_pylist([row], schema=schema)
            except ARROW_ERRORS as exc:
                number = row["line_number"]
                reason = f"value out of range for the table's column types: {exc}"
                text = result.text_lines[number - 1] if number <= len(result.text_lines) else ""
                unfit.setdefault(reason, {})[number] = text
    for reason, lines in unfit.items():
        result.quarantine_lines(lines, reason)


ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


def _arrow_rows(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch | None:
    """The rows (quarantine_unfit left only rows their columns hold) as one batch."""
    return pa.RecordBatch.from_pylist(rows, schema=schema) if rows else None


def _records_table(result: ParseResult, table: str) -> pa.Table:
    """A table's rows of one file, per-line rows and bulk batches alike, with the file's
    common values."""
    schema = RECORD_SCHEMAS[table]
    parts = []
    if batch := _arrow_rows(result.rows.get(table, []), schema):
        parts.append(pa.Table.from_batches([batch]))
    for batch in result.batches.get(table, []):
        columns = {
            f.name: batch.column(f.name).cast(f.type)
            if f.name in batch.schema.names
            else pa.repeat(pa.scalar(result.common.get(f.name), f.type), batch.num_rows)
            for f in schema
        }
        parts.append(pa.table(columns, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _members_table(result: ParseResult, run_date: dt.date) -> tuple[pa.Table, int]:
    """A file's members rows of the run date flagged `rebalancing` where the tool
    warned, and how many of another date were left out."""
    members, other_dates = _on_date(_records_table(result, MEMBERS), run_date)
    if members.num_rows:
        warned_groups = pa.array(sorted(result.rebalancing), pa.string())
        warned = pc.is_in(members["group_id"], warned_groups)
        members = members.set_column(
            members.schema.get_field_index("rebalancing"), "rebalancing", warned
        )
    return members, other_dates


def _on_date(table: pa.Table, run_date: dt.date) -> tuple[pa.Table, int]:
    """The rows of the run date, and how many of another date were left out."""
    if not table.num_rows:
        return table, 0
    kept = table.filter(pc.fill_null(pc.equal(table["capture_date"], run_date), False))
    return kept, table.num_rows - kept.num_rows


def _summary(
    relative: str,
    result: ParseResult,
    sha256: str | None,
    run_date: dt.date,
    other_dates: int,
    table_rows: Counter[str],
    taken: int = 0,
) -> dict[str, Any]:
    """One file's line accounting; `other_dates` counts its rows of another date left
    out, `table_rows` its rows of the run date per table, `taken` the rows written a
    chunk at a time, no longer in `result`."""
    quarantine = result.quarantine
    notes = {**result.notes, **({"rows of other dates": other_dates} if other_dates else {})}
    return {
        "source_file": relative,
        "sha256": sha256,
        "kind": result.kind,
        # A jsonl line is one group's whole snapshot: losing it leaves no partial group.
        "status": INCOMPLETE
        if result.status in READ_WHOLE and quarantine and result.kind == MEMBERS
        else result.status,
        "lines": result.lines,
        "parsed_lines": result.row_lines,
        "structural": result.structural,
        # Rows in quarantine (ingested_files.quarantined), and lines: a whole-file row
        # stands for the lines of a file refused whole, for none of an empty one.
        "quarantined": len(quarantine),
        "quarantined_lines": result.quarantined_lines,
        "file_quarantine": result.file_reason,
        "quarantine_reasons": Counter(q["reason"] for q in quarantine),
        "rows": result.row_count + taken - other_dates,
        "reconciles": result.reconciles(),
        "table_rows": {t: n for t, n in table_rows.items() if n},
        "capture_date": run_date,
        "notes": notes,
        "reason": file_reason(quarantine, notes, result.failed_groups_note),
        "failed_groups": result.failed_groups_note,
    }


def file_reason(
    quarantine: list[dict[str, Any]], notes: dict[str, int], failed_groups: str | None = None
) -> str | None:
    """What ingested_files.reason says of a file: why it was refused, or how many of its
    lines were quarantined and why, the groups its exporter failed to capture, and the
    parser's notes; None for a clean file."""
    whole = next((q["reason"] for q in quarantine if q["line_number"] is None), None)
    parts = [whole] if whole else []
    if not whole and quarantine:
        reasons = Counter(q["reason"] for q in quarantine).most_common()
        more = f" (and {len(reasons) - 1} other reason(s))" if len(reasons) > 1 else ""
        parts.append(f"{len(quarantine)} line(s) quarantined, e.g. {reasons[0][0]}{more}")
    parts += [failed_groups] if failed_groups else []
    parts += [f"{note}: {count}" for note, count in sorted(notes.items())]
    reason = "; ".join(parts)
    return (reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 3] + "...") or None
