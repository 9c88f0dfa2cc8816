"""Ingest: raw captures -> bronze Delta tables, one date (or every date) per run.

A date is re-ingested whole when any of its files is new, changed (size or sha256) or
gone, so a re-run gives identical tables and a late file adds exactly its rows; when
nothing changed the date is skipped. Files are parsed on executors, each capture's files
whole and in one task (a file's header lines give its rows their meaning; a capture's
offsets complete its members rows: capture/bronze_batches.py). Those tasks write every
bronze table's files through the Warehouse's sinks and report them; the driver commits
them, one transaction per table.

Files not read (issue 19, hostile input; DESIGN.md "Quality bars"). The listing
(capture/store.py) reports, without opening them, the entries ingest cannot or must not
read: FIFOs, sockets, devices, unreadable files, symbolic links that loop, dangle or
lead outside raw_root, links to directories, hidden entries, names that are not UTF-8,
directories that cannot be listed. Each is an ingested_files row with status `skipped`
and its reason, for its path date (every date run when its path has none), logged at
WARNING and counted in the run's summary line; the rest of the date completes. A
readable file with no valid timestamp in its path that is not a broker log is
`rejected` the same way (ingest_files.py). A file that changes between the listing and
its parse task (made unreadable, replaced by a FIFO or a link out of raw_root) is
refused by the task: `skipped` when it could not be opened, `failed_capture` when
reading failed mid-way (a capture that was there and is lost, a gap for the replay),
with a whole-file quarantine row holding only the reason. Rows of files not read have
no sha256 and no kind; they never make a date's captures look changed (only the files
read whole are compared), and when they alone differ from what was recorded, only
ingested_files is rewritten.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.bins import largest_first
from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import (
    FILE_REPORT,
    capture_batches,
    parse_file_parts,
)
from fleet_rebalance.capture.coordinator_log import UNMATCHED_GROUP_LINE
from fleet_rebalance.capture.result import OK, REJECTED, SKIPPED, accounting
from fleet_rebalance.capture.store import RawFile
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.pipeline import bronze
from fleet_rebalance.pipeline.ingest_files import Selection, rejection, select
from fleet_rebalance.storage.engine import RUN_ID_KEY
from fleet_rebalance.storage.task_writes import TaskWrite, WrittenFile
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.ingest")
INGESTED_FILES_COLUMNS = bronze.TABLES["ingested_files"].fieldNames()
INGESTED_FILES_PARTITION = bronze.partition_column("ingested_files")


class ReconciliationError(RuntimeError):
    """A file whose lines are not all accounted for: a parser bug, never ignored."""


def run(spark: SparkSession, config: Config, run_date: dt.date | None) -> dict[str, int]:
    started = time.monotonic()
    raw_root = location(config.raw_root, config.storage.options)
    files = store.survey(raw_root, config.capture.path_pattern)
    log.info(
        "found %d file(s) under %s, %d not to be read",
        sum(raw.skipped is None for raw in files),
        config.raw_root,
        sum(raw.skipped is not None for raw in files),
    )
    warehouse = Warehouse(spark, config.warehouse)
    days = [run_date] if run_date else sorted({f.path_date for f in files if f.path_date})
    recorded = _ingested_files(spark, warehouse, days)
    plan = _plan(config, raw_root, files, days, recorded)
    for row in sorted(plan.not_read.values(), key=lambda r: r["path"]):
        log.warning("%s %s: %s", row["status"], row["path"], row["reason"])
    if not plan.unread:
        log.info(
            "nothing new to ingest (%.1fs); %s",
            time.monotonic() - started,
            _not_read_counts(plan.not_read.values()),
        )
        return {}
    todo = plan.todo
    writes = _sinks(warehouse, list(todo)) if todo else {}
    summaries: list[dict[str, Any]] = []
    written: dict[str, list[WrittenFile]] = {}
    try:
        if any(todo.values()):
            summaries, written = _reports(_parse(spark, config, todo, writes).collect())
            _check_reconciliation(summaries)
        counts = _commit_bronze(summaries, writes, written)
        parsed = _parsed_rows(todo, summaries)
        counts["ingested_files"] = _write_ingested_files(
            spark,
            warehouse,
            recorded,
            [*parsed, *(r for rows in plan.unread.values() for r in rows)],
            whole_days=set(todo),
            unread_days=set(plan.unread),
        )
    except BaseException:
        for name, write in writes.items():
            write.abort(written.get(name, []))
        raise
    unreadable = [row for row in parsed if row["sha256"] is None]  # changed since the listing
    for row in unreadable:
        log.warning("%s %s: %s", row["status"], row["path"], row["reason"])
    log.info(
        "ingest of %s done in %.1fs: %s; %s",
        ", ".join(map(str, sorted(plan.unread))),
        time.monotonic() - started,
        counts,
        _not_read_counts([*plan.not_read.values(), *unreadable]),
    )
    return counts


@dataclasses.dataclass
class _Plan:
    """What a run does. `todo`: the dates re-ingested, with the files to parse;
    `unread`: the dates whose rows of files not read are written (every date of `todo`,
    and those whose captures are unchanged but not these rows); `not_read`: every file
    of the run's dates not read, by path, for the log."""

    todo: dict[dt.date, list[RawFile]] = dataclasses.field(default_factory=dict)
    unread: dict[dt.date, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    not_read: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)


