"""Issue 56 end to end: the third round of hostile input through the nightly job.

The lab cluster of data/sample for 2026-11-20 is run twice: as it is (the clean run)
and with every case of tests/hostile_units.py (the hostile run), the latter through
jobs/nightly.py as spark-submit runs it. The job must exit 0; every case is quarantined
or skipped with its reason; no group is stored in part; no stored row is alien, cut,
doubled or negative; and the groups no case touches have the clean run's tables.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
import time
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from hostile_checks import (
    Runs,
    accounting_problems,
    clean_line_problems,
    completed,
    group_events,
    ingest_summaries,
    problems_message,
    quarantine_problems,
    recorded_problems,
    table,
    untouched_problems,
)
from hostile_tree import INCOMPLETE
from hostile_units import (
    CLUSTER,
    CUT_MEMBERS_GROUP,
    DAY,
    EMPTY_TOPIC_GROUP,
    FRAME_GROUPS,
    MAX64,
    MAX_LAG_GROUP,
    NEGATIVE_GROUP,
    STREAMS_GROUP,
    SURROGATE_EXPORTS,
    SURROGATE_GROUP,
    UNCHECKED_GROUP,
    WIDE_GROUP,
    WIDE_PARTITIONS,
    build_unit_tree,
    copy_clean_tree,
)

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline.nightly import run_steps

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
NIGHTLY = PROJECT / "jobs" / "nightly.py"
# What a rebalance event says happened.
EVENT = ["event_at", "trigger", "members", "member_count", "generation", "cause"]
# Columns that are offsets, lags or counts: Kafka prints `-` for unknown, never < 0.
NOT_NEGATIVE = {
    "offsets": ("current_offset", "log_end_offset", "lag", "start_offset"),
    "members": ("partition_count",),
    "group_states": ("member_count",),
    "replay_metrics": ("lag_total", "lag_max_member"),
    "lag_distribution": ("lag_max",),
    "group_health": ("max_lag",),
}


def run_nightly_job(spark, config: Config, directory: Path) -> tuple[int, str]:
    """jobs/nightly.py for DAY as spark-submit runs it, in this session: its exit status
    and stdout."""
    import fleet_rebalance.spark.session

    conf = directory / "nightly.yaml"
    conf.write_text(f"raw_root: {config.raw_root}\nwarehouse: {config.warehouse}\n")
    argv = [str(NIGHTLY), "--conf", str(conf), "--date", DAY.isoformat()]
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fleet_rebalance.spark.session, "build_session", lambda *a, **k: spark)
        patch.setattr(sys, "argv", argv)
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as caught:
            runpy.run_path(str(NIGHTLY), run_name="__main__")
    return caught.value.code, out.getvalue()


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory) -> Runs:
    base = tmp_path_factory.mktemp("hostile-units")
    clean_raw = copy_clean_tree(base / "clean-raw")
    manifest = build_unit_tree(clean_raw, base / "hostile-raw")
    clean = Config(raw_root=str(clean_raw), warehouse=str(base / "clean-wh"))
    hostile = Config(raw_root=str(manifest.root), warehouse=str(base / "hostile-wh"))
    started = time.monotonic()
    run_steps(spark, clean, DAY)
    with ingest_summaries() as summaries:
        status, out = run_nightly_job(spark, hostile, base)
    lines = out.splitlines()
    error = None if status == 0 else RuntimeError(f"nightly exited {status}: {lines[-3:]}")
    return Runs(
        clean, hostile, manifest, error, None, lines, summaries.found, time.monotonic() - started
    )


def test_the_nightly_exits_0_on_the_hostile_tree(runs):
    runs = completed(runs)
    assert runs.report_lines[-1].startswith("report: ")
    print(f"clean nightly + hostile nightly job: {runs.seconds:.0f}s")


def test_every_case_is_recorded_with_its_status_and_reason(spark, runs):
    problems = recorded_problems(spark, completed(runs), DAY)
    assert not problems, problems_message(problems)


def test_every_bad_line_is_quarantined_with_its_reason(spark, runs):
    problems = quarantine_problems(spark, completed(runs), DAY)
    assert not problems, problems_message(problems)


def test_every_line_of_every_file_read_is_accounted_for(spark, runs):
    problems = accounting_problems(spark, completed(runs), DAY)
    assert not problems, problems_message(problems)


def test_no_row_is_alien_cut_or_from_a_file_not_read(spark, runs):
    """Every line the cases left gives the clean run's rows; an added line gives rows
    only where the manifest says; nothing of a refused, damaged or copied file."""
    problems = clean_line_problems(spark, completed(runs))
    assert not problems, problems_message(problems)


def test_no_row_is_doubled(spark, runs):
    """A capture's view and its gzip copy: one row per partition per capture."""
    runs = completed(runs)
    key = ["cluster", "group_id", "topic", "partition", "captured_at"]
    twice = table(spark, runs.hostile, "offsets").groupBy(*key).count().where("count > 1")
    assert twice.collect() == []


