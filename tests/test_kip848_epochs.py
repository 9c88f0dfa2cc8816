"""The KIP-848 epochs in bronze (issue 33 item 3): members.member_epoch, target_epoch and
upgraded from the 4.x members view, group_states.group_epoch and
target_assignment_epoch from its state view, and the same keys in jsonl snapshots; a
bad value quarantined with the reason."""

from __future__ import annotations

import json
from pathlib import Path

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.capture.schemas import TABLES

LAB = Path(__file__).resolve().parent / "data" / "lab-4" / "raw"
STATE = "prod-east/captures/2026-11-20T0910Z/consumer-groups-state.txt"
JSONL = "prod-east/captures/2026-11-20T0910Z/groups.jsonl"
# ConsumerGroupCommand.printStates with --verbose (4.x).
STATE_FORMAT = "%-15s %-25s %-20s %-20s %-15s %-25s %s"


def test_the_new_columns_come_last():
    assert TABLES["members"].names[-5:-2] == ["member_epoch", "target_epoch", "upgraded"]
    assert TABLES["group_states"].names[-2:] == ["group_epoch", "target_assignment_epoch"]


def test_the_lab_4_migration_captures_say_who_upgraded():
    """A live 4.4 lab: lab-migrate's classic consumers replaced one by one by consumer-
    protocol ones; the tool prints UPGRADED only while the group is mixed."""
    relative = "lab-4/captures/2026-11-29T075918Z/consumer-groups-members.txt"
    result = parse_capture(relative, (LAB / relative).read_bytes())
    assert not result.quarantine
    rows = {
        r["client_id"]: (r["member_epoch"], r["target_epoch"], r["upgraded"])
        for r in result.records("members")
        if r["group_id"] in ("lab-migrate", "lab-coop")
    }
    assert rows == {
        "lab-migrate-1": (3, 3, True),
        "lab-migrate-2": (3, 3, False),
        "lab-migrate-3": (3, 3, False),
        "lab-coop-2": (None, None, None),  # a classic group: `-` epochs
        "lab-coop-3": (None, None, None),
        "lab-coop-4": (None, None, None),
        "lab-coop-5": (None, None, None),
        "lab-coop-6": (None, None, None),
    }


def _state(*rows: tuple[str, ...]) -> bytes:
    header = STATE_FORMAT % (
        "GROUP",
        "COORDINATOR (ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        "#MEMBERS",
    )
    return "".join(f"\n{header}\n{STATE_FORMAT % row}\n" for row in rows).encode()


def test_the_verbose_state_view_gives_the_group_epochs():
    text = _state(
        ("lab-uniform", "127.0.0.1:45359  (3)", "uniform", "Stable", "8", "8", "2"),
        ("lab-coop", "127.0.0.1:45359  (3)", "cooperative-sticky", "Stable", "-", "-", "3"),
        ("bad", "127.0.0.1:45359  (3)", "uniform", "Stable", "x", "8", "2"),
    )
    result = parse_capture(STATE, text)
    rows = {
        r["group_id"]: (r["group_epoch"], r["target_assignment_epoch"], r["member_count"])
        for r in result.records("group_states")
    }
    assert rows == {"lab-uniform": (8, 8, 2), "lab-coop": (None, None, 3)}
    (problem,) = result.quarantine
    assert "GROUP-EPOCH" in problem["reason"] and problem["line"].startswith("bad ")


def _snapshot(member: dict, **group) -> bytes:
    line = {
        "group_id": "g",
        "captured_at": "2026-11-20T09:10:00Z",
        "type": "consumer",
        "state": "Reconciling",
        "members": [{"member_id": "m1", "assignment": [["t", 0]], **member}],
        **group,
    }
    return (json.dumps(line) + "\n").encode()


def test_jsonl_snapshots_may_carry_the_epochs():
    text = _snapshot(
        {"member_epoch": 4, "target_epoch": 5, "upgraded": False},
        group_epoch=5,
        target_assignment_epoch=5,
    )
    result = parse_capture(JSONL, text)
    (member,) = result.records("members")
    (state,) = result.records("group_states")
    assert (member["member_epoch"], member["target_epoch"], member["upgraded"]) == (4, 5, False)
    assert (state["group_epoch"], state["target_assignment_epoch"]) == (5, 5)
    (member,) = parse_capture(JSONL, _snapshot({})).records("members")
    assert (member["member_epoch"], member["target_epoch"], member["upgraded"]) == (None,) * 3


def test_a_jsonl_snapshot_with_a_mistyped_epoch_is_quarantined_whole():
    for member, group in (
        ({"upgraded": "false"}, {}),
        ({"member_epoch": 2**31}, {}),
        ({}, {"group_epoch": "5"}),
    ):
        result = parse_capture(JSONL, _snapshot(member, **group))
        assert not result.records("members") and len(result.quarantine) == 1, (member, group)
