"""Ingest: raw captures -> bronze Delta tables, one date (or every date) per run.

A date is re-ingested whole when any of its files is new, changed (size or sha256) or
gone, so a re-run gives identical tables and a late file adds exactly its rows; when
nothing changed the date is skipped. Files are parsed on executors, each capture's files
whole and in one task (a file's header lines give its rows their meaning; a capture's
offsets complete its members rows: capture/bronze_batches.py). Those tasks write every
bronze table's files through the Warehouse's sinks and report them; the driver commits
them, one transaction per table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.bins import largest_first
from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches, parse_file
from fleet_rebalance.capture.store import RawFile
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.pipeline import bronze
from fleet_rebalance.pipeline.ingest_files import files_for
from fleet_rebalance.storage.engine import RUN_ID_KEY
from fleet_rebalance.storage.task_writes import TaskWrite, WrittenFile
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.ingest")


class ReconciliationError(RuntimeError):
    """A file whose lines are not all accounted for: a parser bug, never ignored."""


def run(spark: SparkSession, config: Config, run_date: dt.date | None) -> dict[str, int]:
    started = time.monotonic()
    raw_root = location(config.raw_root, config.storage.options)
    files = store.discover(raw_root, config.capture.path_pattern)
    log.info("found %d file(s) under %s", len(files), config.raw_root)
    warehouse = Warehouse(spark, config.warehouse)
    ingested = _ingested_files(warehouse)
    days = [run_date] if run_date else sorted({f.path_date for f in files if f.path_date})
    todo: dict[dt.date, list[RawFile]] = {}
    for day in days:
        files = store.with_log_kinds(raw_root, files, day)
        chosen = files_for(files, day)
        if not chosen:
            # A night with no captures at all is a broken capture pipeline, not a quiet day.
            raise FileNotFoundError(
                f"no capture files for {day} under {config.raw_root} "
                f"(path_pattern {config.capture.path_pattern!r})"
            )
        if _unchanged(day, chosen, ingested, raw_root):
            log.info(
                "%s: %d file(s), all ingested before with the same size and sha256; skipped",
                day,
                len(chosen),
            )
            continue
        todo[day] = chosen
    if not todo:
        log.info("nothing new to ingest (%.1fs)", time.monotonic() - started)
        return {}
    writes = _sinks(warehouse, list(todo))
    written: dict[str, list[WrittenFile]] = {}
    try:
        summaries, written = _reports(_parse(spark, config, todo, writes).collect())
        _check_reconciliation(summaries)
        counts = _commit_bronze(summaries, writes, written)
        counts["ingested_files"] = _write_ingested_files(spark, config, todo, summaries, ingested)
    except BaseException:
        for name, write in writes.items():
            write.abort(written.get(name, []))
        raise
    log.info(
        "ingest of %s done in %.1fs: %s",
        ", ".join(map(str, todo)),
        time.monotonic() - started,
        counts,
    )
    return counts


def _ingested_files(warehouse: Warehouse) -> dict[str, dict[str, Any]]:
    if not warehouse.exists("ingested_files"):
        return {}
    return {r["path"]: r.asDict() for r in warehouse.read("ingested_files").collect()}


def _unchanged(
    day: dt.date, chosen: list[RawFile], ingested: dict[str, dict[str, Any]], raw_root: Location
) -> bool:
    """Sizes first: a file is hashed here only when its day may be skipped (the parse
    tasks hash what they read)."""
    before = {
        p
        for p, r in ingested.items()
        if r["captured_at"] is not None and r["captured_at"].date() == day
    }
    if before - {f.relative for f in chosen}:
        return False  # a file of that day is gone: its rows must go too
    if not all((r := ingested.get(f.relative)) is not None and r["size"] == f.size for f in chosen):
        return False
    return all(ingested[f.relative]["sha256"] == store.sha256(raw_root, f.relative) for f in chosen)


def _sinks(warehouse: Warehouse, days: list[dt.date]) -> dict[str, TaskWrite]:
    """Every bronze table a capture feeds is written by the parse tasks themselves, as
    typed Arrow batches: no capture row crosses into the JVM and back (see
    storage/task_writes.py); the driver commits what the tasks report."""
    writes = {}
    for name in bronze.TABLES:
        if name == "ingested_files":
            continue
        column = bronze.partition_column(name)
        writes[name] = warehouse.sink(
            name,
            bronze.TABLES[name],
            mode="overwrite",
            partition_by=(column,),
            replace_where={column: days},
        )
    return writes


def _parse(
    spark: SparkSession,
    config: Config,
    todo: dict[dt.date, list[RawFile]],
    writes: dict[str, TaskWrite],
) -> DataFrame:
    units = [(u, day) for day, chosen in todo.items() for u in capture_units(chosen)]
    parse = functools.partial(
        _parse_partition,
        raw_root=location(config.raw_root, config.storage.options),
        path_pattern=config.capture.path_pattern,
        log_timezone=config.capture.log_timezone,
        writes=writes,
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
    return spark.createDataFrame(captures, _UNIT_SCHEMA).mapInArrow(parse, REPORT_SCHEMA)


# One capture unit as the parse tasks get it: each file with its path as discovery
# parsed it, so no task parses a path again.
_UNIT_SCHEMA = (
    "files array<struct<relative: string, cluster: string, captured_at: timestamp, "
    "`group`: string>>, run_date date"
)


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
    sized = [(sum(f.size for f in unit), [_unit_file(f) for f in unit], day) for unit, day in units]
    slices = largest_first(
        sized, count, size=lambda t: t[0], tiebreak=lambda t: [f[0] for f in t[1]]
    )
    return [[(files, day) for _, files, day in chunk] for chunk in slices]


def _unit_file(raw: RawFile) -> tuple:
    return (raw.relative, raw.cluster, raw.captured_at, raw.group)


def _parse_partition(
    batches: Iterator[pa.RecordBatch],
    *,
    raw_root: Location,
    path_pattern: str,
    log_timezone: str,
    writes: dict[str, TaskWrite],
) -> Iterator[pa.RecordBatch]:
    """Every table's rows go to this task's files of `writes`; what leaves the task is
    its reports: one summary per file and one per file written."""
    files = {name: write.files() for name, write in writes.items()}
    parse = functools.partial(
        parse_file, raw_root, path_pattern=path_pattern, log_timezone=log_timezone
    )
    reports: list[tuple[str, str]] = []
    try:
        for batch in batches:
            for task in batch.to_pylist():
                for table, out in capture_batches(task["files"], parse, task["run_date"]):
                    if table == FILE_REPORT:
                        reports.append((FILE_REPORT, _json(out)))
                    else:
                        files[table].write(out)
        reports += [
            (WRITTEN_REPORT, _json({"table": name, "file": dataclasses.asdict(written)}))
            for name, task_files in files.items()
            for written in task_files.close()
        ]
    except BaseException:
        for task_files in files.values():
            task_files.discard()
        raise
    yield pa.RecordBatch.from_arrays(
        [pa.array([k for k, _ in reports], pa.string()), pa.array([r for _, r in reports])],
        schema=REPORT_ARROW_SCHEMA,
    )


# What the parse stage returns: its reports, small (the rows went into the tables' files).
WRITTEN_REPORT = "written"
REPORT_SCHEMA = "report string, body string"
REPORT_ARROW_SCHEMA = pa.schema([("report", pa.string()), ("body", pa.string())])


def _json(row: dict[str, Any]) -> str:
    return json.dumps(row, default=_json_value, separators=(",", ":"))


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _reports(rows: list) -> tuple[list[dict[str, Any]], dict[str, list[WrittenFile]]]:
    """The parse stage's reports: file summaries, and the files written per table."""
    summaries: list[dict[str, Any]] = []
    written: dict[str, list[WrittenFile]] = {}
    for row in rows:
        body = json.loads(row["body"])
        if row["report"] == FILE_REPORT:
            summaries.append(body)
        else:
            written.setdefault(body["table"], []).append(WrittenFile(**body["file"]))
    return summaries, written


