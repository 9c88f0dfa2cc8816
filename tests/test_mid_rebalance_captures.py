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

from fleet_rebalance.capture.parse import parse_capture

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
