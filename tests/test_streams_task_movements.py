"""task_movements (issue 33 item 2): a streams group's tasks whose owner changed between
two captures, active and standby apart.

The captures are tests/data/share_streams/streams_members_4.1.txt (the tool's 4.1
layout) and two later states of the same group written in that layout: at 00:20
pD1m... hands active task 1_2 to cX9d... and its warmup 0_0 becomes a standby; at
00:40 JZ7c... leaves, its active tasks go to pD1m... and its standby to cX9d...."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.metrics.streams_tasks import INPUT_COLUMNS, TASK, group_task_movements
from fleet_rebalance.pipeline import bronze, gold

DATA = Path(__file__).resolve().parent / "data" / "share_streams"
DAY = dt.date(2026, 11, 20)
FIRST = (DATA / "streams_members_4.1.txt").read_text()
JZ7, PD1, CX9 = "JZ7cV4vPRB2Xlq0bY9ABCw", "pD1mYcX0T6Ga0bQy7uV3Lg", "cX9dE8fG7hI6jK5lM4nO3p"


def assignments(text: str, member: str, new: str) -> str:
    """`text` with `member`'s ASSIGNMENTS (the last column, `%s`) replaced by `new`."""
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if f" {member} " in line:
            cut = line.index("-consumer", line.index(member)) + len("-consumer")
            lines[n] = line[:cut] + (f" {new}" if new else " ")
    return "\n".join(lines)


SECOND = assignments(
    assignments(FIRST, PD1, "ACTIVE: 0:[2]; 1:[1]; STANDBY: 0:[0]; "), CX9, "ACTIVE: 1:[2]; "
)
THIRD = "\n".join(
    line
    for line in assignments(
        assignments(SECOND, PD1, "ACTIVE: 0:[0,1,2]; 1:[0,1]; "),
        CX9,
        "ACTIVE: 1:[2]; STANDBY: 0:[2]; ",
    ).split("\n")
    if JZ7 not in line
)


def rows(text: str, at: dt.datetime, path: str = "members.txt") -> list[dict]:
    """The bronze members rows of one capture at `at`, INPUT_COLUMNS."""
    result = parse_capture(f"lab/{at:%Y-%m-%dT%H%MZ}/{path}", text.encode())
    assert result.quarantined_lines == 0, result.quarantine
    return [
        {**{c: r.get(c) for c in INPUT_COLUMNS}, "captured_at": at}
        for r in result.records("members")
    ]


def at(hour: int, minute: int, day: dt.date = DAY) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, minute)


YESTERDAY_LAST = at(23, 40, DAY - dt.timedelta(days=1))
CAPTURES = [
    *rows(FIRST, YESTERDAY_LAST),
    *rows(FIRST, at(0, 0)),
    *rows(SECOND, at(0, 20)),
    *rows(THIRD, at(0, 40)),
]


def test_the_written_captures_parse_as_the_tool_prints_them():
    """Given the two later captures, Then they parse clean, with their members' tasks."""
    third = {r["consumer_id"]: r["tasks"] for r in rows(THIRD, at(0, 40))}
    assert sorted(third) == sorted([PD1, CX9])
    assert {(t["kind"], t["subtopology"], t["partition"]) for t in third[CX9]} == {
        ("active", "1", 2),
        ("standby", "0", 2),
    }


