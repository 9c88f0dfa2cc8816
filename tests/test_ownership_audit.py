"""ownership_audit (issue 33 item 5): partitions two members own at once at a settled
capture, and partitions with a committed offset, no owner and growing lag."""

from __future__ import annotations

import datetime as dt

import pytest

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.attention import Limits, attention, ownership_reasons
from fleet_rebalance.metrics.ownership_rules import (
    DOUBLE,
    ORPHANED,
    GroupCapture,
    PartitionCapture,
    audit,
    partition_captures,
    rebalancing,
)

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC)

LIMITS = Limits.of(MetricsConfig())


def at(minute: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minute)


def capture(minute: int, partition: int, owners: list[str] | None, **group) -> PartitionCapture:
    """Partition `orders-<partition>` at minute `minute` of a Stable group of two members
    whose assignments were captured; `group` overrides any field."""
    row: PartitionCapture = {
        "captured_at": at(minute),
        "topic": "orders",
        "partition": partition,
        "owners": owners,
        "current_offset": 100,
        "lag": 10,
        "offsets_owner": owners[0] if owners else None,
        "state": "Stable",
        "state_members": 2,
        "warned": False,
        "listed_members": 2,
        "assigning_members": 2,
        "unknown_assignments": 0,
    }
    return row | group  # type: ignore[return-value]


def test_a_group_capture_yields_its_unowned_rows_and_its_partitions_held_twice():
    """orders-0 held by a and b (and an unowned offsets row for it), orders-1 held by b
    twice over and by nobody else, orders-2 unowned and held by a alone (no candidate),
    orders-3 unowned and held by nobody, orders-4 held by a and b with no offsets row."""
    group: GroupCapture = {
        "captured_at": at(0),
        "holdings": [
            {
                "consumer_id": "a",
                "assignment": [{"topic": "orders", "partition": p} for p in (0, 2, 4)],
            },
            {
                "consumer_id": "b",
                "assignment": [{"topic": "orders", "partition": p} for p in (0, 1, 1, 4)],
            },
        ],
        "unowned": [
            {"topic": "orders", "partition": p, "current_offset": 100 + p, "lag": p}
            for p in (0, 2, 3)
        ],
        "state": "Stable",
        "state_members": 2,
        "warned": None,
        "listed_members": 2,
        "assigning_members": 2,
        "unknown_assignments": None,
    }
    got = {
        (c["partition"], tuple(c["owners"] or ()), c["current_offset"], c["lag"])
        for c in partition_captures(group)
    }
    assert got == {(0, ("a", "b"), 100, 0), (3, (), 103, 3), (4, ("a", "b"), None, None)}
    assert {c["unknown_assignments"] for c in partition_captures(group)} == {0}
    # A capture with nothing unowned and no partition held twice shows no candidate.
    assert partition_captures(group | {"unowned": None, "holdings": group["holdings"][:1]}) == []


# -- double ownership ----------------------------------------------------------------------


def test_a_partition_two_members_own_at_settled_captures_is_one_finding():
    """Given: orders-3 owned by a and b at minutes 0 and 5, by a alone at 10; orders-7 by
    b and c at minute 5 only; orders-1 by a alone throughout.
    Then: one double_ownership row per partition, with its captures and members."""
    rows = [
        capture(0, 3, ["a", "b"]),
        capture(5, 3, ["a", "b"]),
        capture(10, 3, ["a"]),
        capture(5, 7, ["b", "c"]),
        *[capture(m, 1, ["a"]) for m in (0, 5, 10)],
    ]
    assert audit(rows) == [
        {
            "topic": "orders",
            "partition": 3,
            "finding": DOUBLE,
            "first_captured_at": at(0),
            "last_captured_at": at(5),
            "captures": 2,
            "members": ["a", "b"],
            "first_lag": None,
            "last_lag": None,
            "group_state": "Stable",
        },
        {
            "topic": "orders",
            "partition": 7,
            "finding": DOUBLE,
            "first_captured_at": at(5),
            "last_captured_at": at(5),
            "captures": 1,
            "members": ["b", "c"],
            "first_lag": None,
            "last_lag": None,
            "group_state": "Stable",
        },
    ]