def test_no_stored_offset_lag_or_count_is_negative(spark, runs):
    runs = completed(runs)
    problems = []
    for name, columns in NOT_NEGATIVE.items():
        frame = table(spark, runs.hostile, name)
        for column in columns:
            if (found := frame.where(F.col(column) < 0).count()) > 0:
                problems.append(f"{name}.{column}: {found} negative value(s)")
    assert not problems, problems_message(problems)


def test_groups_no_case_touches_have_the_clean_runs_silver_and_gold(spark, runs):
    problems = untouched_problems(spark, completed(runs))
    assert not problems, problems_message(problems)


def test_the_groups_whose_members_capture_lost_a_line_have_no_phantom_event(spark, runs):
    """A members capture that lost one of a group's lines (the streams member's task
    partition, a members view cut short) is a gap for that group: no rebalance the
    clean run does not have (a member leaving and coming back). An event is what
    happened: when, what, to which members (the capture it follows may be another: the
    gap is skipped)."""
    runs = completed(runs)
    lost = {
        text.split()[0]
        for (path, _), text in runs.manifest.quarantined_text.items()
        if path.endswith("members.txt") and runs.manifest.files[path].status == INCOMPLETE
    }
    assert lost == {STREAMS_GROUP, CUT_MEMBERS_GROUP}
    problems = []
    for group in sorted(lost):
        clean, hostile = group_events(spark, runs, CLUSTER, group, EVENT)
        if not clean:
            problems.append(f"{group}: no rebalance event in the clean run")
        if extra := hostile - clean:
            problems.append(f"{group}: events the clean run has not: {sorted(extra, key=str)}")
    assert not problems, problems_message(problems)


def test_a_snapshot_with_a_quarantined_part_stores_nothing_of_its_group(spark, runs):
    """D: the snapshot whose member holds a lone surrogate stores no row of its group at
    that capture (its other member, its state and offsets included): a gap between two
    sound snapshots, so no member leaves or joins. The snapshots with a negative offset
    (whose lag would pass int64) or an empty topic store nothing at all."""
    runs = completed(runs)
    torn = SURROGATE_EXPORTS[1]
    problems = []
    for name in ("members", "offsets", "group_states"):
        frame = table(spark, runs.hostile, name)
        if found := frame.where(F.col("source_file") == torn).count():
            problems.append(f"{name}: {found} row(s) of {torn}")
        groups = frame.where(F.col("group_id").isin(NEGATIVE_GROUP, EMPTY_TOPIC_GROUP))
        if found := groups.count():
            problems.append(f"{name}: {found} row(s) of the snapshots refused whole")
    events = (
        table(spark, runs.hostile, "rebalance_events")
        .where(F.col("group_id") == SURROGATE_GROUP)
        .select("trigger")
        .collect()
    )
    if [e["trigger"] for e in events] != ["initial"]:
        problems.append(f"{SURROGATE_GROUP}: events {events}, expected the initial one only")
    assert not problems, problems_message(problems)


def test_a_lag_of_int64s_largest_stays_exact_in_every_table(spark, runs):
    """B: a lag of 2^63 - 1 is stored, replayed and rolled up as that number (no float64
    on its way: it would come back as 2^63, or -2^63)."""
    runs = completed(runs)

    def values(name: str, column: str) -> set:
        frame = table(spark, runs.hostile, name).where(F.col("group_id") == MAX_LAG_GROUP)
        return {r[column] for r in frame.select(column).collect()}

    assert values("offsets", "lag") == {MAX64}
    assert values("lag_distribution", "lag_max") == {MAX64}
    assert values("group_health", "max_lag") == {MAX64}
    assert values("replay_metrics", "lag_total") == {MAX64}


def test_the_new_groups_of_sound_snapshots_are_replayed(spark, runs):
    """The wide member (20,000 partitions), the unverified zstd export's group and the
    first frame's group of the damaged one are replayed; the second frame's is not."""
    runs = completed(runs)
    replayed = {
        r["group_id"]
        for r in table(spark, runs.hostile, "rebalance_events").select("group_id").collect()
    }
    wanted = {MAX_LAG_GROUP, SURROGATE_GROUP, WIDE_GROUP, UNCHECKED_GROUP, FRAME_GROUPS[0]}
    assert wanted - replayed == set()
    assert FRAME_GROUPS[1] not in replayed
    wide = table(spark, runs.hostile, "members").where(F.col("group_id") == WIDE_GROUP)
    assert {r["partition_count"] for r in wide.collect()} == {WIDE_PARTITIONS}