def _check_reconciliation(summaries: list[dict[str, Any]]) -> None:
    broken = [s for s in summaries if not s["reconciles"]]
    for s in sorted(summaries, key=lambda s: s["source_file"]):
        noteworthy = s["quarantined"] or s["status"] != "ok" or s["notes"]
        log.log(
            logging.INFO if noteworthy else logging.DEBUG,
            "%s [%s, %s]: %d lines = %d parsed + %d quarantined + %d structural; %d rows%s",
            s["source_file"],
            s["kind"],
            s["status"],
            s["lines"],
            s["parsed_lines"],
            s["quarantined"],
            s["structural"],
            s["rows"],
            f"; {json.dumps(s['notes'])}" if s["notes"] else "",
        )
    statuses = Counter(s["status"] for s in summaries)
    log.info(
        "files parsed: %d (%s)",
        len(summaries),
        ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
    )
    if broken:
        names = ", ".join(s["source_file"] for s in broken[:5])
        raise ReconciliationError(
            f"{len(broken)} file(s) do not reconcile (lines != parsed + "
            f"quarantined + structural): {names}"
        )


def _commit_bronze(
    summaries: list[dict[str, Any]],
    writes: dict[str, TaskWrite],
    written: dict[str, list[WrittenFile]],
) -> dict[str, int]:
    """One commit per table, in the tables' order; rows counted from the summaries."""
    rows: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for summary in summaries:
        rows.update(summary["table_rows"])
        reasons.update(summary["quarantine_reasons"])
    for name, write in writes.items():
        write.commit(written.get(name, []))
    for reason, count in reasons.most_common(10):
        log.info("quarantined %d line(s): %s", count, reason)
    return {name: rows[name] for name in writes}


def _write_ingested_files(
    spark: SparkSession,
    config: Config,
    todo: dict[dt.date, list[RawFile]],
    summaries: list[dict[str, Any]],
    ingested: dict[str, dict[str, Any]],
) -> int:
    """A small table, rewritten whole: this run's files replace their earlier rows."""
    by_file = {s["source_file"]: s for s in summaries}
    now = dt.datetime.now(dt.UTC)
    run_id = spark.conf.get(RUN_ID_KEY, "")
    done_days = set(todo)
    rows = {
        p: r
        for p, r in ingested.items()
        if r["captured_at"] is None or r["captured_at"].date() not in done_days
    }
    for day, chosen in todo.items():
        for raw in chosen:
            summary = by_file[raw.relative]
            previous = rows.get(raw.relative)
            rows[raw.relative] = {
                "path": raw.relative,
                "size": raw.size,
                "sha256": summary["sha256"],
                "kind": summary["kind"],
                "cluster": raw.cluster,
                "captured_at": raw.captured_at
                or (previous or {}).get("captured_at")
                or dt.datetime.combine(day, dt.time(), dt.UTC),
                "status": summary["status"],
                "rows": summary["rows"],
                "quarantined": summary["quarantined"],
                "run_id": run_id,
                "ingested_at": now,
            }
    frame = spark.createDataFrame(list(rows.values()), bronze.TABLES["ingested_files"])
    Warehouse(spark, config.warehouse).write(frame, "ingested_files", mode="overwrite")
    return len(rows)
