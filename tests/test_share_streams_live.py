"""Captures of every share/streams view taken from a live Kafka 4.4.0 lab (issue 33:
tests/share_streams_lab.py ran the groups and the tools; `--record` rewrites these
fixtures): each parses with no quarantined line into the rows the lab's own record
(live-4.4.0.truth.json: what it started, not what the tools printed) says it should.
No JVM, no Spark."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import ParseResult
from fleet_rebalance.capture.schemas import TABLES

DATA = Path(__file__).resolve().parent / "data" / "share_streams"
MARKER = "live-4.4.0"
TRUTH = json.loads((DATA / f"{MARKER}.truth.json").read_text())
SHARE, STREAMS = TRUTH["share_groups"], TRUTH["streams_groups"]
CONSUMER = TRUTH["consumer_groups"]
VIEWS = (
    "share_offsets",
    "share_offsets_verbose",
    "share_members",
    "share_members_verbose",
    "share_state",
    "share_state_verbose",
    "share_list_state",
    "streams_offsets",
    "streams_offsets_verbose",
    "streams_members",
    "streams_members_verbose",
    "streams_state",
    "streams_state_verbose",
    "streams_list_state",
    "groups_list",
    "consumer_groups_list_type",
    "consumer_groups_list_type_state",
)
TABLE = {"offsets": "offsets", "members": "members", "state": "group_states"}


def parse(view: str) -> ParseResult:
    name = f"{view}_{MARKER}.txt"
    return parse_capture(f"lab-share-streams/2026-11-27T0900Z/{name}", (DATA / name).read_bytes())


def rows(view: str) -> list[dict]:
    """A view's rows with every bronze column (bulk-read rows lack the new ones)."""
    result = parse(view)
    table = TABLE[result.kind]
    return [{c: r.get(c) for c in TABLES[table].names} for r in result.records(table)]


def active(groups: dict) -> dict:
    return {g: t for g, t in groups.items() if t["members"]}


def test_the_lab_ran_share_and_streams_groups_on_4_4_with_both_features_on():
    """Given the truth file, Then the lab was Kafka 4.4.0 with share.version and
    streams.version finalized at a level past 0 (on by default on a fresh cluster)."""
    assert TRUTH["kafka"] == "4.4.0"
    levels = dict(f.split("=", 1) for f in TRUTH["features"])
    assert int(levels["share.version"]) >= 1 and int(levels["streams.version"]) >= 1
    assert {p.name.removesuffix(f"_{MARKER}.txt") for p in DATA.glob(f"*_{MARKER}.txt")} == set(
        VIEWS
    )


@pytest.mark.parametrize("view", VIEWS)
def test_every_live_capture_parses_without_quarantine(view):
    """Given a view as the 4.4.0 tools printed it, Then it is recognised, every line is a
    row or structural (the tools' messages included), none quarantined."""
    result = parse(view)
    assert result.status == "ok", result.quarantine
    assert result.quarantined_lines == 0, result.quarantine
    assert result.reconciles()
    assert result.kind == ("state" if "list" in view else view.split("_")[1])


@pytest.mark.parametrize("verbose", ["", "_verbose"])
def test_share_views_match_the_lab(verbose):
    """Then the share offsets list every partition of the topic for every share group
    (the Empty one too), the members view the running group's members with their
    client ids and a partition each of the topic's between them, and the state view
    each group's state and member count, all with group_type share."""
    offsets = rows(f"share_offsets{verbose}")
    assert {(r["group_id"], r["topic"], r["partition"]) for r in offsets} == {
        (g, t["topic"], p) for g, t in SHARE.items() for p in range(t["partitions"])
    }
    assert {r["group_type"] for r in offsets} == {"share"}
    assert all(r["start_offset"] is not None and r["lag"] is not None for r in offsets)
    assert {r["current_offset"] for r in offsets} == {None}  # not a committed offset
    members = rows(f"share_members{verbose}")
    for group, truth in active(SHARE).items():
        mine = [r for r in members if r["group_id"] == group]
        assert sorted(r["client_id"] for r in mine) == truth["client_ids"]
        held = sorted((a["topic"], a["partition"]) for r in mine for a in r["assignment"])
        assert set(held) == {(truth["topic"], p) for p in range(truth["partitions"])}
    assert {r["group_id"] for r in members} == set(active(SHARE))
    # The plain --members layout is the consumer tool's too: only --verbose says share.
    assert {r["group_type"] for r in members} == ({"share"} if verbose else {None})
    states = rows(f"share_state{verbose}")
    assert {(r["group_id"], r["state"], r["member_count"], r["group_type"]) for r in states} == {
        (g, t["state"], t["members"], "share") for g, t in SHARE.items()
    }


