"""librdkafka's own assignors (fleet_rebalance.assignors.librdkafka) against librdkafka's
own unit tests (src/rdkafka_sticky_assignor.c's ut_test* cases: the assignor callback's
answer, which those tests check before any cooperative adjustment, owned partitions
carried as `ut_set_owned` carries them) and the Kafka lab's librdkafka group, whose
assignments are the real client's."""

from __future__ import annotations

import pytest

from fleet_rebalance.assignors import Subscription, TopicPartition
from fleet_rebalance.assignors.librdkafka import (
    LibrdkafkaCooperativeStickyAssignor,
    LibrdkafkaRangeAssignor,
    LibrdkafkaRoundRobinAssignor,
    RackAwareNotPorted,
    librdkafka_assignor,
)
from fleet_rebalance.assignors.librdkafka.ordering import glibc_sort
from fleet_rebalance.assignors.librdkafka.sticky import (
    LibrdkafkaAbort,
    _Movements,
    cooperative_adjustment,
    sticky_answer,
)


def tps(*pairs: object) -> tuple[TopicPartition, ...]:
    """tps("topic1", 0, "topic2", 1) -> (topic1-0, topic2-1), as verifyAssignment lists."""
    return tuple(
        TopicPartition(str(pairs[i]), int(str(pairs[i + 1]))) for i in range(0, len(pairs), 2)
    )


def shown(assignment: dict[str, list[TopicPartition]]) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in sorted(p)] for m, p in assignment.items()}


T12 = ["topic1", "topic2"]


def test_two_consumers_two_topics_six_partitions():
    """ut_testTwoConsumersTwoTopicsSixPartitions: Given two consumers of topic1 and topic2
    (3 partitions each), nothing owned. Expected: partitions dealt in (topic, partition)
    order to the member with fewest, member id breaking ties."""
    answer = sticky_answer(
        {"topic1": 3, "topic2": 3}, {"consumer1": Subscription(T12), "consumer2": Subscription(T12)}
    )
    assert shown(answer) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1"],
        "consumer2": ["topic1-1", "topic2-0", "topic2-2"],
    }


def test_add_remove_consumer_one_topic():
    """ut_testAddRemoveConsumerOneTopic: consumer1 alone takes topic1's 3 partitions;
    consumer2 joins and takes topic1-0 (the first of the member with most); consumer1
    leaves and consumer2 takes all three."""
    one = sticky_answer({"topic1": 3}, {"consumer1": Subscription(["topic1"])})
    assert shown(one) == {"consumer1": ["topic1-0", "topic1-1", "topic1-2"]}
    two = sticky_answer(
        {"topic1": 3},
        {
            "consumer1": Subscription(["topic1"], one["consumer1"]),
            "consumer2": Subscription(["topic1"]),
        },
    )
    assert shown(two) == {"consumer1": ["topic1-1", "topic1-2"], "consumer2": ["topic1-0"]}
    alone = sticky_answer({"topic1": 3}, {"consumer2": Subscription(["topic1"], two["consumer2"])})
    assert shown(alone) == {"consumer2": ["topic1-0", "topic1-1", "topic1-2"]}


def test_poor_round_robin_assignment_scenario():
    """ut_testPoorRoundRobinAssignmentScenario: heterogeneous subscriptions (consumer2
    and consumer3 on topic1, 3 and 5 only)."""
    everything = ["topic1", "topic2", "topic3", "topic4", "topic5"]
    odd = ["topic1", "topic3", "topic5"]
    answer = sticky_answer(
        {"topic1": 2, "topic2": 1, "topic3": 2, "topic4": 1, "topic5": 2},
        {
            "consumer1": Subscription(everything),
            "consumer2": Subscription(odd),
            "consumer3": Subscription(odd),
            "consumer4": Subscription(everything),
        },
    )
    assert shown(answer) == {
        "consumer1": ["topic2-0", "topic3-0"],
        "consumer2": ["topic1-0", "topic3-1"],
        "consumer3": ["topic1-1", "topic5-0"],
        "consumer4": ["topic4-0", "topic5-1"],
    }


def test_add_remove_topic_two_consumers():
    """ut_testAddRemoveTopicTwoConsumers: both subscribe to topic1 and topic2; only topic1
    exists, then topic2 is created, then topic1 deleted."""
    subs = {"consumer1": Subscription(T12), "consumer2": Subscription(T12)}
    first = sticky_answer({"topic1": 3}, subs)
    assert shown(first) == {"consumer1": ["topic1-0", "topic1-2"], "consumer2": ["topic1-1"]}
    owned = {m: Subscription(T12, first[m]) for m in subs}
    second = sticky_answer({"topic1": 3, "topic2": 3}, owned)
    assert shown(second) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1"],
        "consumer2": ["topic1-1", "topic2-0", "topic2-2"],
    }
    owned = {m: Subscription(T12, second[m]) for m in subs}
    third = sticky_answer({"topic2": 3}, owned)
    assert shown(third) == {"consumer1": ["topic2-1"], "consumer2": ["topic2-0", "topic2-2"]}


