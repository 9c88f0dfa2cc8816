"""Whose assignor a group's observed assignment is judged against (replay/client_library.py):
Kafka's, or librdkafka's own for a group whose leader is a librdkafka client, or
undecided, never a false "does not conform"."""

from __future__ import annotations

import datetime as dt

import pytest

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.replay.assignor_runs import OBSERVED, replay_events
from fleet_rebalance.replay.client_library import (
    KAFKA,
    LIBRDKAFKA,
    MIXED,
    TOPIC_ORDER,
    ClientLibraries,
)
from fleet_rebalance.replay.events import RebalanceEvent
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

T0 = dt.datetime(2026, 11, 28, 0, 12, 50)
# The lab's librdkafka group (tests/data/lab-3.9-straddle): client.ids lab-rdkafka-N.
R1 = "lab-rdkafka-1-9262e4d3-0390-455c-9b1d-75b9055e6e3c"
R2 = "lab-rdkafka-2-00c922df-8343-40ab-9c24-6d9b05ae0a61"
R3 = "lab-rdkafka-3-4909f84c-810e-4d7d-a220-7683e43d14f2"
JAVA = "consumer-g-1-5b0c8e5e-8d0e-4a56-9a3a-2a3d8b2a1f10"
LAB = ClientLibraries({"lab-rdkafka-*": "librdkafka"})
NONE = ClientLibraries()
FIRST_WINS = ClientLibraries({"lab-*": "kafka", "*": "librdkafka"})
RDKAFKA_ID = "rdkafka-5b0c8e5e-8d0e-4a56-9a3a-2a3d8b2a1f10"


@pytest.mark.parametrize(
    ("libraries", "strategy", "members", "leader", "coordinator", "basis"),
    [
        # librdkafka's default client.id, no map needed; the member id's prefix when the
        # capture has no client id
        (NONE, "cooperative-sticky", [("rdkafka-1", "rdkafka")], None, False, LIBRDKAFKA),
        (NONE, "range", [(RDKAFKA_ID, None)], None, False, LIBRDKAFKA),
        # any other client.id is Kafka's Java client unless the map says otherwise
        (NONE, "cooperative-sticky", [(R1, "lab-rdkafka-1")], None, False, KAFKA),
        (LAB, "cooperative-sticky", [(R1, "lab-rdkafka-1")], None, False, LIBRDKAFKA),
        (FIRST_WINS, "range", [(R1, "lab-rdkafka-1")], None, False, KAFKA),
        # the leader's library decides; without a logged leader, a mixed group is undecided
        (LAB, "range", [(R1, "lab-rdkafka-1"), (JAVA, "consumer-g-1")], JAVA, False, KAFKA),
        (LAB, "range", [(R1, "lab-rdkafka-1"), (JAVA, "consumer-g-1")], R1, False, LIBRDKAFKA),
        (LAB, "range", [(R1, "lab-rdkafka-1"), (JAVA, "consumer-g-1")], None, False, MIXED),
        # a strategy librdkafka does not implement, or the coordinator's own assignment
        (LAB, "sticky", [(R1, "lab-rdkafka-1")], R1, False, KAFKA),
        (LAB, "uniform", [(R1, "lab-rdkafka-1")], None, True, KAFKA),
        (LAB, "range", [(R1, "lab-rdkafka-1")], None, True, KAFKA),
    ],
)  # fmt: skip
def test_the_basis_of_a_groups_conformance(
    libraries, strategy, members, leader, coordinator, basis
):
    assert libraries.basis(strategy, members, leader, coordinator) == basis


def test_librdkafkas_sticky_on_more_than_four_topics_is_undecided():
    """The brokers answer the leader's Metadata request in its order up to four topics,
    in a hash order beyond, which librdkafka's sticky tie-breaks follow: undecided there;
    its range and roundrobin sort or ignore the topic order."""
    members = [(R1, "lab-rdkafka-1")]
    assert LAB.basis("cooperative-sticky", members, R1, False, 4) == LIBRDKAFKA
    assert LAB.basis("cooperative-sticky", members, R1, False, 5) == TOPIC_ORDER
    assert LAB.basis("range", members, R1, False, 5) == LIBRDKAFKA
    assert LAB.basis("cooperative-sticky", [(JAVA, "consumer-g-1")], None, False, 5) == KAFKA


def clicks(*partitions: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition("clicks", p) for p in partitions)


def capture(seconds: int, owned: dict[str, tuple[TopicPartition, ...]], client=None) -> Snapshot:
    members = tuple(
        MemberSnapshot(m, None, ("clicks",), a, client or m[:13], "/127.0.0.1")
        for m, a in owned.items()
    )
    return Snapshot(
        T0 + dt.timedelta(seconds=seconds), members, "Stable", "cooperative-sticky", {"clicks": 4}
    )


