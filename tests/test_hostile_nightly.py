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

import time
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from hostile_checks import (
    Runs,
    accounting_problems,
    clean_line_problems,
    completed,
    first_difference,
    group_events,
    ingest_summaries,
    problems_message,
    quarantine_problems,
    recorded_problems,
    table,
    untouched_problems,
)
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
    build_hostile_tree,
    copy_clean_tree,
)

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline.nightly import report, run_steps

pytestmark = pytest.mark.spark
# How the report may spell U+202E so that it shows instead of acting.
ESCAPED_RLO = ("\\u202e", "\\u202E", "&#x202e;", "&#x202E;", "&#8238;")


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
    problems = recorded_problems(spark, completed(runs), DAY)
    assert not problems, problems_message(problems)


def test_every_hostile_line_is_quarantined_with_its_reason(spark, runs):
    problems = quarantine_problems(spark, completed(runs), DAY)
    # Nothing a link out of raw_root leads to is ever read into a table.
    quarantine = table(spark, runs.hostile, "quarantine").collect()
    leaked = [r["source_file"] for r in quarantine if PASSWD_MARK in (r["line"] or "")]
    if leaked:
        problems.append(f"/etc/passwd's lines stored from {leaked}")
    assert not problems, problems_message(problems)


def test_every_line_of_every_file_is_accounted_for(spark, runs):
    """For every file read: lines = parsed + quarantined + structural as ingest logs it,
    its lines are the file's physical lines, and its recorded rows and quarantined
    counts are the rows and quarantine rows stored for it."""
    problems = accounting_problems(spark, completed(runs), DAY)
    assert not problems, problems_message(problems)


def test_every_clean_line_gives_the_clean_runs_bronze_rows(spark, runs):
    """The rows (and quarantine rows) of every line the hostile cases left as it was,
    in every file of the clean tree, are exactly the clean run's; an added or replaced
    line gives rows only where the manifest says (a new group's); the files whose
    bytes are unchanged are recorded as the clean run records them."""
    problems = clean_line_problems(spark, completed(runs))
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
    problems = untouched_problems(spark, completed(runs))
    assert not problems, problems_message(problems)


def test_the_group_whose_members_capture_lost_a_line_has_no_phantom_event(spark, runs):
    """The members capture that lost one of the group's lines is a gap for that group:
    no rebalance event the clean run does not have (a member leaving and rejoining)."""
    runs = completed(runs)
    cluster, group = runs.manifest.incomplete_group
    clean, hostile = group_events(spark, runs, cluster, group)
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