@pytest.mark.parametrize(
    "group",
    [
        {"state": "PreparingRebalance"},
        {"state": "CompletingRebalance"},
        {"state": "Assigning"},
        {"state": "Reconciling"},
        {"state": "Unknown"},
        {"state": None, "warned": True},  # the members view's own warning
    ],
)
def test_overlap_at_a_mid_rebalance_capture_is_no_double_ownership(group):
    """Given: a cooperative / KIP-848 handover caught mid-rebalance (old and new owner
    both list orders-3). Then: no finding."""
    rows = [capture(0, 3, ["a", "b"], **group), capture(5, 3, ["b"])]
    assert any(rebalancing(r) for r in rows)
    assert audit(rows) == []


def test_a_clean_day_has_no_finding():
    """Given: every partition owned by exactly one member at every capture, lag growing.
    Then: nothing."""
    rows = [capture(m, p, [f"m{p % 2}"], lag=10 * m) for m in range(0, 60, 5) for p in range(8)]
    assert audit(rows) == []


# -- orphaned ------------------------------------------------------------------------------


def test_an_unowned_committed_partition_whose_lag_grows_is_orphaned():
    """Given: orders-5 owned by nobody (both views) at minutes 0, 5, 10 of a group with
    members, lag 10, 40, 90. Then: one orphaned row, lag 10 -> 90 over 3 captures."""
    rows = [capture(m, 5, [], lag=lag) for m, lag in ((0, 10), (5, 40), (10, 90))]
    assert audit(rows) == [
        {
            "topic": "orders",
            "partition": 5,
            "finding": ORPHANED,
            "first_captured_at": at(0),
            "last_captured_at": at(10),
            "captures": 3,
            "members": None,
            "first_lag": 10,
            "last_lag": 90,
            "group_state": "Stable",
        }
    ]


def test_an_empty_group_whose_lag_grows_is_orphaned_per_partition():
    """Given: an Empty group (no members listed) with committed offsets on orders-0 and
    orders-1, lag growing on both, and on orders-2 lag standing still.
    Then: orders-0 and orders-1 orphaned (the consumers died); orders-2 not."""
    empty = {"state": "Empty", "state_members": 0, "listed_members": 0, "assigning_members": 0}
    rows = [
        capture(m, p, None, lag=lag, **empty)
        for m in (0, 5)
        for p, lag in ((0, 100 + m), (1, 7 + 2 * m), (2, 50))
    ]
    found = audit(rows)
    assert [(r["partition"], r["finding"], r["group_state"]) for r in found] == [
        (0, ORPHANED, "Empty"),
        (1, ORPHANED, "Empty"),
    ]
    assert (found[1]["first_lag"], found[1]["last_lag"]) == (7, 17)


@pytest.mark.parametrize(
    ("why", "override"),
    [
        ("one capture only", None),
        ("lag shrinking", "shrinking"),
        ("the offsets view names an owner", {"offsets_owner": "a"}),
        ("no committed offset", {"current_offset": None}),
        ("lag unknown", {"lag": None}),
        ("mid-rebalance", {"state": "PreparingRebalance"}),
        ("the tool warned", {"warned": True}),
        ("assignments not captured", {"unknown_assignments": 2, "assigning_members": 0}),
        # The old coordinator lists every member with an empty assignment mid-rebalance.
        ("old coordinator view", {"assigning_members": 0}),
        (
            "membership unknown",
            {"state": None, "state_members": None, "listed_members": 0, "assigning_members": 0},
        ),
    ],
)
def test_no_orphan_without_every_piece_of_evidence(why, override):
    """Given: orders-5 unowned with lag 10 then 15, one piece of evidence taken away.
    Then: no finding (with all of it, the control, one)."""
    control = [capture(m, 5, [], lag=10 + m) for m in (0, 5)]
    assert [r["finding"] for r in audit(control)] == [ORPHANED]
    if override is None:
        rows = control[:1]
    elif override == "shrinking":
        rows = [capture(0, 5, [], lag=90), capture(5, 5, [], lag=10)]
    else:
        rows = [capture(m, 5, [], **({"lag": 10 + m} | override)) for m in (0, 5)]
    assert audit(rows) == [], why


