"""Captures taken while a group rebalanced, as a live Kafka 4.4 cluster produced them
(tests/kafka_lab.py): the tool's views of one capture are taken a second or more apart,
so the members view can show a group mid-rebalance (the newcomer listed with no
partitions, everyone else still on the old assignment) while the state view, taken
after, already says Stable. The tool warns above that group's table; the replay must
not read that assignment as the generation's."""

from __future__ import annotations

import datetime as dt

import pytest
from test_bronze_batches import run as bronze
from test_replay_group import at, lag_rows, member_row
from test_replay_group import run as replay

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.replay.assignor_runs import replay_events
from fleet_rebalance.replay.rebalance_events import Coverage, group_history
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

MEMBERS_VIEW = """
Warning: Consumer group 'lab-range' is rebalancing.

GROUP           CONSUMER-ID                                      HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT
lab-range       lab-range-3-f6fdc70c-b68c-493e-9027-99058cb263fa /127.0.0.1      lab-range-3     3               -               audit:2;orders:4,5   -               -
lab-range       lab-range-4-c5278083-a682-4d52-9228-b8e2a34f084b /127.0.0.1      lab-range-4     0               -               -                    -               -

GROUP           CONSUMER-ID                                        HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT
lab-rdkafka     lab-rdkafka-1-dac34e7a-8b94-4112-9c9d-40eed8a0c660 /127.0.0.1      lab-rdkafka-1   2               -               clicks:0,2           -               -
"""  # noqa: E501
RELATIVE = "lab-4/captures/2026-11-20T225622Z/consumer-groups-members.txt"


def test_the_tools_warning_marks_the_groups_members_rows():
    result = parse_capture(RELATIVE, MEMBERS_VIEW.encode())
    assert result.rebalancing == {"lab-range"} and not result.quarantine
    file = {
        "relative": RELATIVE,
        "cluster": "lab-4",
        "captured_at": dt.datetime(2026, 11, 20, 22, 56, 22, tzinfo=dt.UTC),
        "group": None,
    }
    batches, _ = bronze(
        [file], lambda f: (parse_capture(f["relative"], MEMBERS_VIEW.encode()), None)
    )
    rows = pa_rows(batches["members"])
    assert {(r["group_id"], r["client_id"], r["rebalancing"]) for r in rows} == {
        ("lab-range", "lab-range-3", True),
        ("lab-range", "lab-range-4", True),
        ("lab-rdkafka", "lab-rdkafka-1", False),
    }


def pa_rows(batches) -> list[dict]:
    return [row for batch in batches for row in batch.to_pylist()]


def test_a_members_view_the_tool_warned_about_is_no_snapshot():
    """Given a capture whose members view shows a newcomer without partitions under the
    tool's warning, Then the replay takes the next capture's assignment, which conforms."""
    first, warned, settled = at(20, 0), at(20, 10), at(20, 20)
    captures = [
        member_row(first, "c1", [0, 1]),
        member_row(first, "c2", [2, 3]),
        {**member_row(warned, "c1", [0, 1]), "rebalancing": True},
        {**member_row(warned, "c2", [2, 3]), "rebalancing": True},
        {**member_row(warned, "c3", []), "rebalancing": True},
        member_row(settled, "c1", [0, 1]),
        member_row(settled, "c2", [2]),
        member_row(settled, "c3", [3]),
    ]
    for row in captures:
        row.setdefault("rebalancing", False)
    lags = lag_rows(first, [0] * 4) + lag_rows(warned, [0] * 4) + lag_rows(settled, [0] * 4)
    out = replay(captures, lags)
    events = out[out["_table"] == "rebalance_events"]
    assert events["trigger"].tolist() == ["initial", "member_joined"]
    metrics = out[(out["_table"] == "replay_metrics") & (out["assignor"] == "observed")]
    assert metrics["conforms"].dropna().tolist() == [True]


