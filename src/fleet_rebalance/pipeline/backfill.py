"""Backfill: a job's steps over many dates (--all, --from, --to), oldest first, in one
SparkSession.

Each date runs as a single-date run does (nightly.run_steps), with the session's run
date set to it, so every commit names its date. A date whose pipeline_runs rows say every
requested step ran on the inputs it would run on now, with this code, is skipped
(runs.py, run_inputs.py); for ingest that means hashing the date's raw files again. A
failing date stops the run with one line naming it and its step: the dates before it
are done, so the same command run again skips them and resumes from it.

Progress goes to the log at INFO, one line per date:
    date 12/90 2026-09-12 done in 41 s, eta 52 min
    date 3/90 2026-09-03 complete for the same inputs, skipped
The eta is the mean time of the dates run so far (skipped ones do not count) times the
dates left.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from pyspark.sql import SparkSession

from fleet_rebalance.capture import store
from fleet_rebalance.cli import DateSpan, JobFailed, error_text
from fleet_rebalance.config import Config
from fleet_rebalance.date_span import SpanDates, bronze_span, capture_span
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline import run_inputs, runs
from fleet_rebalance.pipeline.ingest_files import select
from fleet_rebalance.pipeline.nightly import STEPS, Step, StepFailed, report, run_steps
from fleet_rebalance.storage.engine import RUN_DATE_KEY
from fleet_rebalance.storage.errors import StorageError
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.backfill")
T = TypeVar("T")
# The `step` of a failure after a date's steps (the nightly's report).
AFTER_STEP = "report"


def capture_dates(config: Config, span: DateSpan) -> list[dt.date]:
    """The dates an ingest or nightly backfill runs: the capture dates under raw_root."""
    return _logged(capture_span(config, span), "captures")


def bronze_dates(spark: SparkSession, config: Config, span: DateSpan) -> list[dt.date]:
    """The dates a replay or metrics backfill runs: the dates ingested_files holds (from
    its log: no table scan)."""
    warehouse = Warehouse(spark, config.warehouse)
    try:
        values = warehouse.partition_values("ingested_files", "capture_date")
    except StorageError as exc:
        raise JobFailed(
            f"{error_text(exc)}; run ./spark-submit.sh ingest once to rewrite it partitioned"
        ) from None
    have = [dt.date.fromisoformat(value) for value in values if value is not None]
    return _logged(bronze_span(have, span, config.warehouse), "ingested files")


def run_span(
    spark: SparkSession,
    config: Config,
    span: DateSpan,
    steps: Sequence[Step],
    *,
    assignors: Sequence[str] | None = None,
) -> None:
    """A job's backfill: its steps over the capture dates of `span` when it ingests,
    else over the dates bronze holds."""
    if runs.INGEST in [name for name, _ in steps]:
        dates = capture_dates(config, span)
    else:
        dates = bronze_dates(spark, config, span)
    run(spark, config, dates, steps, assignors=assignors)


def nightly_span(spark: SparkSession, config: Config, span: DateSpan) -> list[str]:
    """The nightly's backfill: each date run gets its report, as a single run does; the
    summary lines are the last date's (its report written again when it was skipped)."""
    dates = capture_dates(config, span)
    reports = run(spark, config, dates, STEPS, after=partial(report, spark, config))
    last = dates[-1]
    return reports.get(last) or report(spark, config, last)


def run(
    spark: SparkSession,
    config: Config,
    dates: Sequence[dt.date],
    steps: Sequence[Step],
    *,
    assignors: Sequence[str] | None = None,
    after: Callable[[dt.date], T] | None = None,
) -> dict[dt.date, T | None]:
    """`steps` for each of `dates` in order, skipping the dates complete for the same
    inputs; `after(date)` (the nightly's report) once a date's steps are done. Returns
    after's result for each date run. A failure raises StepFailed naming the date."""
    names = [name for name, _ in steps]
    warehouse = Warehouse(spark, config.warehouse)
    checks = _Completeness(config, warehouse, dates, names, runs.assignor_names(assignors))
    before = spark.conf.get(RUN_DATE_KEY, "")
    results: dict[dt.date, T | None] = {}
    durations: list[float] = []
    try:
        for number, day in enumerate(dates, start=1):
            if checks.complete(day):
                log.info("%s", skipped_line(number, len(dates), day))
                continue
            spark.conf.set(RUN_DATE_KEY, day.isoformat())
            started = time.monotonic()
            try:
                run_steps(spark, config, day, steps, assignors=assignors)
                results[day] = after(day) if after else None
            except Exception as exc:
                raise _date_failed(exc, number, len(dates), day) from exc
            durations.append(time.monotonic() - started)
            checks.ran(day)
            log.info("%s", done_line(number, len(dates), day, durations))
    finally:
        spark.conf.set(RUN_DATE_KEY, before)
    return results


