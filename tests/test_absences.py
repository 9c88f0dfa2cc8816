"""How long a consumer was away, and who left (replay/rebalance_events.py, session_timeouts.py):
a member the coordinator expired was silent for at least its session timeout before the
expiry line; every member a generation lets go is named. The lines are a live Kafka
3.9.2 lab run's (tests/kafka_lab.py): lab-sticky-2 frozen (SIGSTOP) for 25 s with a
10 s session timeout, lab-static-2 (group.instance.id, 30 s) down for 40 s, three
members of lab-coop leaving at once."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.replay.identities import Identity
from fleet_rebalance.replay.rebalance_events import Coverage, Settings, group_history
from fleet_rebalance.replay.session_timeouts import SessionTimeout, SessionTimeouts
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

DAY = dt.date(2026, 11, 29)
HOUR = Coverage(frozenset({dt.datetime(2026, 11, 29, 7)}))
# lab-sticky: lab-sticky-2's clean leave of the deploy (its MemberMetadata names its
# session timeout), then, as 0e23ab18, its expiry and its return as 341a93a2.
STICKY_LOG = """\
[2026-11-29 07:15:17,535] INFO [GroupCoordinator 3]: Preparing to rebalance group lab-sticky in state PreparingRebalance with old generation 3 (__consumer_offsets-23) (reason: Removing member lab-sticky-2-8f3a9e8a-f4ca-435b-a770-4060e26c33f7 on LeaveGroup; client reason: the consumer is being closed) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:15:17,535] INFO [GroupCoordinator 3]: Member MemberMetadata(memberId=lab-sticky-2-8f3a9e8a-f4ca-435b-a770-4060e26c33f7, groupInstanceId=None, clientId=lab-sticky-2, clientHost=/127.0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(sticky)) has left group lab-sticky through explicit `LeaveGroup`; client reason: the consumer is being closed (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:15:17,777] INFO [GroupCoordinator 3]: Stabilized group lab-sticky generation 4 (__consumer_offsets-23) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:14,482] INFO [GroupCoordinator 3]: Member lab-sticky-2-0e23ab18-c4d7-478c-9fe1-b25cf72107e0 in group lab-sticky has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:14,482] INFO [GroupCoordinator 3]: Preparing to rebalance group lab-sticky in state PreparingRebalance with old generation 10 (__consumer_offsets-23) (reason: removing member lab-sticky-2-0e23ab18-c4d7-478c-9fe1-b25cf72107e0 on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:15,481] INFO [GroupCoordinator 3]: Stabilized group lab-sticky generation 11 (__consumer_offsets-23) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:30,486] INFO [GroupCoordinator 3]: Dynamic member with unknown member id joins group lab-sticky in Stable state. Created a new member id lab-sticky-2-341a93a2-88e7-4751-8eb5-987a5bc537e3 and request the member to rejoin with this id. (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:30,496] INFO [GroupCoordinator 3]: Preparing to rebalance group lab-sticky in state PreparingRebalance with old generation 11 (__consumer_offsets-23) (reason: Adding new member lab-sticky-2-341a93a2-88e7-4751-8eb5-987a5bc537e3 with group instance id None; client reason: need to re-join with the given member-id: lab-sticky-2-341a93a2-88e7-4751-8eb5-987a5bc537e3) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:30,508] INFO [GroupCoordinator 3]: Stabilized group lab-sticky generation 12 (__consumer_offsets-23) with 3 members (kafka.coordinator.group.GroupCoordinator)
"""  # noqa: E501
S2_BEFORE = "lab-sticky-2-0e23ab18-c4d7-478c-9fe1-b25cf72107e0"
S2_AFTER = "lab-sticky-2-341a93a2-88e7-4751-8eb5-987a5bc537e3"
S3 = "lab-sticky-3-de620b12-5e94-41ac-b009-ae7135f3ecbd"
S4 = "lab-sticky-4-b62715b4-bf9b-4f8f-a49a-c5f31ff15fe0"
# lab-static: lab-static-2 joins as bf0260f1, rejoins within its session timeout (the old
# coordinator names the replaced id only; captures show the new 4f1742b9), is expired
# 40 s after it was stopped and joins again as 24a5b5e3.
STATIC_LOG = """\
[2026-11-29 07:13:59,002] INFO [GroupCoordinator 1]: Static member with groupInstanceId=lab-static-2 and unknown member id joins group lab-static in Empty state. Created a new member id lab-static-2-bf0260f1-3a1e-4999-a764-55cd581f645c for this member and add to the group. (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:13:59,092] INFO [GroupCoordinator 1]: Preparing to rebalance group lab-static in state PreparingRebalance with old generation 0 (__consumer_offsets-48) (reason: Adding new member lab-static-2-bf0260f1-3a1e-4999-a764-55cd581f645c with group instance id Some(lab-static-2); client reason: ) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:14:02,499] INFO [GroupCoordinator 1]: Stabilized group lab-static generation 1 (__consumer_offsets-48) with 1 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:14:05,910] INFO [GroupCoordinator 1]: Stabilized group lab-static generation 2 (__consumer_offsets-48) with 3 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:15:36,226] INFO [GroupCoordinator 1]: Static member with groupInstanceId=lab-static-2 and unknown member id joins group lab-static in Stable state. Replacing previously mapped member lab-static-2-bf0260f1-3a1e-4999-a764-55cd581f645c with this groupInstanceId. (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:15:59,198] INFO [GroupCoordinator 1]: Preparing to rebalance group lab-static in state PreparingRebalance with old generation 2 (__consumer_offsets-48) (reason: Leader lab-static-2-4f1742b9-7849-4747-992c-971cb864f49c re-joining group during Stable; client reason: cached metadata has changed) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:00,160] INFO [GroupCoordinator 1]: Stabilized group lab-static generation 3 (__consumer_offsets-48) with 3 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:35,396] INFO [GroupCoordinator 1]: Member lab-static-2-4f1742b9-7849-4747-992c-971cb864f49c in group lab-static has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:35,397] INFO [GroupCoordinator 1]: Preparing to rebalance group lab-static in state PreparingRebalance with old generation 3 (__consumer_offsets-48) (reason: removing member lab-static-2-4f1742b9-7849-4747-992c-971cb864f49c on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:36,199] INFO [GroupCoordinator 1]: Stabilized group lab-static generation 4 (__consumer_offsets-48) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:46,903] INFO [GroupCoordinator 1]: Static member with groupInstanceId=lab-static-2 and unknown member id joins group lab-static in Stable state. Created a new member id lab-static-2-24a5b5e3-6da0-4fd1-b98a-9f108d5030c9 for this member and add to the group. (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:46,903] INFO [GroupCoordinator 1]: Preparing to rebalance group lab-static in state PreparingRebalance with old generation 4 (__consumer_offsets-48) (reason: Adding new member lab-static-2-24a5b5e3-6da0-4fd1-b98a-9f108d5030c9 with group instance id Some(lab-static-2); client reason: ) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:47,222] INFO [GroupCoordinator 1]: Stabilized group lab-static generation 5 (__consumer_offsets-48) with 3 members (kafka.coordinator.group.GroupCoordinator)
"""  # noqa: E501
# lab-coop: three members leave at once; the reason names the first, the rest leave
# while the group prepares.
COOP_LOG = """\
[2026-11-29 07:16:56,070] INFO [GroupCoordinator 2]: Preparing to rebalance group lab-coop in state PreparingRebalance with old generation 14 (__consumer_offsets-27) (reason: Removing member lab-coop-4-26b499ca-2ab0-4729-af65-4c0c54802482 on LeaveGroup; client reason: the consumer is being closed) (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:56,070] INFO [GroupCoordinator 2]: Member MemberMetadata(memberId=lab-coop-4-26b499ca-2ab0-4729-af65-4c0c54802482, groupInstanceId=None, clientId=lab-coop-4, clientHost=/127.0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(cooperative-sticky)) has left group lab-coop through explicit `LeaveGroup`; client reason: the consumer is being closed (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:56,075] INFO [GroupCoordinator 2]: Member MemberMetadata(memberId=lab-coop-6-f63d5f1b-7d21-40af-8cdb-0680adf44146, groupInstanceId=None, clientId=lab-coop-6, clientHost=/127.0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(cooperative-sticky)) has left group lab-coop through explicit `LeaveGroup`; client reason: the consumer is being closed (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:56,082] INFO [GroupCoordinator 2]: Member MemberMetadata(memberId=lab-coop-5-c04adeb9-f0f8-4942-83ad-7d368c4ec53d, groupInstanceId=None, clientId=lab-coop-5, clientHost=/127.0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(cooperative-sticky)) has left group lab-coop through explicit `LeaveGroup`; client reason: the consumer is being closed (kafka.coordinator.group.GroupCoordinator)
[2026-11-29 07:16:56,367] INFO [GroupCoordinator 2]: Stabilized group lab-coop generation 15 (__consumer_offsets-27) with 2 members (kafka.coordinator.group.GroupCoordinator)
"""  # noqa: E501
C4 = "lab-coop-4-26b499ca-2ab0-4729-af65-4c0c54802482"
C5 = "lab-coop-5-c04adeb9-f0f8-4942-83ad-7d368c4ec53d"
C6 = "lab-coop-6-f63d5f1b-7d21-40af-8cdb-0680adf44146"
C2 = "lab-coop-2-20c8f0e4-3cc4-4fc6-9d7e-4a4e0f4b0b2e"
C3 = "lab-coop-3-3448787f-39aa-4739-a3d4-fcda46344b3d"


def rows(text: str) -> list[dict]:
    parsed = parse_capture("lab-3.9/logs/broker-1/server.log", text.encode())
    return [
        {**r, "logged_at": r["logged_at"].replace(tzinfo=None)}
        for r in parsed.rows[COORDINATOR_EVENTS]
    ]


def capture(hms: str, members: list[tuple[str, str | None]], before=None) -> Snapshot:
    """A capture at 07:<hms> of (member id, group.instance.id) members, their
    assignments not at issue here (none captured)."""
    when = dt.datetime.strptime(f"2026-11-29 07:{hms}", "%Y-%m-%d %H:%M:%S")
    snapshot_members = tuple(
        MemberSnapshot(m, i, ("orders",), None, i or m[:-37], "/127.0.0.1") for m, i in members
    )
    return Snapshot(when, snapshot_members, "Stable", "range", {"orders": 8}, follows=before)


def history(snapshots: list[Snapshot], text: str, default_ms: int = 45_000) -> list:
    settings = replace(Settings.of(), session_timeout=dt.timedelta(milliseconds=default_ms))
    return list(group_history(snapshots, rows(text), HOUR, DAY, settings))


def absences(events: list) -> list[tuple]:
    return [
        (e.generation, e.cause, e.departed, e.returned, e.away_ms, e.session_timeout_ms,
         e.session_timeout_assumed)
        for e in events[1:]
    ]  # fmt: skip


def frozen_member(text: str, default_ms: int = 45_000) -> list:
    before = capture("16:10", [(S2_BEFORE, None), (S3, None), (S4, None)])
    after = capture("16:40", [(S2_AFTER, None), (S3, None), (S4, None)], before.captured_at)
    return history([before, after], text, default_ms)


def test_a_frozen_member_was_away_its_session_timeout_longer_than_from_its_expiry():
    """Given lab-sticky-2 frozen at 07:16:04.4 (SIGSTOP), expired at 07:16:14.482 and
    back at 07:16:30.486; its earlier clean leave logged sessionTimeoutMs=10000. Then
    both rebalances say it was away 26.004 s (16.004 s from the expiry line, plus its
    logged 10 s session timeout), not "back after 16 s"."""
    events = frozen_member(STICKY_LOG)
    assert absences(events) == [
        (11, "session_timeout", "lab-sticky-2", None, 26_004, 10_000, False),
        (12, "session_timeout", None, "lab-sticky-2", 26_004, 10_000, False),
    ]
    assert events[2].evidence.endswith(
        f"lab-sticky-2 (client id) was expired as {S2_BEFORE} and was back as {S2_AFTER} 16 s "
        "after the expiry: away 26 s at least, silent for its session timeout of 10 s (as "
        "logged) before it"
    )


def test_without_a_logged_session_timeout_the_confs_stands_in_marked_assumed():
    """Given the same expiry and return without the clean leave's MemberMetadata line.
    Then the conf's metrics.session_timeout_ms (here 10000) stands in, marked assumed."""
    lines = "\n".join(line for line in STICKY_LOG.splitlines() if "MemberMetadata" not in line)
    assert absences(frozen_member(lines + "\n", default_ms=10_000)) == [
        (11, "session_timeout", "lab-sticky-2", None, 26_004, 10_000, True),
        (12, "session_timeout", None, "lab-sticky-2", 26_004, 10_000, True),
    ]


