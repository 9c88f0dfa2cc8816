"""Rebalance causes: reasons of each coordinator release, generations from exact log
lines, events matched to generations (pure, no Spark), then the Spark glue as an
oracle, and the table on data/sample (clean_nightly)."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import pyspark.sql.functions as F
import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.metrics.causes import CAUSES, member_cause, reason_cause
from fleet_rebalance.metrics.event_matching import Event, Member, capture_cause, match_events
from fleet_rebalance.metrics.generations import group_generations
from fleet_rebalance.pipeline import gold, silver

LOGS = Path(__file__).resolve().parent / "data" / "broker_logs"
DAY = dt.date(2026, 11, 20)
OLD = "(kafka.coordinator.group.GroupCoordinator)"
NEW = "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
NEW_PREFIX = "[GroupCoordinator id=1 topic=__consumer_offsets partition=12]"


def at(hh: int, mm: int, ss: float = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, hh, mm, tzinfo=dt.UTC) + dt.timedelta(seconds=ss)


def log_rows(text: str) -> list[dict]:
    """coordinator_events rows of a broker log, as the ingest writes them."""
    result = parse_capture("lab/logs/broker-3/server.log", text.encode())
    return [r for r in result.rows.get(COORDINATOR_EVENTS, []) if r["group_id"]]


def causes_by_group(rows: list[dict]) -> dict[str, list[tuple]]:
    """group -> [(generation, cause, duration_ms)] in time order."""
    rows = sorted(rows, key=lambda r: r["group_id"])
    found = {
        group: [(g.generation, g.cause()[0], g.duration_ms) for g in group_generations(list(grp))]
        for group, grp in itertools.groupby(rows, key=lambda r: r["group_id"])
    }
    return {group: generations for group, generations in found.items() if generations}


# -- reasons: the strings prepareRebalance gets, per release ------------------------------


@pytest.mark.parametrize(
    ("reason", "cause", "members", "instance"),
    [
        # 2.0 .. 2.2 (GroupCoordinator.scala)
        ("Adding new member consumer-1-0aa1", "scale_out", ("consumer-1-0aa1",), None),
        ("removing member consumer-1-0aa1 on LeaveGroup", "scale_in", ("consumer-1-0aa1",), None),
        (
            "Updating metadata for member consumer-1-0aa1",
            "metadata_change",
            (),
            None,
        ),
        ("error when storing group assignment during SyncGroup (member: c-1)", "unknown", (), None),
        # 2.3 / 2.4: `instanceid`, no space
        ("Adding new member c-1 with group instanceid None", "scale_out", ("c-1",), None),
        # 2.5 .. 2.8
        (
            "Adding new member pod-a-4f5a with group instance id Some(pod-a)",
            "scale_out",
            ("pod-a-4f5a",),
            "pod-a",
        ),
        ("leader c-1 re-joining group during Stable", "leader_rejoin", ("c-1",), None),
        ("Member c-1 joining group during CompletingRebalance", "metadata_change", (), None),
        ("removing member c-1 on heartbeat expiration", "session_timeout", ("c-1",), None),
        # 3.x (KIP-800 client reasons from 3.2)
        (
            "Removing member c-1 on LeaveGroup; client reason: the consumer is being closed",
            "scale_in",
            ("c-1",),
            None,
        ),
        (
            "Removing member c-1 on LeaveGroup; client reason: consumer poll timeout has expired.",
            "poll_timeout",
            ("c-1",),
            None,
        ),
        (
            "Removing member c-1 on LeaveGroup; client reason: the consumer unsubscribed from all "
            "topics",
            "subscription_changed",
            ("c-1",),
            None,
        ),
        (
            "Leader c-1 re-joining group during Stable; client reason: cached metadata has changed",
            "partitions_added",
            ("c-1",),
            None,
        ),
        (
            "Leader c-1 re-joining group during Stable; client reason: rebalance failed due to "
            "UnknownMemberIdException",
            "leader_rejoin",
            ("c-1",),
            None,
        ),
        (
            "Updating metadata for member c-1 during Stable; client reason: subscription has "
            "changed",
            "subscription_changed",
            (),
            None,
        ),
        (
            "Adding new member c-2 with group instance id None; client reason: need to re-join "
            "with the given member-id: c-2",
            "scale_out",
            ("c-2",),
            None,
        ),
        (
            "Removing HashSet(c-1, c-2) on pending sync request expiration",
            "session_timeout",
            ("c-1", "c-2"),
            None,
        ),
        ("Removing Set(c-1) on pending sync request expiration", "session_timeout", ("c-1",), None),
        (
            "Error NOT_COORDINATOR when storing group assignment during SyncGroup (member: c-1)",
            "unknown",
            (),
            None,
        ),
        (
            "Updating metadata for static member pod-a-1 with instance id pod-a; client reason: "
            "not provided",
            "metadata_change",
            (),
            None,
        ),
        (
            "Group's selectedProtocol will change because static member pod-a-1 with instance id "
            "pod-a joined with change of protocol; client reason: not provided",
            "metadata_change",
            (),
            None,
        ),
        # 3.7 .. 4.x (GroupMetadataManager.java)
        (
            "Adding new member c-3 with group instance id null; client reason: not provided",
            "scale_out",
            ("c-3",),
            None,
        ),
        ("explicit `LeaveGroup` request for (c-1, c-2) members.", "scale_in", ("c-1", "c-2"), None),
        ("removing member c-1 on heartbeat expiration.", "session_timeout", ("c-1",), None),
        ("Removing [c-1] on pending sync request expiration.", "session_timeout", ("c-1",), None),
        (
            "Member c-1 is joining group during CompletingRebalance; client reason: not provided",
            "metadata_change",
            (),
            None,
        ),
        (
            "Error COORDINATOR_NOT_AVAILABLE when storing group assignmentduring SyncGroup "
            "(member: c-1).",
            "unknown",
            (),
            None,
        ),
        (
            "Freshly-loaded group g (size 12) is over capacity 10. Rebalancing in order to give a "
            "chance for consumers to commit offsets",
            "unknown",
            (),
            None,
        ),
        ("Downgrade group g from consumer to classic.", "metadata_change", (), None),
        (None, "unknown", (), None),
    ],
)
def test_each_release_reason_names_its_cause(reason, cause, members, instance):
    """Given: a reason string exactly as a release's coordinator builds it.
    Then: its cause, and the member ids (and static instance) it names."""
    reading = reason_cause(reason)
    assert (reading.cause, reading.members, reading.instance) == (cause, members, instance)
    assert reading.cause in CAUSES


@pytest.mark.parametrize(
    ("event", "reason", "cause"),
    [
        ("member_joined", None, "scale_out"),
        ("member_left", None, "scale_in"),
        ("member_left", "the consumer is being closed", "scale_in"),
        ("member_left", "consumer poll timeout has expired.", "poll_timeout"),
        ("member_failed", None, "session_timeout"),
        ("member_failed", "remove dynamic members who haven't joined", "poll_timeout"),
        ("member_failed", "removed members who haven't sent their sync request", "session_timeout"),
        ("member_fenced", "the member session expired.", "session_timeout"),
        ("member_fenced", "its session expired", "session_timeout"),
        ("member_fenced", "it failed to revoke partitions within 300000ms", "poll_timeout"),
        ("member_fenced", "it failed to transition from epoch 19 within 300000ms", "poll_timeout"),
        (
            "member_fenced",
            "the classic member failed to join within the rebalance timeout",
            "poll_timeout",
        ),
        ("member_fenced", "the member failed to sync within timeout", "session_timeout"),
        ("member_fenced", "heartbeat", "unknown"),
        ("static_member_rejoined", None, "deploy_restart"),
    ],
)
def test_member_lines_name_their_cause(event, reason, cause):
    assert member_cause(event, reason) == cause


# -- generations from exact log lines of each release family ------------------------------


def test_generations_of_the_release_family_logs():
    """Given: tests/data/broker_logs, one real-form log per release family.
    Then: each group's generations with the cause and duration read from the log
    (expected: the reasons and member lines of each family, read by hand)."""
    expected = {
        "kafka-1.x-server.log": {
            # 1.x: no reason; the member lines before the start decide
            "orders-processor": [
                (12, "unknown", 3003),
                (13, "session_timeout", 3002),
                (14, "scale_in", None),  # the group went Empty: never stabilized
            ]
        },
        "kafka-2.3-2.8-server.log": {
            "audit-archiver": [(9, "scale_out", 3002)],
            "billing-enricher": [
                (41, "scale_out", 3001),
                (42, "scale_in", 3003),
                (43, "session_timeout", None),
            ],
            "orders-archiver": [(6, "session_timeout", 3002)],
        },
        "kafka-3.x-old-coordinator-server.log": {
            "orders-processor": [
                (42, "scale_out", 3002),
                (43, "scale_in", 5003),
                (44, "session_timeout", None),
            ],
            "payments-ledger": [(7, "scale_out", 3001), (8, "session_timeout", None)],
        },
        "kafka-4.x-new-coordinator-server.log": {
            # KIP-848 epochs: the member lines before each bump
            "fraud-enricher": [
                (17, "scale_out", 1),
                (18, "scale_out", 1),
                (19, "scale_in", 1),
                (20, "poll_timeout", None),  # fenced: failed to revoke within 300000ms
                (21, "scale_out", None),
            ],
            "search-archiver": [
                (10, "scale_out", 3001),
                (11, "scale_in", 3001),
                (12, "session_timeout", None),
            ],
            "share-billing": [(3, "scale_out", None)],
            "streams-app": [(2, "scale_out", None)],
        },
    }
    for name, groups in expected.items():
        assert causes_by_group(log_rows((LOGS / name).read_text())) == groups, name


def test_client_reasons_of_a_3x_coordinator():
    """Given: a 3.x broker's lines for three rebalances, exact GroupCoordinator.scala 3.6
    text, with the KIP-800 client reasons of a consumer whose poll loop stalled, a
    leader that saw partitions added, and a member that changed its subscription.
    Then: poll_timeout, partitions_added, subscription_changed, each with the line."""
    prepare = "Preparing to rebalance group orders in state PreparingRebalance with old generation"
    lines = [
        f"[2026-11-20 09:00:00,000] INFO [GroupCoordinator 3]: {prepare} 7 (__consumer_offsets-44)"
        " (reason: Removing member consumer-orders-1-aa on LeaveGroup; client reason: consumer"
        f" poll timeout has expired.) {OLD}",
        "[2026-11-20 09:00:00,001] INFO [GroupCoordinator 3]: Member MemberMetadata(memberId="
        "consumer-orders-1-aa, groupInstanceId=None, clientId=consumer-orders-1, clientHost=/10.0"
        ".0.1, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range))"
        " has left group orders through explicit `LeaveGroup`; client reason: consumer poll "
        f"timeout has expired. {OLD}",
        "[2026-11-20 09:00:03,000] INFO [GroupCoordinator 3]: Stabilized group orders generation 8"
        f" (__consumer_offsets-44) with 2 members {OLD}",
        f"[2026-11-20 09:10:00,000] INFO [GroupCoordinator 3]: {prepare} 8 (__consumer_offsets-44)"
        " (reason: Leader consumer-orders-2-bb re-joining group during Stable; client reason: "
        f"cached metadata has changed) {OLD}",
        "[2026-11-20 09:10:02,500] INFO [GroupCoordinator 3]: Stabilized group orders generation 9"
        f" (__consumer_offsets-44) with 2 members {OLD}",
        f"[2026-11-20 09:20:00,000] INFO [GroupCoordinator 3]: {prepare} 9 (__consumer_offsets-44)"
        " (reason: Updating metadata for member consumer-orders-3-cc during Stable; client "
        f"reason: subscription has changed) {OLD}",
        "[2026-11-20 09:20:01,000] INFO [GroupCoordinator 3]: Stabilized group orders generation 10"
        f" (__consumer_offsets-44) with 2 members {OLD}",
    ]
    rows = log_rows("\n".join(lines) + "\n")
    generations = group_generations(rows)
    assert [(g.generation, *g.cause(), g.duration_ms) for g in generations] == [
        (8, "poll_timeout", lines[0], 3000),
        (9, "partitions_added", lines[3], 2500),
        (10, "subscription_changed", lines[5], 1000),
    ]
    assert generations[0].removed == {"consumer-orders-1-aa"}
    assert generations[1].removed == generations[1].added == set()  # a rejoin moves no one


def test_new_coordinator_leave_line_carries_the_client_reason():
    """Given: a 3.9/4.x classic group: the leave line (client reason) before the
    Preparing line, whose reason names the member but not why it left; then a KIP-848
    group whose member's session expired before an epoch bump.
    Then: poll_timeout decided by the leave line; session_timeout by the fence line."""
    member = "consumer-search-2-6b7c"
    lines = [
        f"[2026-11-20 09:01:20,000] INFO {NEW_PREFIX} [Group search] Member {member} has left"
        f" group through explicit `LeaveGroup` request; client reason: consumer poll timeout "
        f"has expired. {NEW}",
        f"[2026-11-20 09:01:20,001] INFO {NEW_PREFIX} Preparing to rebalance group search in "
        f"state PreparingRebalance with old generation 10 (reason: explicit `LeaveGroup` request"
        f" for ({member}) members.). {NEW}",
        f"[2026-11-20 09:01:23,002] INFO {NEW_PREFIX} Stabilized group search generation 11 with"
        f" 2 members. {NEW}",
        f"[2026-11-20 09:05:40,000] INFO {NEW_PREFIX} [GroupId fraud] Member cD2eF3gH4iJ5kL6mN7oP8q"
        f" fenced from the group because the member session expired.. {NEW}",
        f"[2026-11-20 09:05:40,000] INFO {NEW_PREFIX} [GroupId fraud] Bumped group epoch to 20. "
        f"{NEW}",
        f"[2026-11-20 09:05:40,003] INFO {NEW_PREFIX} [GroupId fraud] Computed a new target "
        f"assignment for epoch 20 with 'uniform' assignor in 3ms. {NEW}",
    ]
    rows = log_rows("\n".join(lines) + "\n")
    search = group_generations([r for r in rows if r["group_id"] == "search"])
    fraud = group_generations([r for r in rows if r["group_id"] == "fraud"])
    assert [(g.generation, *g.cause(), g.duration_ms) for g in search] == [
        (11, "poll_timeout", lines[0], 3001)
    ]
    assert [(g.generation, g.protocol, *g.cause(), g.duration_ms) for g in fraud] == [
        (20, "consumer", "session_timeout", lines[3], 3)
    ]
    assert fraud[0].removed == {"cD2eF3gH4iJ5kL6mN7oP8q"}


# -- matching events to generations ---------------------------------------------------------


def member(member_id: str, host: str | None = None, client: str | None = None, instance=None):
    return Member(member_id, host, client, instance)


A1 = member("consumer-g-1-aa", "/10.0.0.1", "consumer-g-1")
A2 = member("consumer-g-1-bb", "/10.0.0.2", "consumer-g-1")
B1 = member("consumer-g-1-cc", "/10.0.0.1", "consumer-g-1")  # A1's pod restarted
C9 = member("consumer-g-9-zz", "/10.0.0.9", "consumer-g-9")


def classic(generation: int, started: dt.datetime, reason: str, seconds: float = 3) -> list[dict]:
    """The two coordinator_events rows of one classic generation."""
    line = f"Preparing ... old generation {generation - 1} (reason: {reason})"
    return [
        {
            "logged_at": started,
            "event": "prepare_rebalance",
            "generation": generation - 1,
            "member_id": None,
            "reason": reason,
            "line": line,
        },
        {
            "logged_at": started + dt.timedelta(seconds=seconds),
            "event": "stabilized",
            "generation": generation,
            "member_id": None,
            "reason": None,
            "line": f"Stabilized group g generation {generation}",
        },
    ]


def test_an_event_no_log_covers_takes_its_cause_from_the_captures():
    """Given: events of each kind and no coordinator line at all.
    Then: the capture cause, no generation or duration, and the capture fact."""
    events = [
        Event(2, at(3, 0), at(2, 40), "members_replaced", (A1, A2), (B1, A2)),
        Event(3, at(3, 20), at(3, 0), "member_joined", (B1, A2), (B1, A2, C9)),
        Event(4, at(3, 40), at(3, 20), "member_left", (B1, A2, C9), (B1, A2)),
        Event(5, at(4, 0), at(3, 40), "partitions_added", (B1, A2), (B1, A2)),
        Event(6, at(4, 20), at(4, 0), "subscription_changed", (B1, A2), (B1, A2)),
        Event(7, at(4, 40), at(4, 20), "members_replaced", (B1, A2), (C9, A2)),
    ]
    got = [
        (c.seq, c.cause, c.evidence, c.generation, c.duration_ms) for c in match_events(events, [])
    ]
    assert got == [
        (
            2,
            "deploy_restart",
            "members capture 2026-11-20T03:00Z: consumer-g-1-aa replaced by consumer-g-1-cc "
            "with host /10.0.0.1",
            None,
            None,
        ),
        (
            3,
            "scale_out",
            "members capture 2026-11-20T03:20Z: consumer-g-9-zz joined (2 -> 3 members)",
            None,
            None,
        ),
        (
            4,
            "scale_in",
            "members capture 2026-11-20T03:40Z: consumer-g-9-zz left (3 -> 2 members)",
            None,
            None,
        ),
        (
            5,
            "partitions_added",
            "members capture 2026-11-20T04:00Z: a subscribed topic has more partitions",
            None,
            None,
        ),
        (
            6,
            "subscription_changed",
            "members capture 2026-11-20T04:20Z: a member's subscription changed",
            None,
            None,
        ),
        (
            7,
            "unknown",
            "members capture 2026-11-20T04:40Z: consumer-g-1-cc left and consumer-g-9-zz joined "
            "(2 -> 2 members), no shared host, client id or instance id",
            None,
            None,
        ),
    ]


def test_two_generations_between_two_captures_are_one_event():
    """Given: a pod restart between the 03:00 and 03:20 captures: generation 8 removes
    consumer-g-1-aa (closed) and generation 9 adds consumer-g-1-cc on the same host;
    then a scale-out seen at 03:40 (generation 10).
    Then: the 03:20 event matches generation 9 (the later of the two that agree), a
    deploy_restart with its duration; generation 8 matches no event; 03:40 matches 10."""
    rows = [
        *classic(
            8,
            at(3, 5),
            "Removing member consumer-g-1-aa on LeaveGroup; client reason: the consumer is being "
            "closed",
        ),
        *classic(
            9,
            at(3, 5, 30),
            "Adding new member consumer-g-1-cc with group instance id None; client reason: not "
            "provided",
            2.5,
        ),
        *classic(
            10,
            at(3, 30),
            "Adding new member consumer-g-9-zz with group instance id None; client reason: not "
            "provided",
        ),
    ]
    events = [
        Event(2, at(3, 20), at(3, 0), "members_replaced", (A1, A2), (B1, A2)),
        Event(3, at(3, 40), at(3, 20), "member_joined", (B1, A2), (B1, A2, C9)),
    ]
    got = match_events(events, group_generations(rows))
    assert [(c.seq, c.cause, c.generation, c.duration_ms) for c in got] == [
        (2, "deploy_restart", 9, 2500),
        (3, "scale_out", 10, 3000),
    ]
    assert got[0].evidence == (
        "Preparing ... old generation 8 (reason: Adding new member consumer-g-1-cc with group "
        "instance id None; client reason: not provided) | members capture 2026-11-20T03:20Z: "
        "consumer-g-1-aa replaced by consumer-g-1-cc with host /10.0.0.1"
    )
    assert got[0].only_replacements


def test_a_generation_outside_the_window_or_about_other_members_matches_nothing():
    """Given: a member that left between 03:00 and 03:20; a generation at 02:50 that
    removed it (before the previous capture, which still showed it: a clock far off),
    and one at 03:10 that removed a member no capture shows.
    Then: no generation matches; the captures decide (scale_in)."""
    rows = [
        *classic(
            5,
            at(2, 50),
            "Removing member consumer-g-1-bb on LeaveGroup; client reason: the consumer is being "
            "closed",
        ),
        *classic(6, at(3, 10), "removing member consumer-g-7-ee on heartbeat expiration"),
    ]
    event = Event(2, at(3, 20), at(3, 0), "member_left", (A1, A2), (A1,))
    [got] = match_events([event], group_generations(rows))
    assert (got.cause, got.generation, got.duration_ms) == ("scale_in", None, None)


def test_a_generation_naming_no_member_matches_by_its_cause():
    """Given: a KIP-848 epoch bump with no member lines (its cause is unknown from the
    log) between two captures, a member joining.
    Then: an unnamed generation fits any trigger (generic) and matches; its cause comes
    from the captures, the generation and duration from the log."""
    rows = [
        {
            "logged_at": at(3, 10),
            "event": "epoch_bumped",
            "generation": 4,
            "member_id": None,
            "reason": None,
            "line": "[GroupId g] Bumped group epoch to 4.",
        },
        {
            "logged_at": at(3, 10, 0.003),
            "event": "target_assignment",
            "generation": 4,
            "member_id": None,
            "reason": "uniform",
            "line": "Computed a new target assignment for epoch 4",
        },
    ]
    event = Event(2, at(3, 20), at(3, 0), "member_joined", (A1,), (A1, C9))
    [got] = match_events([event], group_generations(rows))
    assert (got.cause, got.generation, got.duration_ms) == ("scale_out", 4, 3)
    assert got.evidence == (
        "[GroupId g] Bumped group epoch to 4. | members capture 2026-11-20T03:20Z: "
        "consumer-g-9-zz joined (1 -> 2 members)"
    )


def test_a_partitions_added_event_looks_back_to_the_previous_event():
    """Given: partitions added at 04:37 (the leader saw cached metadata change); the
    members captures of 04:40 still show the old counts (the topics capture in force is
    from 03:00) and 05:00 shows the new ones; the group's previous event was at 01:00.
    Then: the 05:00 event matches the 04:37 generation (its window opens at 01:00)."""
    rows = classic(
        3,
        at(4, 37),
        "Leader consumer-g-1-aa re-joining group during Stable; client reason: cached metadata "
        "has changed",
    )
    events = [
        Event(2, at(1, 0), at(0, 40), "member_joined", (A1,), (A1, A2)),
        Event(3, at(5, 0), at(4, 40), "partitions_added", (A1, A2), (A1, A2)),
    ]
    got = match_events(events, group_generations(rows))
    assert [(c.seq, c.cause, c.generation) for c in got] == [
        (2, "scale_out", None),
        (3, "partitions_added", 3),
    ]


def test_a_static_member_back_after_its_session_timeout_is_a_deploy_restart():
    """Given: 3.x exact reasons: static member pod-a's old id removed on heartbeat
    expiration (generation 8), its new id added with instance id Some(pod-a) (9); the
    captures show pod-a under a new member id.
    Then: deploy_restart (a static member's instance restarting past its session
    timeout), matched to the removal (the generation whose id the event shows leaving
    and the one that joined tie; the later wins)."""
    old = member("pod-a-5a6b", "/10.42.4.7", "consumer-ledger-pod-a", "pod-a")
    new = member("pod-a-6c7d", "/10.42.4.9", "consumer-ledger-pod-a", "pod-a")
    rows = [
        *classic(8, at(9, 4), "removing member pod-a-5a6b on heartbeat expiration"),
        *classic(
            9,
            at(9, 5),
            "Adding new member pod-a-6c7d with group instance id Some(pod-a); client reason: not "
            "provided",
        ),
    ]
    event = Event(2, at(9, 20), at(9, 0), "members_replaced", (old, A2), (new, A2))
    [got] = match_events([event], group_generations(rows))
    assert (got.cause, got.generation) == ("deploy_restart", 9)
    assert got.evidence.endswith("pod-a-5a6b replaced by pod-a-6c7d with instance id pod-a")
    [removal] = match_events([event], group_generations(rows[:2]))
    assert (removal.cause, removal.generation) == ("deploy_restart", 8)


def test_capture_cause_of_a_mixed_event_without_member_change():
    event = Event(4, at(5, 0, 30), at(4, 40), "mixed", (A1,), (A1,))
    assert capture_cause(event) == (
        "subscription_changed",
        "members capture 2026-11-20T05:00:30Z: a member's subscription changed",
    )


# -- Spark glue ------------------------------------------------------------------------------


@pytest.mark.spark
def test_event_causes_in_spark_equal_the_plain_function(spark):
    """The oracle: event_causes' Arrow calls give what group_event_causes gives on the
    same rows in plain Python, and paused_partition_seconds prices each event."""
    from fleet_rebalance.metrics.rebalance_causes import (
        INPUTS,
        LOGS,
        event_causes,
        group_event_causes,
        with_paused_partition_seconds,
    )

    naive = lambda t: t.replace(tzinfo=None)  # noqa: E731  (Spark hands back naive UTC)
    events = [
        {
            "cluster": "c",
            "group_id": "g",
            "event_seq": 1,
            "event_at": naive(at(2, 40)),
            "trigger": "initial",
        },
        {
            "cluster": "c",
            "group_id": "g",
            "event_seq": 2,
            "event_at": naive(at(3, 20)),
            "previous_capture_at": naive(at(3, 0)),
            "trigger": "members_replaced",
        },
        {
            "cluster": "c",
            "group_id": "h",
            "event_seq": 2,
            "event_at": naive(at(3, 20)),
            "previous_capture_at": naive(at(3, 0)),
            "trigger": "member_joined",
        },
    ]
    members = [
        {
            "cluster": "c",
            "group_id": "g",
            "captured_at": naive(at(3, 0)),
            "consumer_id": m.member_id,
            "host": m.host,
            "client_id": m.client_id,
        }
        for m in (A1, A2)
    ] + [
        {
            "cluster": "c",
            "group_id": "g",
            "captured_at": naive(at(3, 20)),
            "consumer_id": m.member_id,
            "host": m.host,
            "client_id": m.client_id,
        }
        for m in (B1, A2)
    ]
    logs = [
        {"cluster": "c", "group_id": "g", **r, "logged_at": naive(r["logged_at"])}
        for r in [
            *classic(
                8,
                at(3, 5),
                "Removing member consumer-g-1-aa on LeaveGroup; client reason: the consumer is "
                "being closed",
            ),
            *classic(
                9,
                at(3, 5, 30),
                "Adding new member consumer-g-1-cc with group instance id None; client reason: "
                "not provided",
                2.5,
            ),
        ]
    ]
    events_schema = silver.TABLES["rebalance_events"]
    events_df = spark.createDataFrame(
        [tuple(e.get(f.name) for f in events_schema.fields) for e in events], events_schema
    )
    members_df = spark.createDataFrame(
        [
            (
                m["cluster"],
                m["group_id"],
                m["captured_at"],
                m["consumer_id"],
                m["host"],
                m["client_id"],
                None,
            )
            for m in members
        ],
        "cluster string, group_id string, captured_at timestamp, consumer_id string, host string, "
        "client_id string, group_instance_id string",
    )
    logs_df = spark.createDataFrame([tuple(r.get(f.name) for f in LOGS.fields) for r in logs], LOGS)
    got = event_causes(events_df, members_df, logs_df, DAY).orderBy("group_id").collect()
    inputs = [
        {**{f.name: None for f in INPUTS.fields}, **e, "_kind": "event"}
        for e in events
        if e["group_id"] == "g" and e["trigger"] != "initial"
    ] + [{**{f.name: None for f in INPUTS.fields}, **m, "_kind": "member"} for m in members]
    plain = group_event_causes(inputs, logs, DAY, dt.timedelta(seconds=300))
    assert [r.asDict() for r in got if r["group_id"] == "g"] == plain
    assert [
        (r["group_id"], r["cause"], r["generation"], r["duration_ms"], r["static_avoidable"])
        for r in got
    ] == [
        ("g", "deploy_restart", 9, 2500, True),  # away 30 s: the log's leave and join
        ("h", "scale_out", None, None, False),
    ]
    metrics = spark.createDataFrame(
        [
            ("c", "g", 2, "range", 12),
            ("c", "g", 2, "cooperative-sticky", 4),
            ("c", "h", 2, "range", 12),
        ],
        "cluster string, group_id string, event_seq int, assignor string, paused_partitions int",
    ).withColumn("paused_partition_seconds", F.lit(None).cast("double"))
    priced = with_paused_partition_seconds(
        metrics, event_causes(events_df, members_df, logs_df, DAY)
    )
    assert sorted(tuple(r) for r in priced.collect()) == [
        ("c", "g", 2, "cooperative-sticky", 4, 10.0),
        ("c", "g", 2, "range", 12, 30.0),
        ("c", "h", 2, "range", 12, None),  # no log times it
    ]


# -- on data/sample ------------------------------------------------------------------------


@pytest.mark.spark
def test_rebalance_causes_on_the_sample(spark, clean_nightly):
    """The sample's causes table: one row per non-initial event, every cause known,
    every matched generation a timeline generation with its duration, and the
    replay's paused partition-seconds priced with that duration."""
    from fleet_rebalance.storage import read_table

    def table(name):
        return read_table(spark, str(clean_nightly / name))

    causes = table("rebalance_causes").where(F.col("date") == F.lit(DAY))
    assert [(f.name, f.dataType) for f in causes.schema.fields] == [
        (f.name, f.dataType) for f in gold.TABLES["rebalance_causes"].fields
    ]
    events = table("rebalance_events").where(F.col("trigger") != "initial")
    assert causes.count() == events.count() > 0
    assert causes.join(events, ["cluster", "group_id", "event_seq"], "left_anti").isEmpty()
    assert {r[0] for r in causes.select("cause").distinct().collect()} <= set(CAUSES)
    # The generator's profiles show every cause (generate/fleet.py, PROFILES).
    found = {r[0] for r in causes.select("cause").distinct().collect()}
    assert found == set(CAUSES)
    assert causes.where(F.col("evidence").isNull() | (F.col("evidence") == "")).isEmpty()
    matched = causes.where(F.col("generation").isNotNull())
    timeline = table("rebalance_timeline").select(
        "cluster", "group_id", "generation", F.col("duration_ms").alias("logged_ms")
    )
    joined = matched.join(timeline, ["cluster", "group_id", "generation"], "inner")
    assert joined.count() == matched.count()
    assert joined.where(~F.col("duration_ms").eqNullSafe(F.col("logged_ms"))).isEmpty()
    priced = table("replay_metrics").join(
        causes.select("cluster", "group_id", "event_seq", "duration_ms"),
        ["cluster", "group_id", "event_seq"],
        "left",
    )
    expected = F.col("paused_partitions") * F.col("duration_ms") / 1000.0
    assert priced.where(~F.col("paused_partition_seconds").eqNullSafe(expected)).isEmpty()
    assert not priced.where(F.col("paused_partition_seconds").isNotNull()).isEmpty()
