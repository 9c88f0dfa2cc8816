"""The parse tasks: captures grouped into units and units into tasks by size; each
task parses its captures (capture/bronze_batches.py) and hands every bronze table's rows
back to Spark as packed Arrow batches tagged with their table (pipeline/tagged.py), with
one report per file; the driver then writes each table through delta-spark, one commit
per table."""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

from fleet_rebalance.bin_packing import largest_first
from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import (
    FILE_REPORT,
    capture_batches,
    parse_file_parts,
)
from fleet_rebalance.capture.compressed import Guard, opened_head
from fleet_rebalance.capture.parse import text_kind
from fleet_rebalance.capture.result import OFFSETS
from fleet_rebalance.capture.store import RawFile
from fleet_rebalance.capture.text import decode
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.pipeline import bronze, tagged
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.ingest")

# The bronze tables the parse tasks fill (ingested_files is the driver's ledger).
PARSED = {name: schema for name, schema in bronze.TABLES.items() if name != "ingested_files"}
_ARROW = {name: to_arrow_schema(schema) for name, schema in PARSED.items()}
# A file's report (capture/bronze_batches.py's summary) rides in the stage as JSON.
REPORT_BODY = "_report"
# One capture unit as the parse tasks get it: each file with its path as discovery
# parsed it, so no task parses a path again.
_UNIT_SCHEMA = (
    "files array<struct<relative: string, cluster: string, captured_at: timestamp, "
    "`group`: string>>, run_date date"
)


def parse_captures(
    spark: SparkSession, config: Config, todo: dict[dt.date, list[RawFile]]
) -> DataFrame:
    """The parse stage over the files of `todo` (tagged.PACKED): every bronze table's
    rows and one report per file, each tagged with its table."""
    units = [(u, day) for day, chosen in todo.items() for u in capture_units(chosen)]
    parse = functools.partial(
        parse_partition,
        raw_root=location(config.raw_root, config.storage.options),
        path_pattern=config.capture.path_pattern,
        log_timezone=config.capture.log_timezone,
        max_memory_mb=config.capture.max_memory_mb,
        guard=Guard.of(config.capture.max_inflated_mb, config.capture.max_inflation_ratio),
    )
    # Whole captures per task (a capture's headers give its rows meaning, and its members
    # are completed from its offsets), several per task: hundreds of tiny tasks would
    # cost more in scheduling than the parsing itself. Captures differ in size by 100x
    # (offsets views vs broker logs), so tasks are filled by size.
    slices = balanced_slices(units, 4 * spark.sparkContext.defaultParallelism)
    log.info(
        "parsing %d file(s) of %d capture(s) in %d task(s)",
        sum(len(u) for u, _ in units),
        len(units),
        len(slices),
    )
    captures = spark.sparkContext.parallelize(slices, len(slices)).flatMap(lambda chunk: chunk)
    return spark.createDataFrame(captures, _UNIT_SCHEMA).mapInArrow(parse, tagged.PACKED)


def capture_units(files: list[RawFile]) -> list[list[RawFile]]:
    """The files of one capture (same cluster and path timestamp) together; files known
    to be broker logs and files without a timestamp alone."""
    units: dict[tuple, list[RawFile]] = {}
    for raw in files:
        key: tuple = (raw.relative,)
        if raw.is_log is not True and raw.captured_at is not None:
            key = (raw.cluster, raw.captured_at)
        units.setdefault(key, []).append(raw)
    return list(units.values())


def balanced_slices(
    units: list[tuple[list[RawFile], dt.date]], count: int
) -> list[list[tuple[list[tuple], dt.date]]]:
    """Largest capture first into the lightest slice: no task waits on two big captures
    while another holds only logs."""
    sized = [
        (sum(f.size or 0 for f in unit), [_unit_file(f) for f in unit], day) for unit, day in units
    ]
    slices = largest_first(
        sized, count, size=lambda t: t[0], tiebreak=lambda t: [f[0] for f in t[1]]
    )
    return [[(files, day) for _, files, day in chunk] for chunk in slices]


