"""Ingest: raw captures -> bronze Delta tables, one date (or every date) per run.

A date is re-ingested whole when any of its files is new, changed (size or sha256) or
gone, so a re-run gives identical tables and a late file adds exactly its rows; when
nothing changed the date is skipped. Files are parsed on executors, each capture's files
whole and in one task (a file's header lines give its rows their meaning; a capture's
offsets complete its members rows: capture/bronze_batches.py). Those tasks hand every
bronze table's rows back to Spark as Arrow, with a report per file; the stage is
persisted once, every file's lines are checked to be accounted for, and only then is
each table written through delta-spark, one commit per table.

By role: plan.py (which dates are re-ingested, recorded or skipped), tasks.py (the
parse tasks and the tables' writes), reconcile.py (their reports, every line accounted
for), ledger.py (ingested_files).

Files not read (issue 19, hostile input; DESIGN.md "Quality bars"). The listing
(capture/store/) reports, without opening them, the entries ingest cannot or must not
read: FIFOs, sockets, devices, unreadable files, symbolic links that loop, dangle or
lead outside raw_root, links to directories, hidden entries, names that are not UTF-8,
directories that cannot be listed. Each is an ingested_files row with status `skipped`
and its reason, for its path date (every date run when its path has none), logged at
WARNING and counted in the run's summary line; the rest of the date completes. A
readable file with no valid timestamp in its path that is not a broker log is
`rejected` the same way (pipeline/ingest_files.py). A file that changes between the listing and
its parse task (made unreadable, replaced by a FIFO or a link out of raw_root) is
refused by the task: `skipped` when it could not be opened, `failed_capture` when
reading failed mid-way (a capture that was there and is lost, a gap for the replay),
with a whole-file quarantine row holding only the reason. Rows of files not read have
no sha256 and no kind; they never make a date's captures look changed (only the files
read whole are compared), and when they alone differ from what was recorded, only
ingested_files is rewritten.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Any

from pyspark.sql import SparkSession

from fleet_rebalance.capture import store
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline.ingest import ledger, plan, reconcile, tasks
from fleet_rebalance.pipeline.ingest.reconcile import ReconciliationError
from fleet_rebalance.storage.warehouse import Warehouse

__all__ = ["ReconciliationError", "log", "run"]

log = logging.getLogger("fleet_rebalance.ingest")


def run(spark: SparkSession, config: Config, run_date: dt.date | None) -> dict[str, int]:
    """Ingest `run_date` (every date with captures when None): rows per table written."""
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
    recorded = ledger.recorded_rows(spark, warehouse, days)
    todo_plan = plan.plan_run(config, raw_root, files, days, recorded)
    for row in sorted(todo_plan.not_read.values(), key=lambda r: r["path"]):
        log.warning("%s %s: %s", row["status"], row["path"], row["reason"])
    if not todo_plan.unread:
        log.info(
            "nothing new to ingest (%.1fs); %s",
            time.monotonic() - started,
            plan.not_read_counts(todo_plan.not_read.values()),
        )
        return {}
    todo = todo_plan.todo
    stage = tasks.parse_captures(spark, config, todo).persist() if any(todo.values()) else None
    try:
        summaries: list[dict[str, Any]] = []
        if stage is not None:
            summaries = reconcile.reports(tasks.file_reports(stage))
            reconcile.check_reconciliation(summaries)
        counts = tasks.write_bronze(warehouse, stage, summaries, list(todo)) if todo else {}
        parsed = ledger.parsed_rows(todo, summaries)
        counts["ingested_files"] = ledger.write_ingested_files(
            spark,
            warehouse,
            recorded,
            [*parsed, *(r for rows in todo_plan.unread.values() for r in rows)],
            whole_days=set(todo),
            unread_days=set(todo_plan.unread),
        )
    finally:
        if stage is not None:
            stage.unpersist()
    unreadable = [row for row in parsed if row["sha256"] is None]  # changed since the listing
    for row in unreadable:
        log.warning("%s %s: %s", row["status"], row["path"], row["reason"])
    log.info(
        "ingest of %s done in %.1fs: %s; %s",
        ", ".join(map(str, sorted(todo_plan.unread))),
        time.monotonic() - started,
        counts,
        plan.not_read_counts([*todo_plan.not_read.values(), *unreadable]),
    )
    return counts
