"""rebalance_timeline is the replay's generations (replay/generations.py) as rows: the
rules the Spark SQL version lacked or left to chance, and, on the sample nightly, every
replayed group's generations against the table's rows."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import pyarrow as pa
import pyspark.sql.functions as F

from fleet_rebalance.config import Config
from fleet_rebalance.metrics.timeline import LOG_COLUMNS, ROW_SCHEMA, log_rows_of, timeline_rows
from fleet_rebalance.pipeline.replay import capture_keys, log_rows
from fleet_rebalance.replay.generations import group_generations
from fleet_rebalance.replay.group import _log_rows as replay_log_rows

DAY = dt.date(2026, 11, 20)
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def line(event, seconds, generation=None, member=None, reason=None, text="", broker=1):
    return {
        "logged_at": dt.datetime(2026, 11, 20, 8) + dt.timedelta(seconds=seconds),
        "event": event,
        "generation": generation,
        "member_id": member,
        "reason": reason,
        "line": text,
        "broker": broker,
    }


def columns(rows, *names):
    return [tuple(r[n] for n in names) for r in rows]


def test_a_group_that_went_empty_ends_its_generation_with_no_members():
    """GroupCoordinator.onCompleteJoin logs `Group g with generation 3 is now empty` in
    place of `Stabilized`: generation 3 ended there with 0 members (the Spark SQL
    timeline left it open and its successor's members_before unknown)."""
    lines = [
        line("stabilized", 0, 2, text="Stabilized group g generation 2 with 2 members", broker=1),
        line("member_left", 100, member="m1"),
        line("member_left", 100.5, member="m2"),
        line("prepare_rebalance", 100.5, 2, reason="removing member m2 on LeaveGroup"),
        line("group_empty", 101, 3, text="Group g with generation 3 is now empty"),
        line("prepare_rebalance", 200, 3, reason="Adding new member m3", broker=2),
        line("stabilized", 203, 4, text="Stabilized group g generation 4 with 1 members", broker=3),
    ]
    rows = timeline_rows(("c", "g"), group_generations(lines), DAY)
    got = columns(
        rows,
        "generation",
        "duration_ms",
        "cause",
        "members_before",
        "members_after",
        "coordinator_broker",
    )
    assert got == [
        (2, None, None, None, 2, 1),  # the log begins after its start: the end line's broker
        (3, 500, "removing member m2 on LeaveGroup", 2, 0, 1),
        (4, 3000, "Adding new member m3", 0, 1, 2),  # the start line's broker
    ]


def test_rows_do_not_depend_on_the_order_lines_arrive_in():
    """Two coordinators (a failover, an online migration) log a start of the same
    number at the same instant: the first line by text decides, in any input order."""
    lines = [
        line("prepare_rebalance", 0, 5, reason="Adding new member m7", text="Preparing b"),
        line("epoch_bumped", 0, 6, text="[GroupId g] Bumped group epoch to 6.", broker=2),
        line("member_joined", 0, member="m7", text="[GroupId g] Member m7 joins"),
        line("target_assignment", 0.2, 6, reason="uniform", text="Computed 6", broker=2),
    ]
    seen = {
        tuple(map(str, timeline_rows(("c", "g"), group_generations(list(order)), DAY)))
        for order in itertools.permutations(lines)
    }
    assert len(seen) == 1
    [row] = timeline_rows(("c", "g"), group_generations(lines), DAY)
    # "Preparing b" sorts before "[GroupId g] Bumped ...": its generation, reason and broker.
    assert columns([row], "generation", "protocol", "cause", "coordinator_broker") == [
        (6, "classic", "Adding new member m7", 1)
    ]


def test_an_epochs_member_lines_are_the_ones_the_replay_gives_it():
    """The cause of an epoch without a reason counts the member lines group_generations
    attaches to it (from MEMBER_LEAD before the bump to its target assignment), not
    every line since the epoch before began: a static member's `temporarily left` a
    minute earlier bumped nothing."""
    lines = [
        line("epoch_bumped", 0, 4),
        line("target_assignment", 0.1, 4, reason="uniform"),
        line("member_left", 60, member="s1", reason="temporarily"),
        line("member_fenced", 119.9, member="m2", reason="the member session expired"),
        line("member_left", 119.95, member="m3"),
        line("epoch_bumped", 120, 5),
        line("target_assignment", 120.2, 5, reason="uniform"),
    ]
    generations = group_generations(lines)
    rows = timeline_rows(("c", "g"), generations, DAY)
    assert columns(rows, "generation", "protocol", "cause", "duration_ms") == [
        (4, "consumer", None, 100),
        (5, "consumer", "member_fenced, member_left", 200),
    ]
    assert generations[1].cause()[0] == "session_timeout"  # the replay's, from the same lines


def test_a_generation_of_the_day_before_is_not_a_row():
    lines = [
        line("prepare_rebalance", -9 * 3600, 1, reason="Adding new member m1"),
        line("stabilized", -9 * 3600 + 3, 2, text="Stabilized group g generation 2 with 1 members"),
        line("prepare_rebalance", 10, 2, reason="Adding new member m2"),
        line("stabilized", 13, 3, text="Stabilized group g generation 3 with 2 members"),
    ]
    rows = timeline_rows(("c", "g"), group_generations(lines), DAY)
    assert columns(rows, "date", "generation", "members_before", "members_after") == [
        (DAY, 3, 1, 2)
    ]


def test_the_arrow_rows_are_read_as_the_replay_reads_them():
    """Spark hands instants over as UTC timestamps: naive UTC datetimes, as the replay's;
    a null line is "" (MemberLine.line is text)."""
    utc = dt.datetime(2026, 11, 20, 8, tzinfo=dt.UTC)
    table = pa.table(
        {
            "cluster": ["c"],
            "group_id": ["g"],
            "logged_at": pa.array([utc], pa.timestamp("us", tz="UTC")),
            "event": ["member_left"],
            "generation": pa.array([None], pa.int32()),
            "member_id": ["m1"],
            "reason": pa.array([None], pa.string()),
            "line": pa.array([None], pa.string()),
            "broker": pa.array([3], pa.int32()),
        }
    )
    [row] = log_rows_of(table)
    assert list(row) == list(LOG_COLUMNS)
    assert (row["logged_at"], row["line"], row["broker"]) == (dt.datetime(2026, 11, 20, 8), "", 3)


def test_the_replays_generations_are_the_timelines_rows(spark, clean_nightly):
    """Every group the sample nightly replayed: its generations, from the log rows the
    replay reads as the replay converts them, are rebalance_timeline's rows."""
    from fleet_rebalance.storage import read_table

    config = Config(raw_root=str(SAMPLE), warehouse=str(clean_nightly))
    logs = log_rows(spark, config, DAY, capture_keys(spark, config, DAY)).toPandas()
    expected = [
        row
        for (cluster, group), frame in logs.groupby(["cluster", "group_id"], sort=True)
        for row in timeline_rows(
            (cluster, group),
            group_generations(replay_log_rows(pa.Table.from_pandas(frame, preserve_index=False))),
            DAY,
        )
    ]
    assert len({(r["cluster"], r["group_id"]) for r in expected}) >= 20
    assert {r["protocol"] for r in expected} == {"classic", "consumer"}
    assert any(r["follow_up"] for r in expected)
    # The replay reads no broker column: the coordinator is the table's alone.
    compared = [n for n in ROW_SCHEMA.names if n != "coordinator_broker"]
    want = spark.createDataFrame(expected, ROW_SCHEMA).select(*compared)
    table = read_table(spark, str(clean_nightly / "rebalance_timeline")).where(
        F.col("date") == F.lit(DAY)
    )
    got = table.join(want.select("cluster", "group_id").distinct(), ["cluster", "group_id"])
    got = got.select(*compared)
    assert got.count() == want.count() == len(expected)
    assert got.exceptAll(want).take(3) == want.exceptAll(got).take(3) == []