@pytest.mark.parametrize(
    "state",
    ["Unknown", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"],
)
def test_a_capture_in_a_rebalancing_or_unknown_state_is_no_snapshot(state):
    """Given a capture in `state` (librdkafka reports a consumer group's Assigning and
    Reconciling as Unknown) whose members show a newcomer without partitions and no
    warning from the tool, Then the replay takes the next capture's assignment;
    Expected: one member_joined event and the observed assignment conforming, as for a
    capture the tool warned about."""
    first, unsettled, settled = at(20, 0), at(20, 10), at(20, 20)
    captures = [
        member_row(first, "c1", [0, 1]),
        member_row(first, "c2", [2, 3]),
        member_row(unsettled, "c1", [0, 1], state=state),
        member_row(unsettled, "c2", [2, 3], state=state),
        member_row(unsettled, "c3", [], state=state),
        member_row(settled, "c1", [0, 1]),
        member_row(settled, "c2", [2]),
        member_row(settled, "c3", [3]),
    ]
    lags = lag_rows(first, [0] * 4) + lag_rows(unsettled, [0] * 4) + lag_rows(settled, [0] * 4)
    out = replay(captures, lags)
    events = out[out["_table"] == "rebalance_events"]
    assert events["trigger"].tolist() == ["initial", "member_joined"]
    metrics = out[(out["_table"] == "replay_metrics") & (out["assignor"] == "observed")]
    assert metrics["conforms"].dropna().tolist() == [True]


# A live Kafka 3.9.2 lab run (kafka_lab.py; the run recorded in tests/data/lab-3.9-straddle):
# rdkafka-3 joins lab-rdkafka (librdkafka's cooperative-sticky, classic protocol);
# generation 2 revokes clicks-1 from rdkafka-2, its follow-up round generation 3 hands it
# to rdkafka-3. The tools' capture stamped 00:13:10 straddles the rounds: its offsets
# view (taken first) shows clicks-1 ownerless, its members view rdkafka-3's final,
# topic-less `(1)`, which ingest cannot resolve; the 00:13:20 capture resolves it.
STRADDLE_LOG = """\
[2026-11-28 00:12:38,560] INFO [GroupCoordinator 2]: Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 0 (__consumer_offsets-4) (reason: Adding new member lab-rdkafka-2-00c922df-8343-40ab-9c24-6d9b05ae0a61 with group instance id None; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:12:44,698] INFO [GroupCoordinator 2]: Stabilized group lab-rdkafka generation 1 (__consumer_offsets-4) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:13:09,858] INFO [GroupCoordinator 2]: Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 1 (__consumer_offsets-4) (reason: Adding new member lab-rdkafka-3-4909f84c-810e-4d7d-a220-7683e43d14f2 with group instance id None; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:13:10,817] INFO [GroupCoordinator 2]: Stabilized group lab-rdkafka generation 2 (__consumer_offsets-4) with 3 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:13:11,260] INFO [GroupCoordinator 2]: Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 2 (__consumer_offsets-4) (reason: Leader lab-rdkafka-2-00c922df-8343-40ab-9c24-6d9b05ae0a61 re-joining group during Stable; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:13:12,089] INFO [GroupCoordinator 2]: Stabilized group lab-rdkafka generation 3 (__consumer_offsets-4) with 3 members (kafka.coordinator.group.GroupCoordinator)
"""  # noqa: E501
R1 = "lab-rdkafka-1-9262e4d3-0390-455c-9b1d-75b9055e6e3c"
R2 = "lab-rdkafka-2-00c922df-8343-40ab-9c24-6d9b05ae0a61"
R3 = "lab-rdkafka-3-4909f84c-810e-4d7d-a220-7683e43d14f2"


def straddle(*captures: tuple[int, dict[str, list[int] | None]]) -> list:
    """lab-rdkafka's captures at 00:13:<second>, each member -> its clicks partitions
    (None: unresolved), in capture order."""
    out, before = [], None
    for second, owned in captures:
        when = dt.datetime(2026, 11, 28, 0, 13, second)
        members = tuple(
            MemberSnapshot(
                member, None, ("clicks",),
                None if ps is None else tuple(TopicPartition("clicks", p) for p in ps),
                member[:13], "/127.0.0.1",
            )
            for member, ps in owned.items()
        )  # fmt: skip
        out.append(
            Snapshot(when, members, "Stable", "cooperative-sticky", {"clicks": 4}, follows=before)
        )
        before = when
    return out


def straddle_history(snapshots: list, more_log: str = "") -> list:
    rows = parse_capture("lab-3.9/logs/broker-2/server.log", (STRADDLE_LOG + more_log).encode())
    logs = [
        {**r, "logged_at": r["logged_at"].replace(tzinfo=None)}
        for r in rows.rows[COORDINATOR_EVENTS]
    ]
    hour = frozenset({dt.datetime(2026, 11, 28, 0)})
    return list(group_history(snapshots, logs, Coverage(hour), dt.date(2026, 11, 28)))


def test_a_capture_straddling_a_cooperative_groups_two_rounds_takes_the_next_ones_assignment():
    """Given the 00:13:00 capture (rdkafka-1 and -2), the straddling 00:13:10 one
    (rdkafka-3's assignment unresolved) and 00:13:20's (resolved, the same members, no
    generation logged since), Then event 2 (generations 2+3, which 00:13:10 shows) has
    rdkafka-3 on clicks-1 and an `observed` replay row, balanced as librdkafka left it."""
    events = straddle_history(
        straddle(
            (0, {R1: [0, 2], R2: [1, 3]}),
            (10, {R1: [0, 2], R3: None, R2: [3]}),
            (20, {R1: [0, 2], R3: [1], R2: [3]}),
        )
    )
    assert [(e.seq, e.source, e.generation, e.trigger) for e in events] == [
        (1, "captures", 1, "initial"),
        (2, "both", 2, "member_joined"),
    ]
    assert {m.member_id: m.assignment for m in events[1].snapshot.members}[R3] == (("clicks", 1),)
    rows = [r.values for r in replay_events(events, ["observed"]) if r.table == "replay_metrics"]
    assert [(m["event_seq"], m["member_count"], m["count_spread"]) for m in rows] == [
        (1, 2, 0),
        (2, 3, 1),
    ]


def test_an_unresolved_assignment_is_not_taken_across_a_logged_generation():
    """Given the same captures and members but a generation logged between 00:13:10 and
    00:13:20 (rdkafka-1's metadata update, a round of its own), Then 00:13:10's
    unresolved assignment stays unknown: event 2 has no `observed` row, not a guessed
    one."""
    rejoin = (
        "[2026-11-28 00:13:16,000] INFO [GroupCoordinator 2]: Preparing to rebalance group "
        "lab-rdkafka in state PreparingRebalance with old generation 3 (__consumer_offsets-4) "
        f"(reason: Updating metadata for member {R1} during Stable; client reason: "
        "subscription has changed) "
        "(kafka.coordinator.group.GroupCoordinator)\n"
        "[2026-11-28 00:13:17,000] INFO [GroupCoordinator 2]: Stabilized group lab-rdkafka "
        "generation 4 (__consumer_offsets-4) with 3 members "
        "(kafka.coordinator.group.GroupCoordinator)\n"
    )
    events = straddle_history(
        straddle(
            (0, {R1: [0, 2], R2: [1, 3]}),
            (10, {R1: [0, 2], R3: None, R2: [3]}),
            (20, {R1: [0, 2], R3: [1], R2: [3]}),
        ),
        rejoin,
    )
    assert [(e.seq, e.generation) for e in events] == [(1, 1), (2, 2), (3, 4)]
    assert {m.member_id: m.assignment for m in events[1].snapshot.members}[R3] is None
    rows = [r.values for r in replay_events(events, ["observed"]) if r.table == "replay_metrics"]
    assert [m["event_seq"] for m in rows] == [1, 3]