def test_all_consumers_reach_expected_quota_and_are_considered_filled():
    """ut_testAllConsumersReachExpectedQuotaAndAreConsideredFilled (generation 1)."""
    t1 = ["topic1"]
    answer = sticky_answer(
        {"topic1": 4},
        {
            "consumer1": Subscription(t1, tps("topic1", 0, "topic1", 1), 1),
            "consumer2": Subscription(t1, tps("topic1", 2), 1),
            "consumer3": Subscription(t1),
        },
    )
    assert shown(answer) == {
        "consumer1": ["topic1-0", "topic1-1"],
        "consumer2": ["topic1-2"],
        "consumer3": ["topic1-3"],
    }


@pytest.mark.parametrize("stale", [9, -1], ids=["stale-generation", "no-generation"])
def test_owned_partitions_are_invalidated_for_a_consumer_with_a_stale_generation(stale):
    """ut_testOwnedPartitionsAreInvalidatedForConsumerWith{Stale,No}Generation: both claim
    the same three partitions, consumer1 at generation 10: consumer1 keeps them."""
    claimed = tps("topic1", 0, "topic1", 2, "topic2", 1)
    answer = sticky_answer(
        {"topic1": 3, "topic2": 3},
        {
            "consumer1": Subscription(T12, claimed, 10),
            "consumer2": Subscription(T12, claimed, stale),
        },
    )
    assert shown(answer) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1"],
        "consumer2": ["topic1-1", "topic2-0", "topic2-2"],
    }


@pytest.mark.parametrize(
    ("owned2", "expected"),
    [
        (("topic1", 0, "topic1", 2), {"consumer1": ["topic1-1"], "consumer2": ["topic1-2"],
                                      "consumer3": ["topic1-0"]}),
        (("topic1", 1, "topic1", 2), {"consumer1": ["topic1-0"], "consumer2": ["topic1-2"],
                                      "consumer3": ["topic1-1"]}),
    ],
    ids=["topic1-0-twice", "topic1-1-twice"],
)  # fmt: skip
def test_a_partition_claimed_twice_in_one_generation_is_nobodys(owned2, expected):
    """ut_testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumers
    InSameGeneration (and ...2): consumer1 owns topic1-0 and -1, consumer2 another pair,
    both generation 1: the partition both claim goes to consumer3."""
    t1 = ["topic1"]
    answer = sticky_answer(
        {"topic1": 3},
        {
            "consumer1": Subscription(t1, tps("topic1", 0, "topic1", 1), 1),
            "consumer2": Subscription(t1, tps(*owned2), 1),
            "consumer3": Subscription(t1),
        },
    )
    assert shown(answer) == expected


def test_no_reassignment_on_current_members():
    """ut_testNoReassignmentOnCurrentMembers: consumer1 new (generation -1), the others'
    partitions from generations 9, 8 and 7: consumer1 gets the three nobody owned."""
    t4 = ["topic0", "topic1", "topic2", "topic3"]
    answer = sticky_answer(
        {"topic0": 3, "topic1": 3, "topic2": 3, "topic3": 3},
        {
            "consumer1": Subscription(t4, (), -1),
            "consumer2": Subscription(t4, tps("topic0", 0, "topic2", 0, "topic1", 0), 9),
            "consumer3": Subscription(t4, tps("topic3", 2, "topic2", 2, "topic1", 1), 8),
            "consumer4": Subscription(t4, tps("topic3", 1, "topic0", 1, "topic0", 2), 7),
        },
    )
    assert shown(answer)["consumer1"] == ["topic1-2", "topic2-1", "topic3-0"]


# The Kafka lab's librdkafka group (recorded in tests/data/lab-3.9-straddle; confluent-kafka 2.16,
# librdkafka 2.16.0), members in the coordinator's (JoinGroup) order, each member's
# partitions of clicks (4) as the tools captured them after each rebalance.
R1 = "lab-rdkafka-1-9262e4d3-0390-455c-9b1d-75b9055e6e3c"
R2 = "lab-rdkafka-2-00c922df-8343-40ab-9c24-6d9b05ae0a61"
R3 = "lab-rdkafka-3-4909f84c-810e-4d7d-a220-7683e43d14f2"


def clicks(*partitions: int) -> list[TopicPartition]:
    return [TopicPartition("clicks", p) for p in partitions]


