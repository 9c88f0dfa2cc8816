"""Issue 19 end to end: a hostile capture tree through the whole nightly.

One cluster of data/sample for 2026-11-20 is run twice, as it is (the clean run) and
with every hostile case of tests/hostile_tree.py added (the hostile run), each into a
warehouse of its own. The hostile run must complete; every hostile file must be
recorded with its status and reason, every hostile line quarantined with its reason,
every line of every file accounted for; every other line must give exactly the clean
run's bronze rows; and every group no hostile case touches must have exactly the clean
run's silver and gold rows. Comparisons are exact: all rows, all columns (but the
columns describing the run itself), order-insensitive.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from hostile_tree import (
    CLUSTER,
    DAY,
    EXPORT,
    EXPORT_GROUP,
    PASSWD_MARK,
    RTL_FILES,
    RTL_GROUP,
    SEPARATOR_CLIENT,
    SEPARATOR_GROUP,
    SEPARATOR_MEMBER,
    UTF16_OFFSETS,
    Manifest,
    build_hostile_tree,
    copy_clean_tree,
    physical_lines,
)
from pyspark.sql import DataFrame, Row

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.pipeline.nightly import report, run_steps
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
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
# How the report may spell U+202E so that it shows instead of acting.
ESCAPED_RLO = ("\\u202e", "\\u202E", "&#x202e;", "&#x202E;", "&#8238;")


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


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory) -> Runs:
    base = tmp_path_factory.mktemp("hostile-nightly")
    clean_raw = copy_clean_tree(base / "clean-raw")
    manifest = build_hostile_tree(clean_raw, base / "hostile-raw")
    clean = Config(raw_root=str(clean_raw), warehouse=str(base / "clean-wh"))
    hostile = Config(raw_root=str(manifest.root), warehouse=str(base / "hostile-wh"))
    started = time.monotonic()
    run_steps(spark, clean, DAY)
    error = counts = lines = None
    with ingest_summaries() as summaries:
        try:
            counts = run_steps(spark, hostile, DAY)
            lines = report(spark, hostile, DAY)
        except Exception as exc:  # reported by the first test, named by the others
            error = exc
    return Runs(
        clean,
        hostile,
        manifest,
        error,
        counts,
        lines,
        summaries.found,
        time.monotonic() - started,
    )


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


def test_the_hostile_run_completes(runs):
    """Given every hostile case in one date's captures, Then the nightly (ingest,
    replay, metrics, report) completes as a clean one does."""
    runs = completed(runs)
    assert set(runs.counts) == {"ingest", "replay", "metrics"}
    assert runs.report_lines[-1].startswith("report: ")
    print(f"clean + hostile nightly and report: {runs.seconds:.0f}s")
    for case in runs.manifest.skipped_cases:
        print(f"hostile case not built here: {case}")


def test_every_hostile_file_is_recorded_with_its_status_and_reason(spark, runs):
    runs = completed(runs)
    recorded = {
        r["path"]: r
        for r in table(spark, runs.hostile, "ingested_files")
        .where(F.col("capture_date") == F.lit(DAY))
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
        if not expected.read and (row["rows"], row["sha256"], row["kind"]) != (0, None, None):
            problems.append(f"{path}: not to be read, yet recorded rows/sha256/kind {row}")
    assert not problems, problems_message(problems)


def test_every_hostile_line_is_quarantined_with_its_reason(spark, runs):
    runs = completed(runs)
    manifest = runs.manifest
    quarantine = table(spark, runs.hostile, "quarantine").collect()
    by_file: dict[str, dict[int | None, object]] = {}
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
            if row["capture_date"] != DAY:
                problems.append(f"{path}:{number}: capture_date {row['capture_date']}")
    # Nothing a link out of raw_root leads to is ever read into a table.
    leaked = [r["source_file"] for r in quarantine if PASSWD_MARK in (r["line"] or "")]
    if leaked:
        problems.append(f"/etc/passwd's lines stored from {leaked}")
    assert not problems, problems_message(problems)


def test_every_line_of_every_file_is_accounted_for(spark, runs):
    """For every file read: lines = parsed + quarantined + structural as ingest logs it,
    its lines are the file's physical lines, and its recorded rows and quarantined
    counts are the rows and quarantine rows stored for it."""
    runs = completed(runs)
    recorded = (
        table(spark, runs.hostile, "ingested_files")
        .where(F.col("capture_date") == F.lit(DAY))
        .collect()
    )
    stored: Counter[str] = Counter()
    for name in bronze.CAPTURE_TABLES:
        column = bronze.partition_column(name)
        frame = table(spark, runs.hostile, name).where(F.col(column) == F.lit(DAY))
        for r in frame.groupBy("source_file").count().collect():
            stored[r["source_file"]] += r["count"]
    quarantined = Counter(
        r["source_file"]
        for r in table(spark, runs.hostile, "quarantine").select("source_file").collect()
    )
    problems = []
    read = [r for r in recorded if r["status"] not in ("skipped", "rejected")]
    assert len(read) > 100, "the lab cluster's captures and logs are read"
    for row in read:
        path = row["path"]
        summary = runs.summaries.get(path)
        if summary is None:
            problems.append(f"{path}: no line accounting logged")
            continue
        accounted = summary["parsed"] + summary["quarantined"] + summary["structural"]
        if summary["lines"] != accounted:
            problems.append(f"{path}: {summary}: lines != parsed + quarantined + structural")
        physical = len(physical_lines((runs.manifest.root / path).read_bytes()))
        if summary["lines"] != physical:
            problems.append(f"{path}: {summary['lines']} lines accounted, file has {physical}")
        expected = runs.manifest.files.get(path)
        if expected is not None and expected.lines is not None and physical != expected.lines:
            problems.append(f"{path}: {physical} lines, the manifest says {expected.lines}")
        if summary["quarantined"] != quarantined[path] or row["quarantined"] != quarantined[path]:
            problems.append(
                f"{path}: quarantined {summary['quarantined']} (log), {row['quarantined']} "
                f"(ingested_files), {quarantined[path]} quarantine rows"
            )
        if summary["rows"] != stored[path] or row["rows"] != stored[path]:
            problems.append(
                f"{path}: rows {summary['rows']} (log), {row['rows']} (ingested_files), "
                f"{stored[path]} stored"
            )
    assert not problems, problems_message(problems)


def test_every_clean_line_gives_the_clean_runs_bronze_rows(spark, runs):
    """The rows (and quarantine rows) of every line the hostile cases left as it was,
    in every file of the clean tree, are exactly the clean run's; an added or replaced
    line gives rows only where the manifest says (a new group's); the files whose
    bytes are unchanged are recorded as the clean run records them."""
    runs = completed(runs)
    manifest = runs.manifest
    clean_files = manifest.untouched | set(manifest.changed_lines) | {UTF16_OFFSETS}
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
        if leaked := sorted({r["source_file"] for r in hostile_rows} & unread):
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
    assert not problems, problems_message(problems)


def test_a_utf16_capture_gives_the_rows_of_the_original(spark, runs):
    """A capture re-encoded as UTF-16 with a byte-order mark replaces the original: its
    rows are the original's, every column (source_file and line numbers included)."""
    runs = completed(runs)
    pairs = {p: e.same_rows_as for p, e in runs.manifest.files.items() if e.same_rows_as}
    assert pairs == {UTF16_OFFSETS: UTF16_OFFSETS}
    got, want = (
        table(spark, config, "offsets").where(F.col("source_file") == UTF16_OFFSETS)
        for config in (runs.hostile, runs.clean)
    )
    assert len(want.collect()) > 100
    assert first_difference(got, want) is None, first_difference(got, want)


def test_a_json_line_holding_u2028_is_one_line_with_its_value_intact(spark, runs):
    runs = completed(runs)
    summary = runs.summaries.get(EXPORT)
    assert summary is not None, f"no line accounting logged for {EXPORT}"
    assert (summary["lines"], summary["quarantined"]) == (5, 3), summary
    members = (
        table(spark, runs.hostile, "members")
        .where(F.col("source_file") == EXPORT)
        .select("group_id", "consumer_id", "client_id", "line_number")
        .collect()
    )
    assert sorted(tuple(r) for r in members) == [
        (EXPORT_GROUP, "hostile-export-1", "hostile-export-1", 4),
        (SEPARATOR_GROUP, SEPARATOR_MEMBER, SEPARATOR_CLIENT, 5),
    ]
    states = table(spark, runs.hostile, "group_states").where(F.col("source_file") == EXPORT)
    assert sorted(r["group_id"] for r in states.collect()) == [EXPORT_GROUP, SEPARATOR_GROUP]


def test_a_group_id_with_a_bidi_override_is_stored_as_is_and_escaped_in_the_report(spark, runs):
    runs = completed(runs)
    problems = []
    for name, path in RTL_FILES.items():
        rows = table(spark, runs.hostile, name).where(F.col("group_id") == RTL_GROUP)
        got = {(r["source_file"], r["line_number"]) for r in rows.collect()}
        want = {(path, number) for number in runs.manifest.files[path].row_lines}
        if got != want:
            problems.append(f"{name}: rows of {RTL_GROUP!r} at {sorted(got)}, expected {want}")
    html = (Path(runs.hostile.warehouse) / "reports" / f"{DAY}.html").read_text(encoding="utf-8")
    if "\u202e" in html:
        problems.append("the report holds a raw U+202E")
    spelled = [RTL_GROUP.replace("\u202e", escaped) for escaped in ESCAPED_RLO]
    if not any(spelling in html for spelling in spelled):
        problems.append(f"the report does not show {RTL_GROUP!r} escaped (any of {spelled})")
    assert not problems, problems_message(problems)


def test_groups_no_hostile_case_touches_have_the_clean_runs_silver_and_gold(spark, runs):
    runs = completed(runs)
    touched = runs.manifest.touched
    problems = []
    for name in [*silver.TABLES, *gold.TABLES]:
        want = without_groups(table(spark, runs.clean, name), touched)
        if name in ("rebalance_events", "replay_metrics", "stickiness") and not want.take(1):
            problems.append(f"{name}: the clean run has no rows (vacuous comparison)")
        got = without_groups(table(spark, runs.hostile, name), touched)
        if name == "protocol_migration_plan":  # a rank across the fleet, hostile groups too
            got, want = got.drop("migration_order"), want.drop("migration_order")
        if difference := first_difference(got, want):
            problems.append(f"{name}: {difference}")
    assert not problems, problems_message(problems)


def test_the_group_whose_members_capture_lost_a_line_has_no_phantom_event(spark, runs):
    """The members capture that lost one of the group's lines is a gap for that group:
    no rebalance event the clean run does not have (a member leaving and rejoining)."""
    runs = completed(runs)
    cluster, group = runs.manifest.incomplete_group

    def events(config: Config) -> set[tuple]:
        frame = table(spark, config, "rebalance_events").where(
            (F.col("cluster") == cluster) & (F.col("group_id") == group)
        )
        # An event is what it says, not its place in the sequence (event_seq).
        columns = [c for c in frame.columns if c != "event_seq"]
        return {
            tuple(tuple(v) if isinstance(v, list) else v for v in r)
            for r in frame.select(*columns).collect()
        }

    clean, hostile = events(runs.clean), events(runs.hostile)
    assert clean, f"{group} has rebalance events in the clean run"
    assert hostile - clean == set()


def test_new_groups_of_the_hostile_cases_are_replayed(spark, runs):
    """The valid snapshots among the hostile lines are not lost: each new group has its
    initial rebalance event."""
    runs = completed(runs)
    replayed = {
        r["group_id"]
        for r in table(spark, runs.hostile, "rebalance_events")
        .where(F.col("cluster") == CLUSTER)
        .select("group_id")
        .distinct()
        .collect()
    }
    assert {EXPORT_GROUP, SEPARATOR_GROUP, RTL_GROUP} - replayed == set()
