"""A seeded random assignor: the smallest complete plug-in.

Load it with get_assignor("fleet_rebalance.assignors.examples.random_assignor:RandomAssignor"),
or list that path under `assignors:` in the replay configuration. A plug-in is any class
with a no-argument constructor, `name`, `protocol` and this `assign` signature; it must
return every member as a key, with a sorted list, and own each partition of a subscribed
topic exactly once.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from fleet_rebalance.assignors.types import (
    Assignment,
    PartitionRacks,
    Subscription,
    TopicPartition,
    sorted_assignment,
    validate_input,
)


class RandomAssignor:
    """Each partition to a uniformly random subscriber of its topic (seeded, so a replay
    is reproducible). Valid, neither balanced nor sticky: a baseline to compare with."""

    name = "random"
    protocol = "eager"

    def __init__(self, seed: int = 848) -> None:
        self.seed = seed

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None = None,
    ) -> Assignment:
        validate_input(partitions_per_topic, subscriptions)
        rng = random.Random(self.seed)
        members = sorted(subscriptions)
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for topic in sorted(partitions_per_topic):
            subscribers = [m for m in members if topic in subscriptions[m].topic_set]
            if not subscribers:
                continue
            for partition in range(partitions_per_topic[topic]):
                assignment[rng.choice(subscribers)].append(TopicPartition(topic, partition))
        return sorted_assignment(assignment, members)