def test_orphaned_counts_only_the_captures_that_show_it():
    """Given: orders-5 unowned at 0 (lag 10), owned at 5, unowned at 10 (lag 30), owned
    and doubly owned later in a rebalance. Then: orphaned over captures 0 and 10."""
    rows = [
        capture(0, 5, [], lag=10),
        capture(5, 5, ["a"], lag=20),
        capture(10, 5, [], lag=30),
        capture(15, 5, ["a", "b"], state="Reconciling"),
    ]
    [found] = audit(rows)
    assert (found["finding"], found["captures"], found["first_lag"], found["last_lag"]) == (
        ORPHANED,
        2,
        10,
        30,
    )
    assert (found["first_captured_at"], found["last_captured_at"]) == (at(0), at(10))


# -- attention -----------------------------------------------------------------------------


def test_attention_names_the_partitions():
    row = {
        "double_owned_partitions": ["orders-3", "orders-7"],
        "orphaned_partitions": ["audit-0", "audit-1", "audit-2"],
    }
    assert ownership_reasons(row) == [
        "2 partitions owned by more than one member at once (orders-3, orders-7)",
        "3 partitions with no owner and growing lag (audit-0, audit-1, audit-2)",
    ]
    assert attention(row, LIMITS) == (2, ownership_reasons(row))
    many = {"orphaned_partitions": [f"t-{p}" for p in range(7)]}
    assert ownership_reasons(many) == [
        "7 partitions with no owner and growing lag (t-0, t-1, t-2, t-3, t-4 and 2 more)"
    ]
    one = {"double_owned_partitions": ["orders-3"], "orphaned_partitions": None}
    assert ownership_reasons(one) == [
        "1 partition owned by more than one member at once (orders-3)"
    ]
    assert attention({"orphaned_partitions": []}, LIMITS) == (0, [])


def test_burrow_err_keeps_its_severity_beside_an_ownership_finding():
    row = {
        "last_status": "ERR",
        "worst_status": "ERR",
        "partitions": 4,
        "non_ok_partitions": 1,
        "double_owned_partitions": ["orders-3"],
    }
    severity, reasons = attention(row, LIMITS)
    assert severity == 3
    assert reasons == [
        "Burrow ERR at the last capture: 1 of 4 partitions not OK",
        "1 partition owned by more than one member at once (orders-3)",
    ]


# -- the gold step on tiny bronze tables ---------------------------------------------------


def bronze_frame(spark, name, rows):
    from fleet_rebalance.pipeline import bronze

    schema = bronze.TABLES[name]
    full = [{f.name: None for f in schema.fields} | r for r in rows]
    return spark.createDataFrame([tuple(r[f.name] for f in schema.fields) for r in full], schema)


def member_row(group, minute, member, partitions, source="c/members.txt", warned=False):
    return {
        "cluster": "c",
        "group_id": group,
        "consumer_id": member,
        "assignment": [("orders", p) for p in partitions],
        "partition_count": len(partitions),
        "captured_at": at(minute),
        "capture_date": DAY,
        "source_file": source,
        "rebalancing": warned,
    }


def state_row(group, minute, state, members):
    return {
        "cluster": "c",
        "group_id": group,
        "state": state,
        "member_count": members,
        "captured_at": at(minute),
        "capture_date": DAY,
        "source_file": "c/state.txt",
    }


def offsets_row(group, minute, partition, lag, owner):
    return {
        "cluster": "c",
        "group_id": group,
        "topic": "orders",
        "partition": partition,
        "current_offset": 1000,
        "log_end_offset": 1000 + lag,
        "lag": lag,
        "consumer_id": owner,
        "captured_at": at(minute),
        "capture_date": DAY,
        "source_file": "c/offsets.txt",
        "line_number": partition,
    }