@pytest.mark.parametrize("verbose", ["", "_verbose"])
def test_streams_views_match_the_lab(verbose):
    """Then the streams members view holds the running group's members (client ids
    `<client.id>-StreamThread-1-consumer`), every task of both subtopologies active on
    exactly one member, the standby tasks (group config streams.num.standby.replicas=1)
    each on a member that is not its active one, and in --verbose the target
    assignment equal to the current one (settled); the offsets view the group's input
    and repartition topics; the state view each group's state and member count (the
    Empty one too, after the tool's message)."""
    members = rows(f"streams_members{verbose}")
    (group,) = active(STREAMS)
    truth = STREAMS[group]
    assert {r["group_id"] for r in members} == {group}
    assert {r["group_type"] for r in members} == {"streams"}
    assert sorted(r["client_id"] for r in members) == truth["client_ids"]
    tasks = [(r["consumer_id"], t["kind"], t["subtopology"], t["partition"]) for r in members
             for t in r["tasks"]]  # fmt: skip
    kinds = {k for _, k, _, _ in tasks}
    assert {k for k in kinds if not k.startswith("target-")} == set(truth["task_kinds"])
    assert kinds == set(truth["task_kinds"]) | (
        {f"target-{k}" for k in truth["task_kinds"]} if verbose else set()
    )
    every = {(str(s), p) for s in range(truth["subtopologies"]) for p in range(truth["partitions"])}
    owners = Counter((s, p) for _, k, s, p in tasks if k == "active")
    assert set(owners) == every and set(owners.values()) == {1}
    actives = {(m, s, p) for m, k, s, p in tasks if k == "active"}
    standbys = {(m, s, p) for m, k, s, p in tasks if k == "standby"}
    assert standbys and not standbys & actives
    if verbose:
        for kind in truth["task_kinds"]:
            now = {(m, s, p) for m, k, s, p in tasks if k == kind}
            assert {(m, s, p) for m, k, s, p in tasks if k == f"target-{kind}"} == now
    offsets = rows(f"streams_offsets{verbose}")
    assert {r["group_id"] for r in offsets} == {group}
    topics = {r["topic"] for r in offsets}
    assert truth["topic"] in topics and any(t.endswith("-repartition") for t in topics)
    assert {(r["topic"], r["partition"]) for r in offsets} == {
        (t, p) for t in topics for p in range(truth["partitions"])
    }
    assert all(r["lag"] >= 0 for r in offsets)
    if verbose:
        assert all(r["lag"] == r["log_end_offset"] - r["current_offset"] for r in offsets)
    states = rows(f"streams_state{verbose}")
    assert {(r["group_id"], r["state"], r["member_count"], r["group_type"]) for r in states} == {
        (g, t["state"], t["members"], "streams") for g, t in STREAMS.items()
    }
    assert {r["assignment_strategy"] for r in states} == {"sticky"}  # 4.4's ASSIGNOR


def test_the_group_lists_match_the_lab():
    """Then kafka-groups.sh --list names every group with its type; the share and
    streams tools' --list --state their own groups with their states; and
    kafka-consumer-groups.sh --list --type only the consumer and classic groups (4.4
    lists no share or streams group there)."""
    every = {
        **{g: "share" for g in SHARE},
        **{g: "streams" for g in STREAMS},
        **CONSUMER,
    }
    listed = rows("groups_list")
    assert {r["group_id"]: r["group_type"] for r in listed} == every
    assert {r["state"] for r in listed} == {None}
    for view, groups in (("share_list_state", SHARE), ("streams_list_state", STREAMS)):
        assert {r["group_id"]: r["state"] for r in rows(view)} == {
            g: t["state"] for g, t in groups.items()
        }
    typed = rows("consumer_groups_list_type")
    assert {r["group_id"]: r["group_type"] for r in typed} == CONSUMER
    with_state = rows("consumer_groups_list_type_state")
    assert {(r["group_id"], r["group_type"], r["state"]) for r in with_state} == {
        (g, t, "Stable") for g, t in CONSUMER.items()
    }
