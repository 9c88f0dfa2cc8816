"""Kafka's RoundRobinAssignor."""

from __future__ import annotations

import bisect
from collections.abc import Mapping

from fleet_rebalance.assignors.java import string_key
from fleet_rebalance.assignors.members import member_info_order
from fleet_rebalance.assignors.types import (
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
    topic_partitions,
)
from fleet_rebalance.vocabulary import RebalanceProtocol


class RoundRobinAssignor(AssignorBase):
    """All partitions, sorted by topic then partition, dealt to members in MemberInfo
    order in a circle; a member not subscribed to the partition's topic is skipped.

    Example: C0, C1, C2 all on t0..t3 (2 partitions each) -> C0 [t0-0, t1-1, t3-0],
    C1 [t0-1, t2-0, t3-1], C2 [t1-0, t2-1]. Invariants: every partition of a subscribed
    topic has exactly one owner; balanced (counts differ by <= 1) when all members
    subscribe to the same topics. Not sticky, not rack-aware.
    """

    name = "roundrobin"
    protocol = RebalanceProtocol.EAGER

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        members = member_info_order(subscriptions)
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        if not members:
            return {}
        topics = sorted({t for s in subscriptions.values() for t in s.topics}, key=string_key)
        present = [t for t in topics if t in partitions_per_topic]
        if all(subscriptions[m].topic_set.issuperset(present) for m in members):
            # Nobody is ever skipped: member k takes every len(members)-th partition.
            ordered = [tp for t in present for tp in topic_partitions(t, partitions_per_topic[t])]
            for k, member in enumerate(members):
                assignment[member] = ordered[k :: len(members)]
            return assignment
        subscribers: dict[str, list[int]] = {t: [] for t in present}
        for index, member in enumerate(members):
            for topic in subscriptions[member].topic_set:
                if topic in subscribers:
                    subscribers[topic].append(index)
        # Kafka deals partition by partition, skipping members not subscribed to its topic.
        # Within a topic that visits the topic's subscribers in a circle, starting from the
        # first at or after the current position: whole topics are dealt by slicing.
        position = 0
        for topic, indexes in subscribers.items():
            count = partitions_per_topic[topic]
            if count <= 0:
                continue
            partitions = topic_partitions(topic, count)
            first = bisect.bisect_left(indexes, position)
            if first == len(indexes):
                first = 0
            for k in range(min(len(indexes), count)):
                member = members[indexes[(first + k) % len(indexes)]]
                assignment[member].extend(partitions[k :: len(indexes)])
            position = (indexes[(first + count - 1) % len(indexes)] + 1) % len(members)
        return assignment