def fleet(spark):
    """dirty: a owns orders-0,1,3 and b orders-2,3 at minutes 0, 5 and 10 (orders-3 twice),
    orders-5 committed and owned by nobody, its lag growing; at minute 15 mid-rebalance
    both own orders-1. A jsonl copy of minute 0's members lists the same members again.
    clean: one owner per partition. dead: Empty, orders-0's lag growing. shared: a share
    group whose two members are both assigned orders-0 and orders-1."""
    owned = {"a": [0, 1, 3], "b": [2, 3]}
    members, states, offsets = [], [], []
    for minute in (0, 5, 10, 15):
        rebalancing = minute == 15
        for m, parts in owned.items():
            parts = [*parts, 1] if rebalancing and m == "b" else parts
            members.append(member_row("dirty", minute, m, parts, warned=rebalancing))
            members.append(member_row("clean", minute, m, [p for p in owned[m] if p != 3]))
        state = "CompletingRebalance" if rebalancing else "Stable"
        states += [state_row("dirty", minute, state, 2), state_row("clean", minute, "Stable", 2)]
        states.append(state_row("dead", minute, "Empty", 0))
        for p in range(4):
            owner = "a" if p in (0, 1) else "b"
            offsets.append(offsets_row("dirty", minute, p, 5 + minute, owner))
            offsets.append(offsets_row("clean", minute, p, 5 + minute, owner))
        offsets.append(offsets_row("dirty", minute, 5, 100 + minute, None))
        offsets.append(offsets_row("dead", minute, 0, 300 + 2 * minute, None))
    members += [member_row("dirty", 0, m, p, source="c/export.jsonl") for m, p in owned.items()]
    # A share group's members fetch from one partition together: no double ownership.
    members += [member_row("shared", 0, m, [0, 1]) | {"group_type": "share"} for m in "ab"]
    return (
        bronze_frame(spark, "members", members),
        bronze_frame(spark, "group_states", states),
        bronze_frame(spark, "offsets", offsets),
    )


@pytest.mark.spark
def test_the_gold_step_finds_the_dirty_groups_findings_and_nothing_in_the_clean_one(spark):
    from fleet_rebalance.metrics.offset_samples import offset_samples
    from fleet_rebalance.pipeline import gold
    from fleet_rebalance.pipeline.metrics import ownership_audit

    def local(minute):  # Spark hands timestamps back naive, in the session's zone (UTC)
        return at(minute).replace(tzinfo=None)

    members, states, offsets = fleet(spark)
    got = ownership_audit(members, states, offset_samples(offsets), DAY)
    assert got.schema == gold.TABLES["ownership_audit"]
    rows = sorted(
        (r.asDict() for r in got.collect()), key=lambda r: (r["group_id"], r["partition"])
    )
    common = {"cluster": "c", "date": DAY, "topic": "orders"}
    assert rows == [
        common
        | {
            "group_id": "dead",
            "partition": 0,
            "finding": ORPHANED,
            "first_captured_at": local(0),
            "last_captured_at": local(15),
            "captures": 4,
            "members": None,
            "first_lag": 300,
            "last_lag": 330,
            "group_state": "Empty",
        },
        common
        | {
            "group_id": "dirty",
            "partition": 3,
            "finding": DOUBLE,
            "first_captured_at": local(0),
            "last_captured_at": local(10),
            "captures": 3,
            "members": ["a", "b"],
            "first_lag": None,
            "last_lag": None,
            "group_state": "Stable",
        },
        common
        | {
            "group_id": "dirty",
            "partition": 5,
            "finding": ORPHANED,
            "first_captured_at": local(0),
            "last_captured_at": local(10),
            "captures": 3,
            "members": None,
            "first_lag": 100,
            "last_lag": 110,
            "group_state": "Stable",
        },
    ]


@pytest.mark.spark
def test_group_health_carries_the_findings_as_attention(spark):
    from pyspark.sql import Row

    from fleet_rebalance.metrics.group_health import group_health
    from fleet_rebalance.pipeline import gold

    def frame(name, rows):
        schema = gold.TABLES[name]
        full = [{f.name: None for f in schema.fields} | r for r in rows]
        return spark.createDataFrame([Row(**r) for r in full], schema)

    g = {"cluster": "c", "date": DAY, "group_id": "dirty", "topic": "orders"}
    findings = [(10, DOUBLE), (3, DOUBLE), (5, ORPHANED)]
    tables = {name: frame(name, []) for name in gold.TABLES if name != "group_health"}
    tables["ownership_audit"] = frame(
        "ownership_audit", [g | {"partition": p, "finding": f} for p, f in findings]
    )
    [row] = group_health(tables, LIMITS, gold.TABLES["group_health"]).collect()
    assert (row["group_id"], row["severity"]) == ("dirty", 2)
    assert row["attention"] == [
        "2 partitions owned by more than one member at once (orders-3, orders-10)",
        "1 partition with no owner and growing lag (orders-5)",
    ]
