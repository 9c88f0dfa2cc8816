"""maintain: every Delta table in the warehouse compacted (OPTIMIZE) and vacuumed past
the retention (storage/maintenance.py), a line per table on stdout. A job table with
files but no commit yet (its first write failed) has its files older than the retention
removed (storage/uncommitted.py), as VACUUM would.

The retention is checked first against the longest run the warehouse records: a run
still going when VACUUM runs must find the version it started from, and its files not
yet committed (as old as the run) must not be taken for a dead run's. A run's length is
its last commit's time minus its first, over every table's log.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.errors import UsageError
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.storage.versions import Maintained
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.maintain")
DAY = dt.timedelta(days=1)
# The tables the jobs write: a directory of one of these names without a commit is the
# remains of its first write; nothing else under the warehouse (the reports) is touched.
JOB_TABLES = (*bronze.TABLES, *silver.TABLES, *gold.TABLES)


@dataclass(frozen=True)
class Run:
    run_id: str
    length: dt.timedelta
    source: str  # where the length was measured


def run(spark: SparkSession, config: Config, retain_days: int) -> list[str]:
    """Maintains every table under the warehouse; returns the summary's lines. Raises
    UsageError when `retain_days` is shorter than the longest run."""
    warehouse = Warehouse(spark, config.warehouse)
    uncommitted = sorted(warehouse.without_commit(JOB_TABLES))
    names = [name for name in warehouse.tables() if name not in uncommitted]
    if not names and not uncommitted:
        log.warning("no Delta table under %s: nothing to maintain", config.warehouse)
        return [f"maintain {config.warehouse}: no Delta table"]
    longest = longest_run(spark, warehouse, names)
    check_retention(retain_days, longest)
    retention = retain_days * DAY
    lines = [
        f"maintain {config.warehouse}: {len(names)} table{'s' * (len(names) != 1)}, "
        f"retention {retain_days} days"
        + (f" (longest run {duration_text(longest.length)})" if longest else "")
    ]
    for name in uncommitted:
        removed = warehouse.remove_uncommitted(name, retention)
        line = (
            f"{name}: no commit yet (a first write that failed): removed {removed.files} "
            f"uncommitted files ({size_text(removed.size)}) older than {retain_days} days, "
            f"kept {removed.kept} newer"
        )
        log.info("table %s", line)
        lines.append(line)
    done: list[Maintained] = []
    for name in names:
        result = warehouse.maintain(name, retention)
        line = f"{name}: {summary(result)}"
        log.info("table %s", line)
        lines.append(line)
        done.append(result)
    lines.append(f"total: {totals(done)}")
    return lines


def longest_run(spark: SparkSession, warehouse: Warehouse, names: Sequence[str]) -> Run | None:
    """The longest run the tables' logs record, or None."""
    spans: dict[str, tuple[dt.datetime, dt.datetime]] = {}
    for name in names:
        for commit in warehouse.history(name):
            if not commit.run_id:
                continue
            first, last = spans.get(commit.run_id, (commit.timestamp, commit.timestamp))
            spans[commit.run_id] = (min(first, commit.timestamp), max(last, commit.timestamp))
    found = [Run(run_id, last - first, "commits") for run_id, (first, last) in spans.items()]
    return max(found, key=lambda r: r.length, default=None)


def check_retention(retain_days: int, longest: Run | None) -> None:
    """A retention shorter than the longest run could vacuum a running job's files."""
    if longest is None or retain_days * DAY >= longest.length:
        return
    needed = math.ceil(longest.length / DAY)
    raise UsageError(
        f"--retain-days {retain_days}: shorter than the longest run in the warehouse, "
        f"{duration_text(longest.length)} (run {longest.run_id}, by its {longest.source}); "
        f"pass --retain-days {needed} or more"
    )


def summary(result: Maintained) -> str:
    if result.vacuumed_files is None:
        vacuumed = "vacuumed files not reported"
    else:
        vacuumed = f"vacuumed {result.vacuumed_files} files ({size_text(result.vacuumed_bytes)})"
    return (
        f"files {result.files_before} -> {result.files_after}, {vacuumed}, "
        f"versions {result.oldest_readable}..{result.version} readable "
        f"({result.versions_kept})"
    )


def totals(done: Sequence[Maintained]) -> str:
    files = [r.vacuumed_files for r in done if r.vacuumed_files is not None]
    sizes = [r.vacuumed_bytes for r in done if r.vacuumed_bytes is not None]
    return (
        f"files {sum(r.files_before for r in done)} -> {sum(r.files_after for r in done)}, "
        f"vacuumed {sum(files)} files ({size_text(sum(sizes))})"
    )


def duration_text(length: dt.timedelta) -> str:
    hours = length.total_seconds() / 3600
    return f"{hours:.1f} hours" if hours >= 1 else f"{length.total_seconds() / 60:.1f} minutes"


def size_text(size: int | None) -> str:
    if size is None:
        return "size not reported"
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
