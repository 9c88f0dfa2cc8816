"""The new coordinator's share and streams group lines (issue 33 item 1): each membership
or epoch line is an event, every other one a known line without a fact.

The messages are the 4.4 group coordinator's (GroupMetadataManager's log format strings,
read with `strings -a` from kafka-group-coordinator-4.4.0.jar), filled in as log4j
prints them."""

from __future__ import annotations

from fleet_rebalance.capture.coordinator_log import NO_FACT
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS, OK

PREFIX = "[GroupCoordinator id=1 topic=__consumer_offsets partition=12]"
LOGGER = "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
S, M = "[GroupId streams-app]", "[MemberId 5f2c1e7a]"
MESSAGES = [
    # (message, expected (event, group, generation, member, reason) or None: no fact)
    (
        "[GroupId share-billing] Member Ab3C joins the share group using the share protocol.",
        ("member_joined", "share-billing", None, "Ab3C", None),
    ),
    (
        "[GroupId share-billing] Bumped group epoch to 3 with metadata hash 807.",
        ("epoch_bumped", "share-billing", 3, None, None),
    ),
    (
        "[GroupId share-billing] Member Ab3C left the share group.",
        ("member_left", "share-billing", None, "Ab3C", None),
    ),
    (
        "[GroupId share-billing] Member Ab3C fenced from the group because the member session "
        "expired.",
        ("member_fenced", "share-billing", None, "Ab3C", "the member session expired"),
    ),
    (
        f"{S}{M} Member joins the streams group.",
        ("member_joined", "streams-app", None, "5f2c1e7a", None),
    ),
    (
        f"{S}{M} Bumped streams group epoch to 4 with metadata hash 518 and validated topic "
        "epoch 0.",
        ("epoch_bumped", "streams-app", 4, "5f2c1e7a", None),
    ),
    (
        f"{S}{M} Static member 5f2c1e7a with instance id app-1 joins the streams group.",
        ("static_member_joined", "streams-app", None, "5f2c1e7a", None),
    ),
    (
        f"{S}{M} Static member with instance id app-1 re-joins the streams group using the "
        "streams protocol. Created a new member 9e8d to replace the existing member 5f2c1e7a.",
        ("static_member_rejoined", "streams-app", None, "9e8d", None),
    ),
    (
        f"{S}{M} Static member 9e8d with instance id app-1 temporarily left the streams group.",
        ("member_left", "streams-app", None, "9e8d", "temporarily"),
    ),
    (
        f"{S}{M} Static member 9e8d with instance id app-1 left the streams group.",
        ("member_left", "streams-app", None, "9e8d", None),
    ),
    (
        f"{S}{M} Member 5f2c1e7a left the streams group.",
        ("member_left", "streams-app", None, "5f2c1e7a", None),
    ),
    (
        f"{S} Streams member 6a3d fenced from the group because the member session expired..",
        ("member_fenced", "streams-app", None, "6a3d", "the member session expired."),
    ),
    (f"{S}{M} Member updated its member metadata to StreamsGroupMember(memberId=5f2c1e7a).", None),
    (f"{S}{M} Shutdown requested for the streams application.", None),
    (f"{S} Clearing shutdown requested for the streams application.", None),
    (f"{S} Requested topology description push at topology epoch 2.", None),
    (
        f"{S} The configured task assignor 'sticky' is not available; falling back to the "
        "default assignor 'sticky'.",
        None,
    ),
    (
        f"{S} The refined assignment does not hand out as many active tasks as the target "
        "assignment. Reconciling towards the target assignment instead, so tasks that have "
        "to move do so without warming up first. Target assignment: {}, refined assignment: {}.",
        None,
    ),
    (
        f"{S} Cannot remove the process ID p1 from task 0_1 because the task is not owned by "
        "this process ID",
        None,
    ),
    (
        f"{S} Setting the process ID of 0-1 to p2 even though the partition is still owned by "
        "process ID p1",
        None,
    ),
    (
        f"{S} Size of assignment epochs 2 is not equal to partitions 3 for subtopology 0. "
        "Using default epoch 4 for all partitions.",
        None,
    ),
    ("[GroupId streams-app] Converted the empty streams group to a classic group.", None),
]


def log_text() -> str:
    return "\n".join(
        f"[2026-11-20 09:05:{second:02d},000] INFO {PREFIX} {message} {LOGGER}"
        for second, (message, _) in enumerate(MESSAGES)
    )


def test_share_and_streams_lines_are_events_or_known_lines():
    """Given the log, Then each membership or epoch line is its event with group, epoch,
    member and reason, the others are counted as lines without a fact, none unmatched."""
    result = parse_capture("lab/logs/broker-1/server.log", log_text().encode())
    assert result.status == OK and not result.quarantine
    got = [
        (e["line_number"], e["event"], e["group_id"], e["generation"], e["member_id"], e["reason"])
        for e in result.rows[COORDINATOR_EVENTS]
    ]
    expected = [
        (number, *event) for number, (_, event) in enumerate(MESSAGES, start=1) if event is not None
    ]
    assert got == expected
    assert dict(result.notes) == {NO_FACT: sum(event is None for _, event in MESSAGES)}