def test_the_labs_librdkafka_group_round_by_round():
    """Given the lab's group: R1 and R2 join (nothing owned); R3 joins (generation 2,
    then its follow-up round 3); R1 leaves (generation 4). Then each round's answer is
    what the brokers' clients were given: [0, 2] / [1, 3] (Kafka's Java assignor gives
    [0, 1] / [2, 3]); R2 revokes clicks-1, which R3 takes in the follow-up round; R1's
    0 and 2 go to R3 and R2."""
    assignor = LibrdkafkaCooperativeStickyAssignor()

    def assign(owned: dict[str, list[TopicPartition]], generation: int, *members: str):
        subs = {m: Subscription(["clicks"], owned.get(m, ()), generation) for m in members}
        return assignor.assign({"clicks": 4}, subs)

    first = assign({}, -1, R1, R2)
    assert first == {R1: clicks(0, 2), R2: clicks(1, 3)}
    revoked = assign(first, 1, R1, R3, R2)
    assert revoked == {R1: clicks(0, 2), R3: [], R2: clicks(3)}
    handed = assign(revoked, 2, R1, R3, R2)
    assert handed == {R1: clicks(0, 2), R3: clicks(1), R2: clicks(3)}
    assert assign(handed, 3, R3, R2) == {R3: clicks(0, 1), R2: clicks(2, 3)}


def test_the_cooperative_adjustment_leaves_out_what_another_member_owns():
    """rd_kafka_cooperative_protocol_adjust_assignment: Given a owns t-0 and t-1, b owns
    t-2 and t-9 (a partition the answer no longer has), and an answer moving t-1 to b and
    giving the unowned t-3 to b. Then a keeps t-0 (and t-1 only in the next round), b
    gets t-2 and t-3 and keeps t-9 (owned, not in the answer: back to its owner)."""
    subs = {
        "a": Subscription(["t"], clicks_of("t", 0, 1)),
        "b": Subscription(["t"], clicks_of("t", 2, 9)),
    }
    answer = {"a": clicks_of("t", 0), "b": clicks_of("t", 1, 2, 3)}
    adjusted = cooperative_adjustment(answer, subs)
    assert {m: sorted(p) for m, p in adjusted.items()} == {
        "a": clicks_of("t", 0),
        "b": clicks_of("t", 2, 3, 9),
    }


def clicks_of(topic: str, *partitions: int) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in partitions]


def test_a_partition_moved_back_and_moved_again_aborts_as_librdkafka_would():
    """librdkafka keeps a moved-back partition's movement record (Java drops it), so
    moving that partition again fails its rd_assert: the leader would abort."""
    moves = _Movements()
    tp = TopicPartition("t", 0)
    moves.move(tp, "a", "b")
    moves.move(tp, "b", "a")  # back where it was: no record by topic, one by partition
    assert moves.by_topic == {} and moves.by_partition == {tp: ("a", "b")}
    with pytest.raises(LibrdkafkaAbort, match="no movement record of t-0"):
        moves.move(tp, "a", "c")


def test_range_and_roundrobin_order_a_mixed_static_group_by_member_id():
    """rd_kafka_group_member_cmp compares instance ids only between two static members:
    Given b static (instance "z") and a dynamic on t0 (5 partitions). Then librdkafka's
    range gives a the first range (Kafka's puts the static member first) and its
    roundrobin deals a first."""
    subs = {"b": Subscription(["t0"], group_instance_id="z"), "a": Subscription(["t0"])}
    assert shown(LibrdkafkaRangeAssignor().assign({"t0": 5}, subs)) == {
        "b": ["t0-3", "t0-4"],
        "a": ["t0-0", "t0-1", "t0-2"],
    }
    assert shown(LibrdkafkaRoundRobinAssignor().assign({"t0": 5}, subs)) == {
        "b": ["t0-1", "t0-3"],
        "a": ["t0-0", "t0-2", "t0-4"],
    }


def test_glibc_sort_is_its_merge_sort_for_a_comparator_that_is_no_order():
    """Given a comparator under which x < y, y < z and z < x. Then the answer depends on
    the input order as glibc's msort makes it: [x, z, y] -> the halves [x] and [z, y]
    (sorted: [y, z]) merged -> [x, y, z]; [z, x, y] -> [z] and [x, y] merged, z first
    (z < x) -> [z, x, y]."""
    rank = {("x", "y"): -1, ("y", "z"): -1, ("z", "x"): -1}

    def cmp(a: str, b: str) -> int:
        return 0 if a == b else rank.get((a, b), 1)

    assert glibc_sort(["x", "z", "y"], cmp) == ["x", "y", "z"]
    assert glibc_sort(["z", "x", "y"], cmp) == ["z", "x", "y"]


def test_librdkafka_has_no_eager_sticky_and_refuses_racks():
    assert librdkafka_assignor("sticky") is None
    assert librdkafka_assignor("uniform") is None
    cooperative = librdkafka_assignor("cooperative-sticky")
    assert cooperative is not None and cooperative.protocol == "cooperative"
    subs = {"a": Subscription(["t"], rack="r1")}
    with pytest.raises(RackAwareNotPorted, match="rack-aware assignment is not ported"):
        LibrdkafkaRangeAssignor().assign({"t": 2}, subs, {TopicPartition("t", 0): ["r1"]})
