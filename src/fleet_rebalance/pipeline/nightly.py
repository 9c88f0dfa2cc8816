"""Nightly: ingest -> replay -> metrics for one date in one SparkSession, then the
terminal summary and the HTML report. Every step replaces the date's partitions, so a
re-run (or an Airflow retry) gives the same tables; once the steps are done, the date's
pipeline_runs rows record what each ran on (runs.py), which is how a backfill knows a
date is complete."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence

from pyspark.sql import SparkSession

from fleet_rebalance.cli import error_text
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import ingest, metrics, replay, runs
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.nightly")

# A step: its name and its run(spark, config, run_date) -> rows written per table.
Step = tuple[str, Callable[[SparkSession, Config, dt.date], dict[str, int]]]
STEPS: tuple[Step, ...] = (
    (runs.INGEST, ingest.run),
    (runs.REPLAY, replay.run),
    (runs.METRICS, metrics.run),
)
# The `step` of a failure to record a date's run in pipeline_runs.
RECORD_STEP = runs.TABLE


class StepFailed(RuntimeError):
    """A nightly step raised; the message names the step and the date, `step` and
    `reason` say them apart (a backfill words its own line from them)."""

    def __init__(self, message: str, *, step: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.step, self.reason = step, reason


def run_steps(
    spark: SparkSession,
    config: Config,
    run_date: dt.date,
    steps: Sequence[Step] = STEPS,
    *,
    assignors: Sequence[str] | None = None,
) -> dict[str, dict]:
    """`steps` for run_date in order, then their pipeline_runs rows; rows written per
    step. `assignors`: the ones the replay step runs (None: its default)."""
    done: dict[str, dict] = {}
    times: dict[str, runs.Times] = {}
    for number, (name, step) in enumerate(steps, start=1):
        log.info("step %d/%d %s for %s: starting", number, len(steps), name, run_date)
        started, started_at = time.monotonic(), _now()
        try:
            counts = step(spark, config, run_date)
        except Exception as exc:
            why = error_text(exc)
            raise StepFailed(
                f"step {name} failed for {run_date}: {why}", step=name, reason=why
            ) from exc
        log.info(
            "step %d/%d %s done in %.1fs: %s",
            number,
            len(steps),
            name,
            time.monotonic() - started,
            counts,
        )
        done[name] = counts
        times[name] = (started_at, _now())
    record(spark, config, run_date, times, assignors)
    return done


def run_step(
    spark: SparkSession,
    config: Config,
    run_date: dt.date,
    step: Step,
    *,
    assignors: Sequence[str] | None = None,
) -> dict[str, int]:
    """One step's job for one date: the step as it is (its failures its own, not a
    StepFailed), then its pipeline_runs row."""
    name, run = step
    started_at = _now()
    counts = run(spark, config, run_date)
    record(spark, config, run_date, {name: (started_at, _now())}, assignors)
    return counts


def record(
    spark: SparkSession,
    config: Config,
    run_date: dt.date,
    times: dict[str, runs.Times],
    assignors: Sequence[str] | None = None,
) -> None:
    """The date's pipeline_runs rows of the steps in `times`; a failure names the table."""
    started = time.monotonic()
    try:
        written = runs.record(spark, config, run_date, times, runs.assignor_names(assignors))
    except Exception as exc:
        why = error_text(exc)
        raise StepFailed(
            f"recording the run of {run_date} in {runs.TABLE} failed: {why}",
            step=RECORD_STEP,
            reason=why,
        ) from exc
    log.info(
        "%s of %s %s %s in %.1fs",
        ", ".join(times),
        run_date,
        "recorded in" if written else "already as recorded in",
        runs.TABLE,
        time.monotonic() - started,
    )


def report(spark: SparkSession, config: Config, run_date: dt.date) -> list[str]:
    """The summary lines; also writes the HTML report and logs where."""
    from fleet_rebalance.report.facts import gather
    from fleet_rebalance.report.html import write_report
    from fleet_rebalance.report.summary import summary_lines

    facts = gather(spark, config, run_date)
    path = write_report(facts, Warehouse(spark, config.warehouse).root)
    return [*summary_lines(facts), f"report: {path}"]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
