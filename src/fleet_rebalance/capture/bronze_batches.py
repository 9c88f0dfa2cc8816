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
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture import store
from fleet_rebalance.capture.members_enrichment import MEMBERS_SCHEMA, CaptureOffsets
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.paths import CapturePath
from fleet_rebalance.capture.result import MEMBERS, OFFSETS, ParseResult
from fleet_rebalance.capture.schemas import TABLES
from fleet_rebalance.filesystems import Location

ARROW_BATCH_ROWS = 20_000
# The tables bulk-parsed into Arrow; members carry their assignment groups until enriched.
RECORD_SCHEMAS = {OFFSETS: TABLES[OFFSETS], MEMBERS: MEMBERS_SCHEMA}
FILE_REPORT = "file"


def parse_file(
    raw_root: Location, file: dict[str, Any], *, path_pattern: str, log_timezone: str | None
) -> tuple[ParseResult, str]:
    """One file's rows, and the sha256 of the very bytes they came from; `file` carries
    its path as discovery parsed it (relative, cluster, captured_at, group)."""
    relative = file["relative"]
    data = store.read_capture(raw_root, relative)
    path = CapturePath(file["cluster"], file["captured_at"], file["group"])
    result = parse_capture(
        relative, data, path_pattern=path_pattern, log_timezone=log_timezone, path=path
    )
    return result, hashlib.sha256(data).hexdigest()


def capture_batches(
    files: list[dict[str, Any]],
    parse: Callable[[dict[str, Any]], tuple[ParseResult, str]],
    run_date: dt.date,
) -> Iterator[tuple[str, Any]]:
    """One capture's rows of the run date as (table, batch), and each file's summary as
    (FILE_REPORT, dict). Offsets leave file by file; members wait for the whole capture,
    whose offsets complete them."""
    parsed: list[tuple[str, ParseResult, str, int, int]] = []
    tables: list[pa.Table] = []
    for file in files:
        relative = file["relative"]
        result, sha256 = parse(file)
        table, other_dates = _on_date(_records_table(result, OFFSETS), run_date)
        tables.append(table)
        for batch in table.to_batches(ARROW_BATCH_ROWS):
            yield OFFSETS, batch
        parsed.append((relative, result, sha256, table.num_rows, other_dates))
    capture = CaptureOffsets.of(tables)
    for relative, result, sha256, offsets, other_dates in parsed:
        members, other_members = _on_date(_records_table(result, MEMBERS), run_date)
        if members.num_rows:
            for batch in capture.enrich(members).to_batches(ARROW_BATCH_ROWS):
                yield MEMBERS, batch
        counts = Counter({OFFSETS: offsets, MEMBERS: members.num_rows})
        other = other_dates + other_members
        unfit: list[dict[str, Any]] = []
        for table, rows in result.rows.items():
            if table in (OFFSETS, MEMBERS):
                continue
            kept = [r for r in rows if (r.get("log_date") or r.get("capture_date")) == run_date]
            other += len(rows) - len(kept)  # another run (that date's) writes them
            batch, rejected = _arrow_rows(kept, TABLES[table])
            unfit += [{**_quarantined(row, result.kind), "reason": why} for row, why in rejected]
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
    rows: list[dict[str, Any]], schema: pa.Schema
) -> tuple[pa.RecordBatch | None, list[tuple[dict[str, Any], str]]]:
    """The rows as one batch, and those whose values the table's types cannot hold
    (an id past 2^31) with the reason: they are quarantined, never stored as null."""
    if not rows:
        return None, []
    try:
        return pa.RecordBatch.from_pylist(rows, schema=schema), []
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    fit, unfit = [], []
    for row in rows:
        try:
            pa.RecordBatch.from_pylist([row], schema=schema)
            fit.append(row)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            unfit.append((row, f"value out of range for the table's column types: {exc}"))
    return (pa.RecordBatch.from_pylist(fit, schema=schema) if fit else None), unfit


def _quarantined(row: dict[str, Any], kind: str) -> dict[str, Any]:
    return {"line_number": row.get("line_number"), "line": row.get("line") or "", "kind": kind}


def _records_table(result: ParseResult, table: str) -> pa.Table:
    """A table's rows of one file, per-line rows and bulk batches alike, with the file's
    common values."""
    schema = RECORD_SCHEMAS[table]
    parts = []
    if rows := result.rows.get(table):
        parts.append(pa.Table.from_pylist(rows, schema=schema))
    for batch in result.batches.get(table, []):
        columns = {
            f.name: batch.column(f.name).cast(f.type)
            if f.name in batch.schema.names
            else pa.repeat(pa.scalar(result.common.get(f.name), f.type), batch.num_rows)
            for f in schema
        }
        parts.append(pa.table(columns, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _on_date(table: pa.Table, run_date: dt.date) -> tuple[pa.Table, int]:
    """The rows of the run date, and how many of another date were left out."""
    if not table.num_rows:
        return table, 0
    kept = table.filter(pc.fill_null(pc.equal(table["capture_date"], run_date), False))
    return kept, table.num_rows - kept.num_rows


def _summary(
    relative: str,
    result: ParseResult,
    sha256: str,
    run_date: dt.date,
    other_dates: int,
    table_rows: Counter[str],
    unfit: list[dict[str, Any]],
) -> dict[str, Any]:
    """One file's line accounting; `other_dates` counts its rows of another date left
    out, `table_rows` its rows of the run date per table, `unfit` the rows quarantined
    for values their columns cannot hold (their lines move from parsed to quarantined)."""
    unfit_lines = len({q["line_number"] for q in unfit})
    quarantine = [*result.quarantine, *unfit]
    return {
        "source_file": relative,
        "sha256": sha256,
        "kind": result.kind,
        "status": result.status,
        "lines": result.lines,
        "parsed_lines": result.row_lines - unfit_lines,
        "structural": result.structural,
        "quarantined": len(quarantine),
        "quarantine_reasons": Counter(q["reason"] for q in quarantine),
        "rows": result.row_count - other_dates - len(unfit),
        "reconciles": result.reconciles(),
        "table_rows": {t: n for t, n in table_rows.items() if n},
        "capture_date": run_date,
        "notes": {
            **result.notes,
            **({"rows of other dates": other_dates} if other_dates else {}),
        },
    }
