"""One shared invariant checker for every assignor test."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from fleet_rebalance.assignors import Subscription, TopicPartition


def subs(topics_by_member: Mapping[str, list[str]], **kwargs) -> dict[str, Subscription]:
    return {m: Subscription(t, **kwargs) for m, t in topics_by_member.items()}


def owners(assignment: Mapping[str, list[TopicPartition]]) -> Counter:
    return Counter(tp for tps in assignment.values() for tp in tps)


def check_valid(assignment, partitions_per_topic, subscriptions, *, complete=True) -> None:
    """Every member a key with a sorted list; each partition of a subscribed topic owned by
    exactly one (or, complete=False, at most one) subscriber of its topic."""
    assert set(assignment) == set(subscriptions)
    for member, tps in assignment.items():
        assert tps == sorted(tps)
        for tp in tps:
            assert tp.topic in subscriptions[member].topics, (member, tp)
    counts = owners(assignment)
    subscribed = {t for s in subscriptions.values() for t in s.topics}
    for topic in subscribed:
        for p in range(partitions_per_topic.get(topic, 0)):
            held = counts[TopicPartition(topic, p)]
            assert held == 1 if complete else held <= 1, (topic, p, held)
    assert all(
        tp.topic in subscribed and tp.partition < partitions_per_topic[tp.topic] for tp in counts
    )


def spread(assignment) -> int:
    sizes = [len(v) for v in assignment.values()]
    return max(sizes) - min(sizes) if sizes else 0


def kept(before, after) -> int:
    return sum(len(set(before.get(m, ())) & set(tps)) for m, tps in after.items())


def follow_up(assignor, partitions_per_topic, subscriptions, first_round, generation):
    """The cooperative follow-up rebalance: members rejoin owning what round 1 gave them."""
    again = {
        m: Subscription(s.topics, first_round[m], generation, s.group_instance_id, s.rack)
        for m, s in subscriptions.items()
    }
    return assignor.assign(partitions_per_topic, again)