def test_a_static_member_back_past_its_session_timeout_is_one_restart():
    """Given lab-static-2 (first bf0260f1, rejoined within its session as 4f1742b9,
    which only the captures name) expired at 07:16:35.396 and back as 24a5b5e3 at
    07:16:46.903. Then both rebalances are its restart (deploy_restart), away 11.507 s
    plus the session timeout the conf assumes (its log names none: a static member never
    leaves cleanly). Its first join (07:13:59, as bf0260f1) is not its return: that id
    was in the group before 4f1742b9 arrived."""
    first = capture(
        "14:10",
        [("lab-static-1-95fc0dff-4e39-446b-ba5d-4757c334787d", "lab-static-1"),
         ("lab-static-2-bf0260f1-3a1e-4999-a764-55cd581f645c", "lab-static-2"),
         ("lab-static-3-3b6d86b5-b356-4f32-acd7-47d91724dbdf", "lab-static-3")],
    )  # fmt: skip
    rejoined = capture(
        "16:10",
        [("lab-static-1-d0567828-5642-48b8-8304-5d1e80c6c3a1", "lab-static-1"),
         ("lab-static-2-4f1742b9-7849-4747-992c-971cb864f49c", "lab-static-2"),
         ("lab-static-3-88332825-305f-4aa6-ade9-c3ca597aec1e", "lab-static-3")],
        first.captured_at,
    )  # fmt: skip
    back = capture(
        "16:54",
        [("lab-static-1-d0567828-5642-48b8-8304-5d1e80c6c3a1", "lab-static-1"),
         ("lab-static-2-24a5b5e3-6da0-4fd1-b98a-9f108d5030c9", "lab-static-2"),
         ("lab-static-3-88332825-305f-4aa6-ade9-c3ca597aec1e", "lab-static-3")],
        rejoined.captured_at,
    )  # fmt: skip
    events = history([first, rejoined, back], STATIC_LOG, default_ms=30_000)
    assert absences(events)[-2:] == [
        (4, "deploy_restart", "lab-static-2", None, 41_507, 30_000, True),
        (5, "deploy_restart", None, "lab-static-2", 41_507, 30_000, True),
    ]