def _plan(
    config: Config,
    raw_root: Location,
    files: list[RawFile],
    days: list[dt.date],
    recorded: list[dict[str, Any]],
) -> _Plan:
    plan = _Plan()
    for day in days:
        files = store.with_log_kinds(raw_root, files, day)
        chosen = select(files, day)
        if not chosen.has_captures:
            # A night with no captures at all is a broken capture pipeline, not a quiet day.
            raise FileNotFoundError(_no_captures(day, config, chosen))
        rows = _unread_rows(chosen, config.capture.path_pattern)
        plan.not_read.update({row["path"]: row for row in rows})
        before = [r for r in recorded if r["capture_date"] == day]
        if not _unchanged(chosen.taken, before, raw_root):
            plan.todo[day], plan.unread[day] = chosen.taken, rows
        elif _identities(rows) != _identities(r for r in before if r["sha256"] is None):
            plan.unread[day] = rows
            log.info("%s: captures unchanged; recording the files not read", day)
        else:
            log.info(
                "%s: %d file(s), all ingested before with the same size and sha256; skipped",
                day,
                len(chosen.taken),
            )
    return plan


def _no_captures(day: dt.date, config: Config, chosen: Selection) -> str:
    message = (
        f"no capture files for {day} under {config.raw_root} "
        f"(path_pattern {config.capture.path_pattern!r})"
    )
    if chosen.rejected:
        message += (
            f"; {len(chosen.rejected)} file(s) with no valid capture time in their path "
            f"were rejected, e.g. {chosen.rejected[0].relative!r}"
        )
    return message


def _not_read_counts(rows: Iterable[dict[str, Any]]) -> str:
    """The summary line's count of the files not read, by status (skipped, rejected)."""
    paths: dict[str, set[str]] = {SKIPPED: set(), REJECTED: set()}
    for row in rows:
        paths.setdefault(row["status"], set()).add(row["path"])
    return ", ".join(f"{len(p)} file(s) {status}" for status, p in paths.items())


def _ingested_files(
    spark: SparkSession, warehouse: Warehouse, days: list[dt.date]
) -> list[dict[str, Any]]:
    """The ingested_files rows of `days`, each with its capture_date: only those
    partitions are read."""
    if not warehouse.exists("ingested_files"):
        return []
    if warehouse.partition_columns("ingested_files") != (INGESTED_FILES_PARTITION,):
        _partition_ingested_files(spark, warehouse)
    frame = warehouse.read("ingested_files", where={INGESTED_FILES_PARTITION: days})
    return [_recorded_row(row.asDict()) for row in frame.collect()]


