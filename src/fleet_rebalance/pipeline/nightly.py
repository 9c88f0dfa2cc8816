"""Nightly: ingest -> replay -> metrics for one date in one SparkSession, then the
terminal summary and the HTML report. Every step replaces the date's partitions, so a
re-run (or an Airflow retry) gives the same tables."""

from __future__ import annotations

import datetime as dt
import logging
import time

from pyspark.sql import SparkSession

from fleet_rebalance.cli import error_text
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import NIGHTLY_STEPS, load_step
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.nightly")


class StepFailed(RuntimeError):
    """A nightly step raised; the message names the step."""


def run_steps(spark: SparkSession, config: Config, run_date: dt.date) -> dict[str, dict]:
    done: dict[str, dict] = {}
    for number, name in enumerate(NIGHTLY_STEPS, start=1):
        module = load_step(name)
        if module is None:
            raise StepFailed(f"step {name} is not available in this build")
        log.info("step %d/%d %s for %s: starting", number, len(NIGHTLY_STEPS), name, run_date)
        started = time.monotonic()
        try:
            counts = module.run(spark, config, run_date)
        except Exception as exc:
            raise StepFailed(f"step {name} failed for {run_date}: {error_text(exc)}") from exc
        log.info(
            "step %d/%d %s done in %.1fs: %s",
            number,
            len(NIGHTLY_STEPS),
            name,
            time.monotonic() - started,
            counts,
        )
        done[name] = counts
    return done


def report(spark: SparkSession, config: Config, run_date: dt.date) -> list[str]:
    """The summary lines; also writes the HTML report and logs where."""
    from fleet_rebalance.report.facts import gather
    from fleet_rebalance.report.html import write_report
    from fleet_rebalance.report.summary import summary_lines

    facts = gather(spark, config, run_date)
    path = write_report(facts, Warehouse(spark, config.warehouse).root)
    return [*summary_lines(facts), f"report: {path}"]
