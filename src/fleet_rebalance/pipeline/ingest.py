"""Ingest: raw captures -> bronze Delta tables, one date (or every date) per run.

A date is re-ingested whole when any of its files is new, changed (size or sha256) or
gone, so a re-run gives identical tables and a late file adds exactly its rows; when
nothing changed the date is skipped. Files are parsed on executors, one whole file per
task (a capture's header lines give its rows their meaning).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.capture.paths import parse_capture_path
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze
from fleet_rebalance.pipeline.ingest_files import RawFile, discover, files_for, sha256_of
from fleet_rebalance.pipeline.members_enrichment import (
    with_inferred_subscriptions,
    with_resolved_topicless_assignments,
)
from fleet_rebalance.storage import read_table, write_table
from fleet_rebalance.storage.engine import RUN_ID_KEY

log = logging.getLogger("fleet_rebalance.ingest")
ARROW_BATCH_ROWS = 20_000


class ReconciliationError(RuntimeError):
    """A file whose lines are not all accounted for: a parser bug, never ignored."""


def run(spark: SparkSession, config: Config, run_date: dt.date | None) -> dict[str, int]:
    started = time.monotonic()
    files = discover(config.raw_root, config.capture.path_pattern)
    log.info("found %d file(s) under %s", len(files), config.raw_root)
    ingested = _ingested_files(spark, config)
    days = [run_date] if run_date else sorted({f.path_date for f in files if f.path_date})
    todo: dict[dt.date, list[RawFile]] = {}
    hashes: dict[str, str] = {}
    for day in days:
        chosen = files_for(files, day)
        for raw in chosen:
            hashes.setdefault(raw.relative, sha256_of(Path(config.raw_root) / raw.relative))
        if _unchanged(day, chosen, hashes, ingested):
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
    parsed = _parse(spark, config, todo).persist()
    try:
        summaries = _check_reconciliation(parsed)
        counts = _write_bronze(parsed, config, list(todo))
        counts["ingested_files"] = _write_ingested_files(
            spark, config, todo, hashes, summaries, ingested
        )
    finally:
        parsed.unpersist()
    log.info(
        "ingest of %s done in %.1fs: %s",
        ", ".join(map(str, todo)),
        time.monotonic() - started,
        counts,
    )
    return counts


def _ingested_files(spark: SparkSession, config: Config) -> dict[str, dict[str, Any]]:
    path = config.table_path("ingested_files")
    if not (Path(path) / "_delta_log").exists():
        return {}
    return {r["path"]: r.asDict() for r in read_table(spark, path).collect()}


def _unchanged(
    day: dt.date, chosen: list[RawFile], hashes: dict[str, str], ingested: dict[str, dict[str, Any]]
) -> bool:
    before = {
        p
        for p, r in ingested.items()
        if r["captured_at"] is not None and r["captured_at"].date() == day
    }
    if before - {f.relative for f in chosen}:
        return False  # a file of that day is gone: its rows must go too
    return all(
        (r := ingested.get(f.relative)) is not None
        and r["size"] == f.size
        and r["sha256"] == hashes[f.relative]
        for f in chosen
    )


def _parse(spark: SparkSession, config: Config, todo: dict[dt.date, list[RawFile]]) -> DataFrame:
    tasks = [(f.relative, day) for day, chosen in todo.items() for f in chosen]
    files = spark.createDataFrame(tasks, "relative string, run_date date")
    schema = bronze.union_schema()
    parse = partial(
        _parse_partition,
        raw_root=config.raw_root,
        path_pattern=config.capture.path_pattern,
        log_timezone=config.capture.log_timezone,
        schema=schema,
    )
    # Whole files per task (a capture's headers give its rows meaning), several per task:
    # hundreds of tiny tasks would cost more in scheduling than the parsing itself.
    slices = max(1, min(len(tasks), 2 * spark.sparkContext.defaultParallelism))
    log.info("parsing %d file(s) in %d task(s)", len(tasks), slices)
    return files.repartition(slices).mapInArrow(parse, schema)


def _parse_partition(
    batches: Iterator[pa.RecordBatch],
    *,
    raw_root: str,
    path_pattern: str,
    log_timezone: str,
    schema,
) -> Iterator[pa.RecordBatch]:
    arrow_schema = to_arrow_schema(schema)
    for batch in batches:
        for task in batch.to_pylist():
            rows = _file_rows(
                task["relative"], task["run_date"], raw_root, path_pattern, log_timezone
            )
            for start in range(0, len(rows), ARROW_BATCH_ROWS):
                yield pa.RecordBatch.from_pylist(
                    rows[start : start + ARROW_BATCH_ROWS], schema=arrow_schema
                )


def _file_rows(
    relative: str, run_date: dt.date, raw_root: str, path_pattern: str, log_timezone: str
) -> list[dict[str, Any]]:
    data = (Path(raw_root) / relative).read_bytes()
    result = parse_capture(relative, data, path_pattern=path_pattern, log_timezone=log_timezone)
    rows: list[dict[str, Any]] = []
    other_dates = 0
    for table, table_rows in result.rows.items():
        for row in table_rows:
            day = row.get("log_date") or row.get("capture_date")
            if day != run_date:
                other_dates += 1  # another run (that date's) writes it
                continue
            rows.append({**row, "_table": table})
    quarantine_date = run_date
    for item in result.quarantine:
        rows.append(
            {
                **item,
                "_table": "quarantine",
                "source_file": relative,
                "capture_date": quarantine_date,
            }
        )
    rows.append(
        {
            "_table": "_file",
            "source_file": relative,
            "kind": result.kind,
            "status": result.status,
            "lines": result.lines,
            "parsed_lines": result.row_lines,
            "structural": result.structural,
            "quarantined": len(result.quarantine),
            "rows": result.row_count - other_dates,
            "reconciles": result.reconciles(),
            "capture_date": run_date,
            "notes": json.dumps(
                {**result.notes, **({"rows of other dates": other_dates} if other_dates else {})}
            ),
        }
    )
    return rows


def _check_reconciliation(parsed: DataFrame) -> list[dict[str, Any]]:
    summaries = [r.asDict() for r in parsed.where(F.col("_table") == "_file").collect()]
    broken = [s for s in summaries if not s["reconciles"]]
    for s in sorted(summaries, key=lambda s: s["source_file"]):
        noteworthy = s["quarantined"] or s["status"] != "ok" or s["notes"] != "{}"
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
            "" if s["notes"] == "{}" else f"; {s['notes']}",
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
    return summaries


def _write_bronze(parsed: DataFrame, config: Config, days: list[dt.date]) -> dict[str, int]:
    tables = {name: parsed.where(F.col("_table") == name) for name in bronze.TABLES}
    members = with_inferred_subscriptions(
        with_resolved_topicless_assignments(tables["members"], tables["offsets"]), tables["offsets"]
    )
    tables["members"] = members
    counts = {
        r["_table"]: r["count"]
        for r in parsed.groupBy("_table").count().collect()
        if r["_table"] in bronze.TABLES
    }
    for name, schema in bronze.TABLES.items():
        if name == "ingested_files":
            continue
        frame = tables[name].select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])
        column = bronze.partition_column(name)
        write_table(
            frame,
            config.table_path(name),
            mode="overwrite",
            partition_by=(column,),
            replace_where={column: days},
        )
        counts.setdefault(name, 0)
    reasons = (
        tables["quarantine"].groupBy("reason").count().orderBy(F.desc("count")).limit(10).collect()
    )
    for row in reasons:
        log.info("quarantined %d line(s): %s", row["count"], row["reason"])
    return counts


def _write_ingested_files(
    spark: SparkSession,
    config: Config,
    todo: dict[dt.date, list[RawFile]],
    hashes: dict[str, str],
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
            path = parse_capture_path(raw.relative, config.capture.path_pattern)
            previous = rows.get(raw.relative)
            rows[raw.relative] = {
                "path": raw.relative,
                "size": raw.size,
                "sha256": hashes[raw.relative],
                "kind": summary["kind"],
                "cluster": path.cluster,
                "captured_at": path.captured_at
                or (previous or {}).get("captured_at")
                or dt.datetime.combine(day, dt.time(), dt.UTC),
                "status": summary["status"],
                "rows": summary["rows"],
                "quarantined": summary["quarantined"],
                "run_id": run_id,
                "ingested_at": now,
            }
    frame = spark.createDataFrame(list(rows.values()), bronze.TABLES["ingested_files"])
    write_table(frame, config.table_path("ingested_files"), mode="overwrite")
    return len(rows)
