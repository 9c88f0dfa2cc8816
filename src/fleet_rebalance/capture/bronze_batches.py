"""A capture unit's rows per bronze table, as the parse tasks write them.

Spark-free: this is the code inside the ingest's parse tasks. It reads each file of one
capture from the store, parses it, completes the members rows from the same capture's
offsets, and yields typed Arrow batches per bronze table plus one line-accounting
summary per file; the task hands the batches to the tables' sinks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture import store
from fleet_rebalance.capture.members_enrichment import MEMBERS_SCHEMA, CaptureOffsets
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.paths import CapturePath
from fleet_rebalance.capture.result import INCOMPLETE, MEMBERS, OFFSETS, OK, ParseResult
from fleet_rebalance.capture.schemas import TABLES
from fleet_rebalance.filesystems import Location

ARROW_BATCH_ROWS = 20_000
# The tables bulk-parsed into Arrow; members carry their assignment groups until enriched.
RECORD_SCHEMAS = {OFFSETS: TABLES[OFFSETS], MEMBERS: MEMBERS_SCHEMA}
FILE_REPORT = "file"
REASON_CHARS = 1000


def parse_file(
    raw_root: Location, file: dict[str, Any], *, path_pattern: str, log_timezone: str | None
) -> tuple[ParseResult, str | None]:
    """One file's rows, and the sha256 of the very bytes they came from; `file` carries
    its path as discovery parsed it (relative, cluster, captured_at, group). A file that
    cannot be read any more (unreadable, vanished, or replaced by a FIFO or a link out
    of raw_root since the listing) is one whole-file quarantine row with the reason,
    status skipped (failed_capture when reading failed mid-way), and no sha256: no
    exception ends the task."""
    relative = file["relative"]
    try:
        data = store.read_capture(raw_root, relative)
    except store.UnreadableFile as exc:
        unread = ParseResult(kind="unknown", status=exc.status)
        unread.reject_file(exc.reason)
        return unread, None
    path = CapturePath(file["cluster"], file["captured_at"], file["group"])
    result = parse_capture(
        relative, data, path_pattern=path_pattern, log_timezone=log_timezone, path=path
    )
    return result, hashlib.sha256(data).hexdigest()


def capture_batches(
    files: list[dict[str, Any]],
    parse: Callable[[dict[str, Any]], tuple[ParseResult, str | None]],
    run_date: dt.date,
) -> Iterator[tuple[str, Any]]:
    """One capture's rows of the run date as (table, batch), and each file's summary as
    (FILE_REPORT, dict). Offsets leave file by file; members wait for the whole capture,
    whose offsets complete them."""
    parsed: list[tuple[str, ParseResult, str | None, int, int, list[dict[str, Any]]]] = []
    tables: list[pa.Table] = []
    for file in files:
        relative = file["relative"]
        result, sha256 = parse(file)
        records, unfit = _records_table(result, OFFSETS)
        table, other_dates = _on_date(records, run_date)
        tables.append(table)
        for batch in table.to_batches(ARROW_BATCH_ROWS):
            yield OFFSETS, batch
        parsed.append((relative, result, sha256, table.num_rows, other_dates, unfit))
    capture = CaptureOffsets.of(tables)
    for relative, result, sha256, offsets, other_dates, unfit in parsed:
        records, unfit_members = _records_table(result, MEMBERS)
        unfit += unfit_members
        members, other_members = _on_date(records, run_date)
        if members.num_rows:
            warned_groups = pa.array(sorted(result.rebalancing), pa.string())
            warned = pc.is_in(members["group_id"], warned_groups)
            members = members.set_column(
                members.schema.get_field_index("rebalancing"), "rebalancing", warned
            )
            for batch in capture.enrich(members).to_batches(ARROW_BATCH_ROWS):
                yield MEMBERS, batch
        counts = Counter({OFFSETS: offsets, MEMBERS: members.num_rows})
        other = other_dates + other_members
        for table, rows in result.rows.items():
            if table in (OFFSETS, MEMBERS):
                continue
            kept = [r for r in rows if (r.get("log_date") or r.get("capture_date")) == run_date]
            other += len(rows) - len(kept)  # another run (that date's) writes them
            batch, rejected = _arrow_rows(kept, TABLES[table], result.kind, result.text_lines)
            unfit += rejected
            if batch is not None:
                counts[table] += batch.num_rows
                yield table, batch
        quarantine = [*result.quarantine, *unfit]
        if quarantine:
            rows = [{**q, "source_file": relative, "capture_date": run_date} for q in quarantine]
            counts["quarantine"] = len(rows)
            yield "quarantine", _arrow_rows(rows, TABLES["quarantine"])[0]
        yield FILE_REPORT, _summary(relative, result, sha256, run_date, other, counts, unfit)


def _arrow_rows(
    rows: list[dict[str, Any]], schema: pa.Schema, kind: str = "", lines: Sequence[str] = ()
) -> tuple[pa.RecordBatch | None, list[dict[str, Any]]]:
    """The rows as one batch, and quarantine rows for those whose values the table's
    types cannot hold. The parsers check every number's range, so this is the net under
    them: a value is never stored as null or cut, and a bad row never fails the task."""
    if not rows:
        return None, []
    try:
        return pa.RecordBatch.from_pylist(rows, schema=schema), []
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        pass
    fit, unfit = [], []
    for row in rows:
        try:
            pa.RecordBatch.from_pylist([row], schema=schema)
            fit.append(row)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as exc:
            number = row.get("line_number")
            unfit.append(
                {
                    "line_number": number,
                    "line": lines[number - 1] if number and number <= len(lines) else "",
                    "kind": kind,
                    "reason": f"value out of range for the table's column types: {exc}"[:500],
                }
            )
    return (pa.RecordBatch.from_pylist(fit, schema=schema) if fit else None), unfit


def _records_table(result: ParseResult, table: str) -> tuple[pa.Table, list[dict[str, Any]]]:
    """A table's rows of one file, per-line rows and bulk batches alike, with the file's
    common values; and quarantine rows for the per-line rows its types cannot hold."""
    schema = RECORD_SCHEMAS[table]
    parts = []
    unfit: list[dict[str, Any]] = []
    if rows := result.rows.get(table):
        batch, unfit = _arrow_rows(rows, schema, result.kind, result.text_lines)
        if batch is not None:
            parts.append(pa.Table.from_batches([batch]))
    for batch in result.batches.get(table, []):
        columns = {
            f.name: batch.column(f.name).cast(f.type)
            if f.name in batch.schema.names
            else pa.repeat(pa.scalar(result.common.get(f.name), f.type), batch.num_rows)
            for f in schema
        }
        parts.append(pa.table(columns, schema=schema))
    return (pa.concat_tables(parts) if parts else schema.empty_table()), unfit


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
    unfit: list[dict[str, Any]],
) -> dict[str, Any]:
    """One file's line accounting; `other_dates` counts its rows of another date left
    out, `table_rows` its rows of the run date per table, `unfit` the rows quarantined
    for values their columns cannot hold (their lines move from parsed to quarantined)."""
    unfit = list({q["line_number"]: q for q in reversed(unfit)}.values())  # one per line
    quarantine = [*result.quarantine, *unfit]
    notes = {**result.notes, **({"rows of other dates": other_dates} if other_dates else {})}
    return {
        "source_file": relative,
        "sha256": sha256,
        "kind": result.kind,
        # A jsonl line is one group's whole snapshot: losing it leaves no partial group.
        "status": INCOMPLETE
        if result.status == OK and quarantine and result.kind == MEMBERS
        else result.status,
        "lines": result.lines,
        "parsed_lines": result.row_lines - len(unfit),
        "structural": result.structural,
        # Rows in quarantine (ingested_files.quarantined), and lines: a whole-file row
        # stands for the lines of a file refused whole, for none of an empty one.
        "quarantined": len(quarantine),
        "quarantined_lines": result.quarantined_lines + len(unfit),
        "file_quarantine": result.file_reason,
        "quarantine_reasons": Counter(q["reason"] for q in quarantine),
        "rows": result.row_count - other_dates - len(unfit),
        "reconciles": result.reconciles(),
        "table_rows": {t: n for t, n in table_rows.items() if n},
        "capture_date": run_date,
        "notes": notes,
        "reason": file_reason(quarantine, notes),
    }


def file_reason(quarantine: list[dict[str, Any]], notes: dict[str, int]) -> str | None:
    """What ingested_files.reason says of a file: why it was refused, or how many of its
    lines were quarantined and why, and the parser's notes; None for a clean file."""
    whole = next((q["reason"] for q in quarantine if q["line_number"] is None), None)
    parts = [whole] if whole else []
    if not whole and quarantine:
        reasons = Counter(q["reason"] for q in quarantine).most_common()
        more = f" (and {len(reasons) - 1} other reason(s))" if len(reasons) > 1 else ""
        parts.append(f"{len(quarantine)} line(s) quarantined, e.g. {reasons[0][0]}{more}")
    parts += [f"{note}: {count}" for note, count in sorted(notes.items())]
    reason = "; ".join(parts)
    return (reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 3] + "...") or None
