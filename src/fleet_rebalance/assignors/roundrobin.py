"""Kafka's RoundRobinAssignor."""

from __future__ import annotations

from collections.abc import Mapping

from fleet_rebalance.assignors.java import string_key
from fleet_rebalance.assignors.members import leader_order, sorted_members
from fleet_rebalance.assignors.types import (
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
    topic_partitions,
)


class RoundRobinAssignor(AssignorBase):
    """All partitions, sorted by topic then partition, dealt to members in MemberInfo
    order in a circle; a member not subscribed to the partition's topic is skipped.

    Example: C0, C1, C2 all on t0..t3 (2 partitions each) -> C0 [t0-0, t1-1, t3-0],
    C1 [t0-1, t2-0, t3-1], C2 [t1-0, t2-1]. Invariants: every partition of a subscribed
    topic has exactly one owner; balanced (counts differ by <= 1) when all members
    subscribe to the same topics. Not sticky, not rack-aware.
    """

    name = "roundrobin"
    protocol = "eager"

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        members = sorted_members(leader_order(subscriptions), subscriptions)
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        if not members:
            return {}
        topics = sorted({t for s in subscriptions.values() for t in s.topics}, key=string_key)
        present = [t for t in topics if t in partitions_per_topic]
        ordered = [tp for t in present for tp in topic_partitions(t, partitions_per_topic[t])]
        if all(subscriptions[m].topic_set.issuperset(present) for m in members):
            # Nobody is ever skipped: member k takes every len(members)-th partition.
            for k, member in enumerate(members):
                assignment[member] = list(ordered[k :: len(members)])
            return assignment
        position = 0
        for tp in ordered:
            while tp.topic not in subscriptions[members[position]].topic_set:
                position = (position + 1) % len(members)
            assignment[members[position]].append(tp)
            position = (position + 1) % len(members)
        return assignment