def _unit_file(raw: RawFile) -> tuple:
    return (raw.relative, raw.cluster, raw.captured_at, raw.group)


def members_first(raw_root: Location, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A capture's files in the order its parse task reads them: the files whose head
    shows an offsets view last, each marked `head_kind` "offsets". Members rows are
    completed from the capture's offsets, so what of those is kept until the capture's
    end depends on the members: read first, they keep it to the groups that need it
    (capture/enrichment_keys.py). Only an order: a file's content still decides."""
    if len(files) < 2:
        return files
    kinds = [head_kind(raw_root, file["relative"]) for file in files]
    marked = [{**f, "head_kind": k} for f, k in zip(files, kinds, strict=True)]
    return sorted(marked, key=lambda file: file["head_kind"] == OFFSETS)


def head_kind(raw_root: Location, relative: str) -> str | None:
    """The kind a file's first 64 KiB show (as store.is_log_head reads them), None when
    they show none or the file cannot be read (its parse reports why)."""
    try:
        with store.open_capture(raw_root, relative) as stream:
            head = stream.read(store.HEAD_BYTES)
    except store.UnreadableFile:
        return None
    head, complete = opened_head(head, len(head) < store.HEAD_BYTES, store.HEAD_BYTES)
    lines = decode(head).lines
    if not complete and len(lines) > 1:
        lines = lines[:-1]  # cut where the head ends
    return text_kind(lines)


def parse_partition(
    batches: Iterator[pa.RecordBatch],
    *,
    raw_root: Location,
    path_pattern: str,
    log_timezone: str,
    max_memory_mb: int,
    guard: Guard,
) -> Iterator[pa.RecordBatch]:
    """Every table's rows, a parsed chunk at a time (an offsets file's rows come a
    chunk at a time: memory stays bounded), then this task's file reports."""
    parse = functools.partial(
        parse_file_parts,
        raw_root,
        path_pattern=path_pattern,
        log_timezone=log_timezone,
        max_memory_mb=max_memory_mb,
        guard=guard,
    )
    reports: list[str] = []
    for batch in batches:
        for task in batch.to_pylist():
            capture = members_first(raw_root, task["files"])
            for table, out in capture_batches(capture, parse, task["run_date"]):
                if table == FILE_REPORT:
                    reports.append(_json(out))
                elif out.num_rows:
                    yield tagged.packed(tagged.conformed(out, _ARROW[table]), table)
    if reports:
        body = pa.record_batch([pa.array(reports, pa.string())], names=[REPORT_BODY])
        yield tagged.packed(body, FILE_REPORT)


def _json(row: dict[str, Any]) -> str:
    return json.dumps(row, default=_json_value, separators=(",", ":"))


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def file_reports(stage: DataFrame) -> list[str]:
    """The stage's file reports (JSON); the first action on the persisted stage, so
    it parses every file once."""
    rows = stage.where(F.col(tagged.TABLE) == FILE_REPORT).select(tagged.BATCH).collect()
    blobs = pa.array([row[0] for row in rows], pa.binary())
    return [report for batch in tagged.unpacked(blobs) for report in batch.column(0).to_pylist()]


def write_bronze(
    warehouse: Warehouse,
    stage: DataFrame | None,
    summaries: list[dict[str, Any]],
    days: list[dt.date],
) -> dict[str, int]:
    """One commit per table, in the tables' order, replacing the partitions of `days`
    (a table whose rows are gone from a date loses them there); rows counted from the
    summaries."""
    rows: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for summary in summaries:
        rows.update(summary["table_rows"])
        reasons.update(summary["quarantine_reasons"])
    if stage is None:
        stage = warehouse.spark.createDataFrame([], tagged.PACKED)
    frames = tagged.table_frames(stage, PARSED, rows, warehouse.write_tasks)
    for name, frame in frames.items():
        warehouse.replace_dates(frame, name, bronze.partition_column(name), days, rows[name])
    for reason, count in reasons.most_common(10):
        log.info("quarantined %d line(s): %s", count, reason)
    return {name: rows[name] for name in PARSED}
