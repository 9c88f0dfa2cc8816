"""What a hostile tree's nightly must show against a clean run of the same captures
(issues 19 and 56): the checks test_hostile_nightly.py and test_hostile_units.py both
make, each returning the problems it found (an empty list when none).

A run pair is the clean tree's nightly and the hostile tree's, each into a warehouse of
its own; the hostile tree's Manifest (hostile_tree.py) says what ingest must record for
each case. Comparisons are exact: all rows, all columns (but the columns describing the
run itself), order-insensitive.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pyspark.sql.functions as F
import pytest
from hostile_tree import Manifest, physical_lines
from pyspark.sql import DataFrame, Row

from fleet_rebalance.capture.compressed import compression
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.storage import read_table

# Columns that describe the run itself, not the data.
PER_RUN = {"ingested_files": ["run_id", "ingested_at"]}
# The bronze tables rows of capture lines go to, and quarantine.
LINE_TABLES = [*bronze.CAPTURE_TABLES, "quarantine"]
# ingest's per-file line accounting, as it logs it (pipeline/ingest/reconcile.py).
SUMMARY = re.compile(
    r"^(?P<path>.+) \[(?P<kind>[^,\]]*), (?P<status>\w+)\]: (?P<lines>\d+) lines = "
    r"(?P<parsed>\d+) parsed \+ (?P<quarantined>\d+) quarantined \+ (?P<structural>\d+) "
    r"structural; (?P<rows>\d+) rows",
    re.DOTALL,
)


@dataclass
class Runs:
    clean: Config
    hostile: Config
    manifest: Manifest
    error: BaseException | None
    counts: dict | None
    report_lines: list[str] | None
    summaries: dict[str, dict[str, int | str]]
    seconds: float


class _Summaries(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.found: dict[str, dict[str, int | str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        # Never raises: a handler's exception would end the run it listens to.
        try:
            match = SUMMARY.match(record.getMessage())
            if match:
                values = match.groupdict()
                path = values.pop("path")
                self.found[path] = {
                    k: v if k in ("kind", "status") else int(v) for k, v in values.items()
                }
        except Exception:
            self.handleError(record)


@contextlib.contextmanager
def ingest_summaries() -> Iterator[_Summaries]:
    """ingest's per-file summaries (logged at DEBUG for unremarkable files)."""
    logger = logging.getLogger("fleet_rebalance.ingest")
    handler, level = _Summaries(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def completed(runs: Runs) -> Runs:
    if runs.error is not None:
        pytest.fail(f"the hostile run failed: {runs.error!r}")
    return runs


def table(spark, config: Config, name: str) -> DataFrame:
    return read_table(spark, config.table_path(name))


def without_groups(frame: DataFrame, groups: set[tuple[str, str]]) -> DataFrame:
    touched = F.lit(False)
    for cluster, group in groups:
        touched = touched | ((F.col("cluster") == cluster) & (F.col("group_id") == group))
    return frame.where(~touched)


def _hashable(value: object) -> object:
    """A collected value as a hashable one; NaN equal to itself (exact comparison)."""
    if isinstance(value, Row):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def difference(got: list[Row], want: list[Row], columns: list[str], shown: int = 4) -> str | None:
    """None when `got` and `want` are the same rows (a multiset: all columns, exact
    values, any order), else what differs: a few rows only one side has."""
    hostile = Counter(_hashable(row) for row in got)
    clean = Counter(_hashable(row) for row in want)
    extra, missing = hostile - clean, clean - hostile
    if not extra and not missing:
        return None
    return (
        f"columns {columns}: {sum(extra.values())} row(s) only in the hostile run, "
        f"e.g. {list(extra)[:shown]}; {sum(missing.values())} row(s) only in the clean run, "
        f"e.g. {list(missing)[:shown]}"
    )


def first_difference(got: DataFrame, want: DataFrame) -> str | None:
    """difference() of two tables (a few thousand rows each), their column types first."""
    types = [(f.name, f.dataType) for f in want.schema.fields]
    if [(f.name, f.dataType) for f in got.schema.fields] != types:
        return f"columns {got.dtypes}, expected {want.dtypes}"
    return difference(got.collect(), want.collect(), want.columns)


def problems_message(problems: list[str]) -> str:
    return f"{len(problems)} problem(s):\n" + "\n".join(f"- {p}" for p in problems)


def recorded_problems(spark, runs: Runs, day: dt.date) -> list[str]:
    """Every hostile file has its ingested_files row: status, reason, quarantined count;
    a file not to be read has no rows, sha256 or kind."""
    recorded = {
        r["path"]: r
        for r in table(spark, runs.hostile, "ingested_files")
        .where(F.col("capture_date") == F.lit(day))
        .collect()
    }
    problems = []
    for path, expected in sorted(runs.manifest.files.items()):
        row = recorded.get(path)
        if row is None:
            problems.append(f"{path}: no ingested_files row")
            continue
        if row["status"] != expected.status:
            problems.append(f"{path}: status {row['status']!r}, expected {expected.status!r}")
        reason = (row["reason"] or "").casefold()
        missing = [part for part in expected.reason if part.casefold() not in reason]
        if missing:
            problems.append(f"{path}: reason {row['reason']!r} does not mention {missing}")
        if row["quarantined"] != len(expected.quarantined):
            problems.append(
                f"{path}: quarantined {row['quarantined']}, expected {len(expected.quarantined)}"
            )
        if not expected.read and row["rows"]:
            problems.append(f"{path}: not to be read, yet {row['rows']} rows recorded")
        if expected.unopened and (row["sha256"], row["kind"]) != (None, None):
            problems.append(f"{path}: not to be opened, yet recorded sha256/kind {row}")
    return problems


def quarantine_problems(spark, runs: Runs, day: dt.date) -> list[str]:
    """Exactly the manifest's lines are quarantined, once each, with their reason and
    their text as it was."""
    manifest = runs.manifest
    quarantine = table(spark, runs.hostile, "quarantine").collect()
    by_file: dict[str, dict[int | None, Row]] = {}
    for row in quarantine:
        by_file.setdefault(row["source_file"], {})[row["line_number"]] = row
    twice = Counter((r["source_file"], r["line_number"]) for r in quarantine)
    problems = [f"{f}:{n} quarantined {k} times" for (f, n), k in twice.items() if k > 1]
    for path, expected in sorted(manifest.files.items()):
        got = by_file.get(path, {})
        if set(got) != set(expected.quarantined):
            problems.append(
                f"{path}: quarantined lines {sorted(got, key=str)}, expected "
                f"{sorted(expected.quarantined, key=str)}"
            )
        for number, parts in expected.quarantined.items():
            row = got.get(number)
            if row is None:
                continue
            missing = [p for p in parts if p.casefold() not in (row["reason"] or "").casefold()]
            if missing:
                problems.append(f"{path}:{number}: reason {row['reason']!r} lacks {missing}")
            text = manifest.quarantined_text.get((path, number))
            if text is not None and row["line"] != text:
                problems.append(f"{path}:{number}: line stored as {row['line']!r}, was {text!r}")
            if row["capture_date"] != day:
                problems.append(f"{path}:{number}: capture_date {row['capture_date']}")
    return problems


def accounting_problems(spark, runs: Runs, day: dt.date) -> list[str]:
    """For every file read: lines = parsed + quarantined + structural as ingest logs it,
    its lines are the file's physical lines (a compressed file's: the manifest's), and
    its recorded rows and quarantined counts are the rows and quarantine rows stored."""
    recorded = (
        table(spark, runs.hostile, "ingested_files")
        .where(F.col("capture_date") == F.lit(day))
        .collect()
    )
    stored: Counter[str] = Counter()
    for name in bronze.CAPTURE_TABLES:
        column = bronze.partition_column(name)
        frame = table(spark, runs.hostile, name).where(F.col(column) == F.lit(day))
        for r in frame.groupBy("source_file").count().collect():
            stored[r["source_file"]] += r["count"]
    numbered: Counter[str] = Counter()  # quarantine rows of a line
    whole: Counter[str] = Counter()  # rows for the whole file, standing for 0 or more lines
    for r in (
        table(spark, runs.hostile, "quarantine").select("source_file", "line_number").collect()
    ):
        (whole if r["line_number"] is None else numbered)[r["source_file"]] += 1
    problems = []
    read = [r for r in recorded if r["status"] not in ("skipped", "rejected")]
    if len(read) < 100:
        problems.append(f"only {len(read)} files read: the cluster's captures and logs are not")
    for row in read:
        path = row["path"]
        summary = runs.summaries.get(path)
        if summary is None:
            problems.append(f"{path}: no line accounting logged")
            continue
        accounted = summary["parsed"] + summary["quarantined"] + summary["structural"]
        if summary["lines"] != accounted:
            problems.append(f"{path}: {summary}: lines != parsed + quarantined + structural")
        data = (runs.manifest.root / path).read_bytes()
        expected = runs.manifest.files.get(path)
        if compression(data) is not None:
            if expected is None or expected.lines is None:
                problems.append(f"{path}: a compressed file the manifest gives no line count")
                continue
            physical = expected.lines
        else:
            physical = len(physical_lines(data))
        if summary["lines"] != physical:
            problems.append(f"{path}: {summary['lines']} lines accounted, file has {physical}")
        if expected is not None and expected.lines is not None and physical != expected.lines:
            problems.append(f"{path}: {physical} lines, the manifest says {expected.lines}")
        # The log counts quarantined lines: a row each, and those a whole-file row
        # stands for (all of a file refused whole, none of a damaged stream's).
        stood_for = summary["quarantined"] - numbered[path]
        rows = numbered[path] + whole[path]
        if row["quarantined"] != rows or stood_for < 0 or (stood_for and not whole[path]):
            problems.append(
                f"{path}: quarantined {summary['quarantined']} lines (log), "
                f"{row['quarantined']} (ingested_files), {numbered[path]} quarantine rows "
                f"of a line and {whole[path]} of the file"
            )
        if summary["rows"] != stored[path] or row["rows"] != stored[path]:
            problems.append(
                f"{path}: rows {summary['rows']} (log), {row['rows']} (ingested_files), "
                f"{stored[path]} stored"
            )
    return problems


def clean_line_problems(spark, runs: Runs) -> list[str]:
    """The rows (and quarantine rows) of every line the hostile cases left as it was,
    in every file of the clean tree, are exactly the clean run's; an added or replaced
    line gives rows only where the manifest says (a new group's); the files whose bytes
    are unchanged are recorded as the clean run records them. A file the manifest says
    gives the rows of a clean one (`same_rows_as`) is compared whole."""
    manifest = runs.manifest
    same_rows = {path for path, expected in manifest.files.items() if expected.same_rows_as}
    clean_files = manifest.untouched | set(manifest.changed_lines) | same_rows
    new_lines = {
        (path, number) for path, numbers in manifest.changed_lines.items() for number in numbers
    }
    new_lines |= {
        (path, number)
        for path, expected in manifest.files.items()
        if path not in clean_files and expected.lines
        for number in range(1, expected.lines + 1)
    }
    unread = {path for path, expected in manifest.files.items() if not expected.read}
    files = clean_files | unread | {path for path, _ in new_lines}
    rows_from_new_lines = set()
    problems = []
    for name in LINE_TABLES:
        hostile, clean = (
            table(spark, config, name).where(F.col("source_file").isin(files))
            for config in (runs.hostile, runs.clean)
        )
        if hostile.dtypes != clean.dtypes:
            problems.append(f"{name}: columns {hostile.dtypes}, clean run {clean.dtypes}")
            continue
        # A table without line numbers (topic_partitions) cannot set added lines apart:
        # its rows of each file must be the clean run's whole (added lines giving none).
        numbered = "line_number" in clean.columns

        def line(row: Row, numbered: bool = numbered) -> tuple[str, int | None]:
            return row["source_file"], row["line_number"] if numbered else None

        hostile_rows = hostile.collect()
        # A file refused after it was opened (a bomb) has its quarantine row, which
        # quarantine_problems checks against the manifest like every other.
        leaking = unread if name != "quarantine" else set()
        if leaked := sorted({r["source_file"] for r in hostile_rows} & leaking):
            problems.append(f"{name}: rows of files that must not be read: {leaked}")
        got = [
            r for r in hostile_rows if r["source_file"] in clean_files and line(r) not in new_lines
        ]
        want = [r for r in clean.collect() if line(r) not in new_lines]
        if name in ("offsets", "members") and not want:
            problems.append(f"{name}: the clean run has no rows (vacuous comparison)")
        if different := difference(got, want, clean.columns):
            problems.append(f"{name}: {different}")
        if numbered and name != "quarantine":
            rows_from_new_lines |= {line(r) for r in hostile_rows if line(r) in new_lines}
    expected_rows = {(path, number) for path, e in manifest.files.items() for number in e.row_lines}
    if rows_from_new_lines != expected_rows:
        problems.append(
            f"added or replaced lines gave rows at {sorted(rows_from_new_lines - expected_rows)}"
            f" and none at {sorted(expected_rows - rows_from_new_lines)}"
        )
    got, want = (
        table(spark, config, "ingested_files")
        .where(F.col("path").isin(manifest.untouched))
        .drop(*PER_RUN["ingested_files"])
        for config in (runs.hostile, runs.clean)
    )
    if different := first_difference(got, want):
        problems.append(f"ingested_files of unchanged files: {different}")
    return problems


def untouched_problems(spark, runs: Runs) -> list[str]:
    """Every group no hostile case touches has exactly the clean run's silver and gold
    rows (protocol_migration_plan's fleet-wide rank aside)."""
    touched = runs.manifest.touched
    problems = []
    for name in [*silver.TABLES, *gold.TABLES]:
        want = without_groups(table(spark, runs.clean, name), touched)
        if name in ("rebalance_events", "replay_metrics", "stickiness") and not want.take(1):
            problems.append(f"{name}: the clean run has no rows (vacuous comparison)")
        got = without_groups(table(spark, runs.hostile, name), touched)
        if name == "protocol_migration_plan":  # a rank across the fleet, hostile groups too
            got, want = got.drop("migration_order"), want.drop("migration_order")
        if different := first_difference(got, want):
            problems.append(f"{name}: {different}")
    return problems


def group_events(
    spark, runs: Runs, cluster: str, group: str, columns: list[str] | None = None
) -> tuple[set[tuple], set[tuple]]:
    """The group's rebalance events in the clean run and in the hostile run: `columns`
    of each, by default all of them but its place in the sequence (event_seq)."""

    def events(config: Config) -> set[tuple]:
        frame = table(spark, config, "rebalance_events").where(
            (F.col("cluster") == cluster) & (F.col("group_id") == group)
        )
        picked = columns or [c for c in frame.columns if c != "event_seq"]
        return {
            tuple(tuple(v) if isinstance(v, list) else v for v in r)
            for r in frame.select(*picked).collect()
        }

    return events(runs.clean), events(runs.hostile)
