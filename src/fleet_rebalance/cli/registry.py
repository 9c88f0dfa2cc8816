"""The one list of jobs: what the launcher routes, the parsers build and jobs/*.py run.

Each job is a script under jobs/ (what spark-submit, or plain python, is given), its
lines in ./spark-submit.sh --help and in its own --help, its flags, how it runs and
what it reads. A job is added here and as its script; tests/test_cli_registry.py
checks that the two lists agree.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fleet_rebalance.cli import job_flags

# spark-submit: under pyspark's spark-submit; python: a plain interpreter (no JVM);
# pytest: the test suite, its flags passed on unchecked.
Runner = Literal["spark-submit", "python", "pytest"]
# What a run reads for its date: the captures under raw_root, the warehouse's tables
# (which must exist), or neither.
Reads = Literal["captures", "tables", "nothing"]


@dataclass(frozen=True)
class Job:
    """One job as the launcher routes it, its parser builds it and its script runs it."""

    name: str
    summary: str  # its line in ./spark-submit.sh --help
    description: str  # its --help's description
    script: str | None  # its file under jobs/; None: not a script (test)
    flags: Callable[[argparse.ArgumentParser], None] | None  # None: passed on unchecked
    runner: Runner = "spark-submit"
    reads: Reads = "nothing"


_JOBS = (
    Job(
        "ingest",
        "raw Kafka captures -> bronze Delta tables",
        "Ingest: raw Kafka captures under raw_root -> bronze Delta tables.",
        "ingest.py",
        job_flags.pipeline_flags,
        reads="captures",
    ),
    Job(
        "replay",
        "bronze -> silver: each group's history through every assignor",
        "Replay: each group's history through every assignor (bronze -> silver).",
        "replay.py",
        job_flags.replay_flags,
        reads="tables",
    ),
    Job(
        "metrics",
        "silver -> gold tables",
        "Metrics: silver (and bronze offsets, states, coordinator logs) -> gold tables.",
        "metrics.py",
        job_flags.pipeline_flags,
        reads="tables",
    ),
    Job(
        "nightly",
        "ingest, replay and metrics for a date (or a backfill) in one SparkSession",
        "Nightly: ingest -> replay -> metrics for one date (or each date of --all or "
        "--from/--to, in order) in one SparkSession, warehouse/reports/<date>.html for each "
        "date run and a summary on stdout (of the last date, for several).",
        "nightly.py",
        job_flags.pipeline_flags,
        reads="captures",
    ),
    Job(
        "sql",
        "run SQL statements over every output table, in one SparkSession (or DuckDB)",
        "SQL over the output tables: every Delta table in the warehouse is a view by its "
        "name. Statements come from QUERY, from -f FILE, or from stdin, separated by `;`, "
        "and run in one SparkSession.",
        "sql.py",
        job_flags.sql_flags,
        reads="tables",
    ),
    Job(
        "generate",
        "write a synthetic fleet of raw captures",
        "Generate: write a seeded synthetic fleet of raw captures (no Spark needed).",
        "generate_fleet.py",
        job_flags.generate_flags,
        runner="python",
    ),
    Job(
        "maintain",
        "compact, VACUUM and checkpoint every Delta table (weekly)",
        "Maintain: compact small files, VACUUM files no version inside the retention "
        "reads, and checkpoint, for every Delta table in the warehouse; a line per table on "
        "stdout. Meant to run weekly, never beside a nightly.",
        "maintain.py",
        job_flags.maintain_flags,
        reads="tables",
    ),
    Job(
        "test",
        "run the test suite (pytest; flags after the job go to pytest)",
        "",
        None,
        None,
        runner="pytest",
    ),
)
# Name -> job, in ./spark-submit.sh --help's order.
JOBS: dict[str, Job] = {job.name: job for job in _JOBS}
# The jobs with flags of their own (checked by the launcher, with a --help each).
PARSED_JOBS: tuple[str, ...] = tuple(name for name, job in JOBS.items() if job.flags)
