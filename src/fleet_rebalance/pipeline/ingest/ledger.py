"""ingested_files, ingest's ledger: what each run read (or did not read) per date, and
why. Only the partitions of the run's dates are read and written."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.capture.result import OK
from fleet_rebalance.capture.store import RawFile
from fleet_rebalance.pipeline import bronze
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.ingest")
INGESTED_FILES_COLUMNS = bronze.TABLES["ingested_files"].fieldNames()
INGESTED_FILES_PARTITION = bronze.partition_column("ingested_files")


def recorded_rows(
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


def identities(rows: Iterable[dict[str, Any]]) -> set[tuple]:
    """What makes two rows of a file not read the same record."""
    return {(r["path"], r["size"], r["status"], r["reason"]) for r in rows}


def ingested_row(raw: RawFile, day: dt.date, **values: Any) -> dict[str, Any]:
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


def parsed_rows(
    todo: dict[dt.date, list[RawFile]], summaries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """ingested_files rows of the files parsed, one per file and date it was taken for."""
    by_file = {(s["source_file"], s["capture_date"]): s for s in summaries}
    rows = []
    for day, taken in todo.items():
        for raw in taken:
            summary = by_file[(raw.relative, day.isoformat())]
            rows.append(
                ingested_row(
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


def write_ingested_files(
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
    sha256)."""
    now = dt.datetime.now(dt.UTC)
    run_id = warehouse.context.run_id
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
    )
    return len(table)
