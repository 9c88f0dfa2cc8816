"""Backfill: a job's steps over many dates (--all, --from, --to), oldest first, in one
SparkSession.

Each date runs as a single-date run does (nightly.run_steps), with the session's run
date set to it, so every commit names its date. A failing date stops the run with one
line naming it and its step: the dates before it are done, so the same command run again
recomputes them (the same rows replace the same rows) and goes on from it.

Progress goes to the log at INFO, one line per date:
    date 12/90 2026-09-12 done in 41 s, eta 52 min
The eta is the mean time of the dates run so far times the dates left.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from pyspark.sql import SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.date_span import DateSpan, SpanDates, bronze_span, capture_span
from fleet_rebalance.errors import JobFailed, error_text
from fleet_rebalance.pipeline.nightly import INGEST, STEPS, Step, StepFailed, report, run_steps
from fleet_rebalance.storage.context import changed_context
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
) -> None:
    """A job's backfill: its steps over the capture dates of `span` when it ingests,
    else over the dates bronze holds."""
    if INGEST in [name for name, _ in steps]:
        dates = capture_dates(config, span)
    else:
        dates = bronze_dates(spark, config, span)
    run(spark, config, dates, steps)


def nightly_span(spark: SparkSession, config: Config, span: DateSpan) -> list[str]:
    """The nightly's backfill: each date run gets its report, as a single run does; the
    summary lines are the last date's."""
    dates = capture_dates(config, span)
    reports = run(spark, config, dates, STEPS, after=partial(report, spark, config))
    return reports[dates[-1]] or []  # every date runs, and gets its report


def run(
    spark: SparkSession,
    config: Config,
    dates: Sequence[dt.date],
    steps: Sequence[Step],
    *,
    after: Callable[[dt.date], T] | None = None,
) -> dict[dt.date, T | None]:
    """`steps` for each of `dates` in order; `after(date)` (the nightly's report) once a
    date's steps are done. Returns after's result for each date. A failure raises
    StepFailed naming the date."""
    results: dict[dt.date, T | None] = {}
    durations: list[float] = []
    for number, day in enumerate(dates, start=1):
        started = time.monotonic()
        with changed_context(spark, run_date=day.isoformat()):
            try:
                run_steps(spark, config, day, steps)
                results[day] = after(day) if after else None
            except Exception as exc:
                raise _date_failed(exc, number, len(dates), day) from exc
        durations.append(time.monotonic() - started)
        log.info("%s", done_line(number, len(dates), day, durations))
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
