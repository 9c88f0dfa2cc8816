"""Cooperative follow-up rounds that also take members in: one rebalance, replayed
generation by generation (replay/rebalance_events.py steps, replay/assignor_runs.py).

The case a Kafka 3.9.2 lab showed: three members join a cooperative-sticky group at
once; the coordinator's generation 2 takes the first in, the revocation rounds 3 and 4
each admit one more (3.x logs a KIP-394 member's second JoinGroup at DEBUG: only its
first, `Dynamic member with unknown member id joins`, and the `Stabilized ... with N
members` counts show it), round 5 hands the last revoked partition over. Each round is
one call of the group leader's assignor with what the round before left owned."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.replay.assignor_runs import OBSERVED, replay_events
from fleet_rebalance.replay.client_library import LIBRDKAFKA, ClientLibraries
from fleet_rebalance.replay.rebalance_events import Coverage, group_history
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

DAY = dt.date(2026, 11, 28)
ID = {x: f"consumer-{x}-00000000-0000-4000-8000-00000000000{i}" for i, x in enumerate("abcdef", 1)}
PREFIX = "INFO [GroupCoordinator 2]:"
SUFFIX = "(kafka.coordinator.group.GroupCoordinator)"
REVOKE = "client reason: need to revoke partitions and re-join"


def line(at: str, text: str) -> str:
    return f"[2026-11-28 {at}] {PREFIX} {text} {SUFFIX}"


def pending(at: str, member: str, state: str) -> str:
    return line(
        at,
        f"Dynamic member with unknown member id joins group g in {state} state. Created a new "
        f"member id {ID[member]} and request the member to rejoin with this id.",
    )


def prepare(at: str, old: int, reason: str) -> str:
    return line(
        at,
        f"Preparing to rebalance group g in state PreparingRebalance with old generation {old} "
        f"(__consumer_offsets-27) (reason: {reason})",
    )


def stabilized(at: str, generation: int, members: int) -> str:
    return line(
        at,
        f"Stabilized group g generation {generation} (__consumer_offsets-27) with {members} "
        "members",
    )


LOG = [
    pending("10:00:59,900", "d", "Stable"),
    prepare("10:01:00,000", 1, f"Adding new member {ID['d']} with group instance id None; "
            f"client reason: need to re-join with the given member-id: {ID['d']}"),
    stabilized("10:01:01,000", 2, 4),
    prepare("10:01:01,200", 2, f"Updating metadata for member {ID['a']} during Stable; {REVOKE}"),
    pending("10:01:01,300", "e", "PreparingRebalance"),
    stabilized("10:01:02,000", 3, 5),
    prepare("10:01:02,200", 3, f"Updating metadata for member {ID['b']} during Stable; {REVOKE}"),
    pending("10:01:02,300", "f", "PreparingRebalance"),
    stabilized("10:01:03,000", 4, 6),
    prepare("10:01:03,200", 4, f"Updating metadata for member {ID['a']} during Stable; {REVOKE}"),
    stabilized("10:01:04,000", 5, 6),
]  # fmt: skip


def capture(minute: int, owned: dict[str, list[int]], before: dt.datetime | None) -> Snapshot:
    members = tuple(
        MemberSnapshot(
            ID[m], None, ("t",), tuple(TopicPartition("t", p) for p in ps), f"consumer-{m}"
        )
        for m, ps in owned.items()
    )
    when = dt.datetime(2026, 11, 28, 10, minute)
    return Snapshot(when, members, "Stable", "cooperative-sticky", {"t": 9}, follows=before)


BEFORE = capture(0, {"a": [0, 3, 6], "b": [1, 4, 7], "c": [2, 5, 8]}, None)
# What the six members were given, round by round: rounds 2-4 revoke one partition each
# from a, b, c; round 3 gives e b's (7) and d c's (8), round 4 gives f a's (6).
AFTER = capture(
    2, {"a": [0, 3], "b": [1, 4], "c": [2, 5], "d": [8], "e": [7], "f": [6]}, BEFORE.captured_at
)


def events() -> list:
    parsed = parse_capture("lab/logs/broker-2/server.log", ("\n".join(LOG) + "\n").encode())
    logs = [
        {**r, "logged_at": r["logged_at"].replace(tzinfo=None)}
        for r in parsed.rows[COORDINATOR_EVENTS]
    ]
    hour = Coverage(frozenset({dt.datetime(2026, 11, 28, 10)}))
    return list(group_history([BEFORE, AFTER], logs, hour, DAY))


def observed(replayed: list) -> list[tuple]:
    rows = replay_events(replayed, ["cooperative-sticky", OBSERVED])
    return [
        (r.values["event_seq"], r.values["conforms"], r.values["differing_partitions"])
        for r in rows
        if r.table == "replay_metrics" and r.values["assignor"] == OBSERVED
    ]


def test_three_joins_are_one_rebalance_with_two_steps():
    """Then: the initial capture and one rebalance (generation 2, its follow-ups 3-5
    folded in: a scale-out), whose steps are the member sets of generations 2 (a-d) and
    3 (a-e); the capture shows the sixth member."""
    initial, rebalance = events()
    assert (initial.trigger, rebalance.generation, rebalance.cause, rebalance.source) == (
        "initial",
        2,
        "scale_out",
        "both",
    )
    assert [sorted(m.member_id[9] for m in step.members) for step in rebalance.steps] == [
        ["a", "b", "c", "d"],
        ["a", "b", "c", "d", "e"],
    ]
    assert rebalance.duration_ms == 4000 and rebalance.capture_difference is None


def test_conformance_is_decided_against_the_rounds_the_group_went_through():
    """Then the observed assignment is cooperative-sticky's, round by round; folded into
    one 3 -> 6 change (no steps) it would "not conform", 2 partitions apart (d and f)."""
    replayed = events()
    assert observed(replayed) == [(1, None, None), (2, True, 0)]
    folded = [replace(e, steps=()) for e in replayed]
    assert observed(folded) == [(1, None, None), (2, False, 2)]


# A live Kafka 4.4 lab run (tests/data/lab-4): two librdkafka members join lab-rdkafka
# (cooperative-sticky) a second apart. Generation 2 takes rdkafka-4 in and revokes; before
# its members rejoin, rdkafka-3 joins and starts generation 3 (its reason, not a
# revocation round's), whose follow-up round 4 hands the revoked partitions over.
ABSORBED_LOG = """\
[2026-11-29 07:58:02,809] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Dynamic member with unknown member id joins group lab-rdkafka in Stable state. Created a new member id lab-rdkafka-4-3f6f07c3-ac4d-487d-ac06-6eae8f8ba5b6 and requesting the member to rejoin with this id. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:02,926] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Pending dynamic member with id lab-rdkafka-4-3f6f07c3-ac4d-487d-ac06-6eae8f8ba5b6 joins group lab-rdkafka in Stable state. Adding to the group now. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:02,926] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 1 (reason: Adding new member lab-rdkafka-4-3f6f07c3-ac4d-487d-ac06-6eae8f8ba5b6 with group instance id null; client reason: not provided). (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:03,873] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Stabilized group lab-rdkafka generation 2 with 3 members. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,003] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Assignment received from leader lab-rdkafka-1-5b18f078-d45f-4211-9357-c10c46b18e17 for group lab-rdkafka for generation 2. The group has 3 members, 0 of which are static. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,033] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Dynamic member with unknown member id joins group lab-rdkafka in CompletingRebalance state. Created a new member id lab-rdkafka-3-09f9a624-0d9a-455d-9a07-4bad93d19d01 and requesting the member to rejoin with this id. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,056] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Pending dynamic member with id lab-rdkafka-3-09f9a624-0d9a-455d-9a07-4bad93d19d01 joins group lab-rdkafka in CompletingRebalance state. Adding to the group now. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,065] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 2 (reason: Adding new member lab-rdkafka-3-09f9a624-0d9a-455d-9a07-4bad93d19d01 with group instance id null; client reason: not provided). (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,082] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Stabilized group lab-rdkafka generation 3 with 4 members. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,087] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Assignment received from leader lab-rdkafka-1-5b18f078-d45f-4211-9357-c10c46b18e17 for group lab-rdkafka for generation 3. The group has 4 members, 0 of which are static. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:04,321] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 3 (reason: Leader lab-rdkafka-1-5b18f078-d45f-4211-9357-c10c46b18e17 re-joining group during Stable; client reason: not provided). (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:05,382] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Stabilized group lab-rdkafka generation 4 with 4 members. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2026-11-29 07:58:05,438] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=4] Assignment received from leader lab-rdkafka-1-5b18f078-d45f-4211-9357-c10c46b18e17 for group lab-rdkafka for generation 4. The group has 4 members, 0 of which are static. (org.apache.kafka.coordinator.group.GroupMetadataManager)
"""  # noqa: E501
RD = {
    n: f"lab-rdkafka-{n}-{uuid}"
    for n, uuid in (
        (1, "5b18f078-d45f-4211-9357-c10c46b18e17"),
        (2, "f8e615d0-305b-4191-ad51-ad256ad45483"),
        (3, "09f9a624-0d9a-455d-9a07-4bad93d19d01"),
        (4, "3f6f07c3-ac4d-487d-ac06-6eae8f8ba5b6"),
    )
}


def rdkafka_capture(hms: str, owned: dict[int, list[int]], before=None) -> Snapshot:
    members = tuple(
        MemberSnapshot(
            RD[n], None, ("clicks",), tuple(TopicPartition("clicks", p) for p in ps),
            f"lab-rdkafka-{n}",
        )
        for n, ps in owned.items()
    )  # fmt: skip
    when = dt.datetime.strptime(f"2026-11-29 07:{hms}", "%Y-%m-%d %H:%M:%S")
    return Snapshot(when, members, "Stable", "cooperative-sticky", {"clicks": 4}, follows=before)


def test_a_round_the_next_rebalance_took_over_is_one_round():
    """Given the lab's lines and captures: rdkafka-1 and -2 on clicks [0, 2] / [1, 3];
    after generations 2-4, rdkafka-2 [3], -4 [0], -3 [1], -1 [2]. Then generation 2 (no
    follow-up round of its own: generation 3 started 0.2 s after it) is one round of
    librdkafka's assignor and the capture conforms; replayed with a follow-up round of
    its own it would "not conform", 2 partitions apart."""
    parsed = parse_capture("lab-4/logs/broker-1/server.log", ABSORBED_LOG.encode())
    logs = [
        {**r, "logged_at": r["logged_at"].replace(tzinfo=None)}
        for r in parsed.rows[COORDINATOR_EVENTS]
    ]
    before = rdkafka_capture("57:14", {2: [1, 3], 1: [0, 2]})
    after = rdkafka_capture("58:08", {2: [3], 4: [0], 3: [1], 1: [2]}, before.captured_at)
    hour = Coverage(frozenset({dt.datetime(2026, 11, 29, 7)}))
    replayed = list(group_history([before, after], logs, hour, dt.date(2026, 11, 29)))
    assert [(e.generation, e.source, e.single_round) for e in replayed] == [
        (None, "captures", False),
        (2, "logs", True),
        (3, "both", False),
    ]
    libraries = ClientLibraries({"lab-rdkafka-*": "librdkafka"})

    def judged(events: list) -> list[tuple]:
        rows = replay_events(events, [OBSERVED], libraries=libraries)
        return [
            (r.values["event_seq"], r.values["conforms"], r.values["differing_partitions"],
             r.values["conformance_basis"])
            for r in rows
            if r.table == "replay_metrics"
        ]  # fmt: skip

    assert judged(replayed) == [(1, None, None, None), (3, True, 0, LIBRDKAFKA)]
    two_rounds = [replace(e, single_round=False) for e in replayed]
    assert judged(two_rounds) == [(1, None, None, None), (3, False, 2, LIBRDKAFKA)]
