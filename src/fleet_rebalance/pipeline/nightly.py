"""Nightly: ingest -> replay -> metrics for one date in one SparkSession, then the
terminal summary and the HTML report. Every step replaces the date's partitions, so a
re-run (or an Airflow retry) gives the same tables: each re-run adds a version whose
rows are the ones it replaced."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence

from pyspark.sql import SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.errors import error_text
from fleet_rebalance.pipeline import ingest, metrics, replay
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.nightly")

# A step: its name and its run(spark, config, run_date) -> rows written per table.
Step = tuple[str, Callable[[SparkSession, Config, dt.date], dict[str, int]]]
INGEST, REPLAY, METRICS = "ingest", "replay", "metrics"
STEPS: tuple[Step, ...] = (
    (INGEST, ingest.run),
    (REPLAY, replay.run),
    (METRICS, metrics.run),
)


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
) -> dict[str, dict]:
    """`steps` for run_date in order; rows written per step."""
    done: dict[str, dict] = {}
    for number, (name, step) in enumerate(steps, start=1):
        log.info("step %d/%d %s for %s: starting", number, len(steps), name, run_date)
        started = time.monotonic()
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
    return done


def run_step(spark: SparkSession, config: Config, run_date: dt.date, step: Step) -> dict[str, int]:
    """One step's job for one date: the step as it is (its failures its own, not a
    StepFailed)."""
    _, run = step
    return run(spark, config, run_date)


def report(spark: SparkSession, config: Config, run_date: dt.date) -> list[str]:
    """The summary lines; also writes the HTML report and logs where."""
    from fleet_rebalance.report.facts import gather
    from fleet_rebalance.report.html import write_report
    from fleet_rebalance.report.summary import summary_lines

    facts = gather(spark, config, run_date)
    path = write_report(facts, Warehouse(spark, config.warehouse).root)
    return [*summary_lines(facts), f"report: {path}"]