def _partition_ingested_files(spark: SparkSession, warehouse: Warehouse) -> None:
    """ingested_files from before it was partitioned by capture_date (read and
    rewritten whole by every run), rewritten once, partitioned, in one commit: the
    rows as they were, the columns of today's schema."""
    rows = [_recorded_row(row.asDict()) for row in warehouse.read("ingested_files").collect()]
    log.warning(
        "ingested_files is not partitioned by %s: rewriting its %d row(s) partitioned, once",
        INGESTED_FILES_PARTITION,
        len(rows),
    )
    warehouse.write(
        _ingested_files_frame(spark, rows),
        "ingested_files",
        mode="overwrite",
        partition_by=(INGESTED_FILES_PARTITION,),
        overwrite_schema=True,
    )


def _recorded_row(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored ingested_files row in today's columns. A table written before the
    reason and capture_date columns existed reads with reason null and the date of its
    captured_at (the only date a row was recorded under then)."""
    record = {name: None for name in INGESTED_FILES_COLUMNS} | stored
    if "capture_date" not in stored and record["captured_at"] is not None:
        record["capture_date"] = record["captured_at"].date()
    return record


def _ingested_files_frame(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    schema = bronze.TABLES["ingested_files"]
    ordered = sorted(rows, key=lambda r: (str(r["capture_date"]), r["path"]))
    return spark.createDataFrame(
        [tuple(r[name] for name in schema.fieldNames()) for r in ordered], schema
    )


def _unchanged(taken: list[RawFile], before: list[dict[str, Any]], raw_root: Location) -> bool:
    """Whether a date's files are the ones ingested before, byte for byte: the rows of
    the files read whole then (those with a sha256) against the files taken now. Sizes
    first: a file is hashed here only when its day may be skipped (the parse tasks hash
    what they read)."""
    read = {r["path"]: r for r in before if r["sha256"] is not None}
    if set(read) != {raw.relative for raw in taken}:
        return False  # a file is new, or gone (its rows must go too), or now unreadable
    if any(read[raw.relative]["size"] != raw.size for raw in taken):
        return False
    try:
        return all(
            read[raw.relative]["sha256"] == store.sha256(raw_root, raw.relative) for raw in taken
        )
    except store.UnreadableFile:
        return False  # changed since the listing: the parse tasks record why


def _identities(rows: Iterable[dict[str, Any]]) -> set[tuple]:
    return {(r["path"], r["size"], r["status"], r["reason"]) for r in rows}


def _unread_rows(chosen: Selection, path_pattern: str) -> list[dict[str, Any]]:
    """ingested_files rows of the date's entries that are not parsed: skipped (must not
    be read) and rejected (no valid path timestamp and not a log). They feed no table
    and no quarantine: nothing of them was read but, for the rejected, a log sniff."""
    entries = [(raw, SKIPPED, raw.skipped) for raw in chosen.skipped]
    entries += [(raw, REJECTED, rejection(raw, path_pattern)) for raw in chosen.rejected]
    return [
        _ingested_row(raw, chosen.day, status=status, reason=reason)
        for raw, status, reason in entries
    ]


def _ingested_row(raw: RawFile, day: dt.date, **values: Any) -> dict[str, Any]:
    """One ingested_files row of `raw` for `day`: a file not read unless `values` say."""
    return {
        "path": raw.relative,
        "size": raw.size,
        "sha256": None,
        "kind": None,
        "cluster": raw.cluster,
        "captured_at": raw.captured_at,
        "rows": 0,
        "quarantined": 0,
        "capture_date": day,
        **values,
    }


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
        max_memory_mb=config.capture.max_memory_mb,
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
    max_memory_mb: int,
    writes: dict[str, TaskWrite],
) -> Iterator[pa.RecordBatch]:
    """Every table's rows go to this task's files of `writes`; what leaves the task is
    its reports: one summary per file and one per file written."""
    files = {name: write.files() for name, write in writes.items()}
    parse = functools.partial(
        parse_file_parts,  # an offsets file's rows written a chunk at a time
        raw_root,
        path_pattern=path_pattern,
        log_timezone=log_timezone,
        max_memory_mb=max_memory_mb,
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
        failed_groups = s.get("failed_groups")  # the exporter's gaps (capture/jsonl.py)
        noteworthy = s["quarantined"] or s["status"] != "ok" or s["notes"] or failed_groups
        missed = s["notes"].get(UNMATCHED_GROUP_LINE)  # events of a line we cannot read
        log.log(
            logging.WARNING if missed else logging.INFO if noteworthy else logging.DEBUG,
            "%s [%s, %s]: %s; %d rows%s%s%s",
            s["source_file"],
            s["kind"],
            s["status"],
            _accounting(s),
            s["rows"],
            f"; whole file quarantined: {s['file_quarantine']}" if s.get("file_quarantine") else "",
            f"; {json.dumps(s['notes'])}" if s["notes"] else "",
            f"; {failed_groups}" if failed_groups else "",
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


def _accounting(summary: dict[str, Any]) -> str:
    """lines = parsed + quarantined + structural, in lines: a whole-file quarantine row
    counts as the lines it stands for (none for an empty file)."""
    counts = ("lines", "parsed_lines", "quarantined_lines", "structural")
    return accounting(*(summary[key] for key in counts))


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


def _parsed_rows(
    todo: dict[dt.date, list[RawFile]], summaries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """ingested_files rows of the files parsed, one per file and date it was taken for."""
    by_file = {(s["source_file"], s["capture_date"]): s for s in summaries}
    rows = []
    for day, taken in todo.items():
        for raw in taken:
            summary = by_file[(raw.relative, day.isoformat())]
            rows.append(
                _ingested_row(
                    raw,
                    day,
                    sha256=summary["sha256"],
                    kind=summary["kind"],
                    status=summary["status"],
                    reason=_reason(summary),
                    rows=summary["rows"],
                    quarantined=summary["quarantined"],
                )
            )
    return rows


def _reason(summary: dict[str, Any]) -> str | None:
    """ingested_files.reason of a parsed file: the summary's own when it has one, else
    null when ok, and the file's main quarantine reason otherwise (a whole-file row's
    reason is its only one)."""
    if "reason" in summary:
        return summary["reason"]
    reasons = summary["quarantine_reasons"]
    if summary["status"] == OK or not reasons:
        return None
    return max(reasons.items(), key=lambda item: (item[1], item[0]))[0]


def _write_ingested_files(
    spark: SparkSession,
    warehouse: Warehouse,
    recorded: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    *,
    whole_days: set[dt.date],
    unread_days: set[dt.date],
) -> int:
    """The partitions of `whole_days` and `unread_days` replaced, no other date read
    or written: `rows` replace the recorded rows of `whole_days` (re-ingested) and, for
    `unread_days` (captures unchanged), the recorded rows of files not read whole (no
    sha256). A date whose rows come out as recorded but for run_id and ingested_at is
    not committed, and keeps those (storage/unchanged.py)."""
    now = dt.datetime.now(dt.UTC)
    run_id = spark.conf.get(RUN_ID_KEY, "")
    kept = [
        r
        for r in recorded
        if r["capture_date"] in unread_days - whole_days and r["sha256"] is not None
    ]
    new = [{**r, "run_id": run_id, "ingested_at": now} for r in rows]
    table = [*kept, *new]
    warehouse.write(
        _ingested_files_frame(spark, table),
        "ingested_files",
        mode="overwrite",
        partition_by=(INGESTED_FILES_PARTITION,),
        replace_where={INGESTED_FILES_PARTITION: sorted(whole_days | unread_days)},
        per_run_columns=bronze.PER_RUN_COLUMNS["ingested_files"],
    )
    return len(table)
