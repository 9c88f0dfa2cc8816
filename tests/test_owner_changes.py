"""owner_changes on hand-built Arrow rows: partition_flapping's counts without Spark."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from fleet_rebalance.metrics.owner_changes import SCHEMA, owner_changes

DAY = dt.date(2026, 11, 20)
ROWS = pa.schema(
    [
        ("cluster", pa.string()),
        ("group_id", pa.string()),
        ("date", pa.date32()),
        ("assignor", pa.string()),
        ("event_seq", pa.int32()),
        ("member_id", pa.string()),
        ("partitions", pa.list_(pa.struct([("topic", pa.string()), ("partition", pa.int32())]))),
    ]
)


def owns(seq, member, *parts, assignor="observed", topic="t"):
    return {
        "cluster": "c",
        "group_id": "g",
        "date": DAY,
        "assignor": assignor,
        "event_seq": seq,
        "member_id": member,
        "partitions": [{"topic": topic, "partition": p} for p in parts],
    }


def counts(*rows):
    got = owner_changes(pa.Table.from_pylist(list(rows), schema=ROWS))
    assert got.schema == SCHEMA
    return {
        (r["assignor"], r["topic"], r["partition"]): (
            r["owned_events"],
            r["owner_changes"],
            r["distinct_owners"],
        )
        for r in got.to_pylist()
    }


def test_owner_changes_per_partition_and_assignor_in_event_order():
    rows = [
        owns(3, "A", 0, 1),
        owns(1, "A", 0, 1),
        owns(2, "B", 0),
        owns(2, "A", 0, assignor="range"),
    ]
    assert counts(*rows) == {
        ("observed", "t", 0): (3, 2, 2),  # A, B, A: the rows arrive in any order
        ("observed", "t", 1): (2, 0, 1),  # held at events 1 and 3, unowned at 2
        ("range", "t", 0): (1, 0, 1),
    }


def test_a_partition_held_twice_in_one_event_counts_in_member_order():
    # Event 2 lists partition 0 under B and A: ordered A, B whichever row came first.
    for rows in (
        [owns(1, "A", 0), owns(2, "B", 0), owns(2, "A", 0), owns(3, "B", 0)],
        [owns(3, "B", 0), owns(2, "A", 0), owns(2, "B", 0), owns(1, "A", 0)],
    ):
        assert counts(*rows) == {("observed", "t", 0): (4, 1, 2)}  # A A B B


def test_null_member_is_no_change_and_no_owner_and_topics_are_apart():
    rows = [owns(1, "A", 0), owns(2, None, 0), owns(3, "B", 0), owns(1, "A", 0, topic="u")]
    assert counts(*rows) == {
        ("observed", "t", 0): (3, 0, 2),  # A -> null -> B: SQL's != on null is no change
        ("observed", "u", 0): (1, 0, 1),
    }


def test_no_partitions_held_gives_no_rows():
    assert counts(owns(1, "A"), owns(2, "B")) == {}