def done_line(number: int, total: int, day: dt.date, durations: Sequence[float]) -> str:
    """`date 12/90 2026-09-12 done in 41 s, eta 52 min`: the last of `durations` is
    this date's, in whole seconds (dates are compared by it: `1 min` would hide 40 %);
    the eta is their mean times the dates left (none after the last)."""
    line = f"date {number}/{total} {day} done in {round(durations[-1])} s"
    left = total - number
    if left:
        line += f", eta {duration_text(sum(durations) / len(durations) * left)}"
    return line


def skipped_line(number: int, total: int, day: dt.date) -> str:
    return f"date {number}/{total} {day} complete for the same inputs, skipped"


def duration_text(seconds: float) -> str:
    """`41 s` under a minute, `52 min` under an hour, then `3 h 5 min`."""
    if round(seconds) < 60:
        return f"{round(seconds)} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def _date_failed(exc: Exception, number: int, total: int, day: dt.date) -> StepFailed:
    step = exc.step if isinstance(exc, StepFailed) else AFTER_STEP
    why = exc.reason if isinstance(exc, StepFailed) else error_text(exc)
    earlier = (
        f"the {number - 1} date(s) before it are done"
        if number > 1
        else "it is the first date, none is done"
    )
    return StepFailed(
        f"date {number}/{total} {day}: step {step} failed ({earlier}; run the same command "
        f"again to resume from {day}): {why}",
        step=step,
        reason=why,
    )


def _logged(found: SpanDates, what: str) -> list[dt.date]:
    gaps = found.gaps_text(what)
    if gaps:
        log.warning("%s", gaps)
    log.info("backfill of %d date(s), %s to %s", len(found.dates), found.dates[0], found.dates[-1])
    return found.dates


class _Completeness:
    """Whether a date's requested steps all ran on the inputs they would run on now.

    The records of every date, and the ingest digests of every date and the day before
    it, are read once; those of a date an ingest ran are read again when the next date
    is checked. For ingest, raw_root is listed once and the date's files hashed."""

    def __init__(
        self,
        config: Config,
        warehouse: Warehouse,
        dates: Sequence[dt.date],
        steps: list[str],
        assignors: list[str],
    ) -> None:
        self.config, self.warehouse = config, warehouse
        self.steps, self.assignors = steps, assignors
        self.records = runs.recorded(warehouse, dates)
        needed = {d for day in dates for d in (day, day - dt.timedelta(days=1))}
        self.files = runs.files_digests(warehouse, needed) if self.records else {}
        self.stale: set[dt.date] = set()
        self.raw_root = location(config.raw_root, config.storage.options)
        self.raw_files: list[store.RawFile] | None = None

    def complete(self, day: dt.date) -> bool:
        if any((day, step) not in self.records for step in self.steps):
            return False  # never run (or not by this version of the pipeline): no hashing
        stale = {day, day - dt.timedelta(days=1)} & self.stale
        if stale:
            self.files.update(runs.files_digests(self.warehouse, stale))
            self.stale -= stale
        ingest_now = None
        if runs.INGEST in self.steps:
            ingest_now = self._raw_digest(day)
            if ingest_now != self.files[day]:
                return False  # not what ingested_files holds (or a file cannot be read)
        expected = runs.expected(
            self.steps,
            day,
            self.files,
            self.records.get((day, runs.REPLAY)),
            self.config,
            self.assignors,
            ingest_files=ingest_now,
        )
        return runs.complete(self.steps, day, expected, self.records)

    def ran(self, day: dt.date) -> None:
        if runs.INGEST in self.steps:
            self.stale.add(day)  # its ingested_files rows may have changed

    def _raw_digest(self, day: dt.date) -> str | None:
        """The ingest digest of the date's raw files as they are now; None when one
        cannot be read."""
        pattern = self.config.capture.path_pattern
        if self.raw_files is None:
            self.raw_files = store.survey(self.raw_root, pattern)
        self.raw_files = store.with_log_kinds(self.raw_root, self.raw_files, day)
        try:
            entries = run_inputs.raw_entries(self.raw_root, select(self.raw_files, day), pattern)
        except store.UnreadableFile:
            return None
        return run_inputs.files_digest(entries)