def test_moves_are_counted_per_kind_between_consecutive_captures():
    """Given yesterday's last capture and today's three, Then 00:00 (same as 23:40) is no
    row; 00:20 moves one active task and makes one standby (no move); 00:40, when JZ7c
    leaves, moves its three active tasks and its standby."""
    found = group_task_movements(CAPTURES, DAY)
    assert [
        (r["captured_at"], r["previous_captured_at"], r["active_moved"], r["standby_moved"])
        for r in found
    ] == [(at(0, 20), at(0, 0), 1, 0), (at(0, 40), at(0, 20), 3, 1)]
    second, third = found
    assert second["joined"] == second["left"] == []
    assert [(t["kind"], t["subtopology"], t["partition"]) for t in second["tasks"]] == [
        ("active", "1", 2),
        ("standby", "0", 0),
    ]
    assert second["tasks"][0]["previous_owners"] == [PD1]
    assert second["tasks"][0]["owners"] == [CX9]
    assert second["tasks"][1]["previous_owners"] == []  # a warmup became a standby: no move
    assert (third["members"], third["left"], third["joined"]) == (2, [JZ7], [])
    assert (third["active_tasks"], third["standby_tasks"]) == (6, 1)
    moved = {
        (t["kind"], t["subtopology"], t["partition"]): (t["previous_owners"], t["owners"])
        for t in third["tasks"]
    }
    assert moved == {
        ("active", "0", 0): ([JZ7], [PD1]),
        ("active", "0", 1): ([JZ7], [PD1]),
        ("active", "1", 0): ([JZ7], [PD1]),
        ("standby", "0", 0): ([PD1], []),
        ("standby", "0", 2): ([JZ7], [CX9]),
    }


def test_the_first_capture_is_compared_with_yesterdays_last_and_nothing_else():
    """Given no capture before the date, Then the date's first capture is no row (nothing
    to compare with); given only yesterday's captures, Then no row at all."""
    today = [r for r in CAPTURES if r["captured_at"].date() == DAY]
    assert [r["captured_at"] for r in group_task_movements(today, DAY)] == [at(0, 20), at(0, 40)]
    only_yesterday = [r for r in CAPTURES if r["captured_at"].date() != DAY]
    assert group_task_movements(only_yesterday, DAY) == []
    changed_overnight = [*rows(SECOND, YESTERDAY_LAST), *rows(SECOND, at(0, 0))]
    assert group_task_movements(changed_overnight, DAY) == []


def test_two_files_of_one_capture_are_read_once():
    """Given the same capture in two files (plain and --verbose), Then the one whose path
    sorts last is read: no member counted twice, no task held by two members."""
    twice = [
        *rows(FIRST, at(0, 0)),
        *rows(SECOND, at(0, 20), "a-members.txt"),
        *rows(SECOND, at(0, 20), "b-members.txt"),
    ]
    (found,) = group_task_movements(twice, DAY)
    assert (found["members"], found["active_moved"]) == (3, 1)


@pytest.mark.spark
def test_the_gold_frame_has_its_schema_and_the_streams_rows_only(spark):
    """Given the captures and a consumer group's member (no task list), When task_movements
    runs in Spark, Then it gives the two rows in gold.TABLES' schema, none for the
    consumer group."""
    from pyspark.sql.types import ArrayType, StringType, StructField, StructType

    from fleet_rebalance.metrics.streams_tasks import task_movements

    bronze_task = ArrayType(
        StructType([f for f in TASK.fields if f.name in ("kind", "subtopology", "partition")])
    )
    schema = StructType(
        [
            StructField("cluster", StringType()),
            StructField("group_id", StringType()),
            StructField("captured_at", bronze.TS),
            StructField("consumer_id", StringType()),
            StructField("source_file", StringType()),
            StructField("tasks", bronze_task),
        ]
    )
    consumer = {
        "cluster": "lab",
        "group_id": "orders-app",
        "captured_at": at(0, 20),
        "consumer_id": "c1",
        "source_file": "x",
        "tasks": None,
    }
    members = spark.createDataFrame([*CAPTURES, consumer], schema)
    frame = task_movements(members, DAY, gold.TABLES["task_movements"])
    assert frame.schema == gold.TABLES["task_movements"]
    got = frame.orderBy("captured_at").collect()
    assert [(r["group_id"], r["active_moved"], r["standby_moved"]) for r in got] == [
        ("orders-enricher", 1, 0),
        ("orders-enricher", 3, 1),
    ]
    assert got[1]["tasks"][0].asDict() == {
        "kind": "active",
        "subtopology": "0",
        "partition": 0,
        "previous_owners": [JZ7],
        "owners": [PD1],
    }