def test_every_member_a_generation_lets_go_is_departed():
    """Given three members leaving lab-coop at once (generation 15: the reason names
    lab-coop-4, the other two leave while it prepares). Then departed names all three."""
    before = capture("16:50", [(C2, None), (C3, None), (C4, None), (C5, None), (C6, None)])
    after = capture("17:00", [(C2, None), (C3, None)], before.captured_at)
    events = history([before, after], COOP_LOG)
    assert absences(events) == [
        (15, "scale_in", "lab-coop-4, lab-coop-5, lab-coop-6", None, None, None, None)
    ]


def test_the_session_timeouts_a_log_gives_by_member_instance_and_client():
    """Given the old coordinator's MemberMetadata of a clean leave. Then the timeout is
    known for that member id, its client.id and (a static member) its instance id; any
    other consumer takes the default, marked assumed."""
    text = (
        "[2026-11-29 07:15:17,535] INFO [GroupCoordinator 3]: Member MemberMetadata(memberId="
        "s-1-8f3a9e8a-f4ca-435b-a770-4060e26c33f7, groupInstanceId=Some(s-1), clientId=app, "
        "clientHost=/10.0.0.7, sessionTimeoutMs=30000, rebalanceTimeoutMs=300000, "
        "supportedProtocols=List(range)) has left group g through explicit `LeaveGroup`; "
        "client reason: the consumer is being closed (kafka.coordinator.group.GroupCoordinator)\n"
    )
    timeouts = SessionTimeouts.logged(rows(text), 45_000)
    assert [
        timeouts.of("s-1-8f3a9e8a-f4ca-435b-a770-4060e26c33f7", Identity()),
        timeouts.of("s-1-0e23ab18-c4d7-478c-9fe1-b25cf72107e0", Identity(instance_id="s-1")),
        timeouts.of("app-0e23ab18-c4d7-478c-9fe1-b25cf72107e0", Identity(client_id="app")),
        timeouts.of("other-0e23ab18-c4d7-478c-9fe1-b25cf72107e0", Identity(client_id="other")),
    ] == [
        SessionTimeout(30_000, False),
        SessionTimeout(30_000, False),
        SessionTimeout(30_000, False),
        SessionTimeout(45_000, True),
    ]


def test_a_capture_event_names_every_consumer_replaced():
    """Given two captures and no log: pods a1 and a2 replaced by b1 and b2 (the same hosts
    and client ids app-1 and app-2). Then the capture event names both consumers departed
    and returned."""

    def pods(*names: str) -> tuple[MemberSnapshot, ...]:
        return tuple(
            MemberSnapshot(f"app-{n}-0e23ab18-c4d7-478c-9fe1-b25cf72107e0", None, ("orders",),
                           None, f"app-{n[1]}", f"/10.0.0.{n[1]}")
            for n in names
        )  # fmt: skip

    before = Snapshot(dt.datetime(2026, 11, 29, 7, 0), pods("a1", "a2", "a3"), "Stable", "range")
    after = Snapshot(dt.datetime(2026, 11, 29, 7, 10), pods("b1", "b2", "a3"), "Stable", "range")
    (_, event) = group_history([before, after], [], Coverage(), DAY)
    assert (event.source, event.cause, event.departed, event.returned) == (
        "captures",
        "deploy_restart",
        "app-1, app-2",
        "app-1, app-2",
    )