def lab_events(client: str | None = None, leader: str | None = None) -> list[RebalanceEvent]:
    """The lab group's captured rebalances: R1 and R2, R3 joining, R1 leaving."""
    first = capture(0, {R1: clicks(0, 2), R2: clicks(1, 3)}, client)
    joined = capture(30, {R1: clicks(0, 2), R3: clicks(1), R2: clicks(3)}, client)
    left = capture(150, {R3: clicks(0, 1), R2: clicks(2, 3)}, client)
    return [
        RebalanceEvent(1, first.captured_at, "initial", first, None),
        RebalanceEvent(2, joined.captured_at, "member_joined", joined, first, leader=leader),
        RebalanceEvent(3, left.captured_at, "member_left", left, joined, leader=leader),
    ]


def judged(events: list[RebalanceEvent], libraries: ClientLibraries) -> list[tuple]:
    rows = replay_events(events, ["cooperative-sticky", OBSERVED], libraries=libraries)
    return [
        (r.values["event_seq"], r.values["conforms"], r.values["differing_partitions"],
         r.values["conformance_basis"])
        for r in rows
        if r.table == "replay_metrics" and r.values["assignor"] == OBSERVED
    ]  # fmt: skip


def test_the_labs_librdkafka_group_conforms_to_librdkafka_not_to_kafka():
    """Given the lab's librdkafka group, its clients mapped to librdkafka. Then every event
    conforms; judged as a Java group (no map) it would not: the false finding of before
    (2 partitions differ at each event, as the recorded labs showed)."""
    assert judged(lab_events(), LAB) == [
        (1, None, None, None),
        (2, True, 0, LIBRDKAFKA),
        (3, True, 0, LIBRDKAFKA),
    ]
    assert judged(lab_events(), ClientLibraries()) == [
        (1, None, None, None),
        (2, False, 2, KAFKA),
        (3, False, 2, KAFKA),
    ]


def test_a_group_on_librdkafkas_default_client_id_needs_no_map():
    assert judged(lab_events(client="rdkafka"), ClientLibraries())[1:] == [
        (2, True, 0, LIBRDKAFKA),
        (3, True, 0, LIBRDKAFKA),
    ]


def test_a_mixed_group_is_undecided_unless_its_leader_is_known():
    """Given the same group, R2 a Java client (client.id consumer-g-1): without a logged
    leader its rows are undecided (conforms null, the reason in conformance_basis); with
    R2 logged as the leader it is judged as Kafka's assignor (and does not conform)."""
    mixed = ClientLibraries({"lab-rdkafka-1": "librdkafka", "lab-rdkafka-3": "librdkafka"})
    assert judged(lab_events(), mixed)[1:] == [(2, None, None, MIXED), (3, None, None, MIXED)]
    assert judged(lab_events(leader=R2), mixed)[1:] == [(2, False, 2, KAFKA), (3, False, 2, KAFKA)]
    assert judged(lab_events(leader=R3), mixed)[1:] == [
        (2, True, 0, LIBRDKAFKA),
        (3, True, 0, LIBRDKAFKA),
    ]


LEADER_LOG = """\
[2026-11-28 00:13:09,858] INFO [GroupCoordinator 2]: Preparing to rebalance group lab-rdkafka in state PreparingRebalance with old generation 1 (__consumer_offsets-4) (reason: Adding new member lab-rdkafka-3-4909f84c-810e-4d7d-a220-7683e43d14f2 with group instance id None; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:13:10,817] INFO [GroupCoordinator 2]: Stabilized group lab-rdkafka generation 2 (__consumer_offsets-4) with 3 members (kafka.coordinator.group.GroupCoordinator)
[2026-11-28 00:13:10,915] INFO [GroupCoordinator 2]: Assignment received from leader lab-rdkafka-2-00c922df-8343-40ab-9c24-6d9b05ae0a61 for group lab-rdkafka for generation 2. The group has 3 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)
"""  # noqa: E501


def test_the_leader_is_the_member_the_coordinator_names_for_the_generation():
    """Given the recorded 3.9 lab's lines of generation 2. Then its leader is rdkafka-2,
    the member whose SyncGroup brought the assignment."""
    from fleet_rebalance.capture.parse import parse_capture
    from fleet_rebalance.capture.result import COORDINATOR_EVENTS
    from fleet_rebalance.replay.generations import group_generations

    parsed = parse_capture("lab-3.9/logs/broker-2/server.log", LEADER_LOG.encode())
    (generation,) = group_generations(parsed.rows[COORDINATOR_EVENTS])
    assert (generation.generation, generation.leader) == (2, R2)
