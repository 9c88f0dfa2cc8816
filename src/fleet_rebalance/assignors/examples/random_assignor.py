"""A seeded random assignor: the smallest complete plug-in.

Load it with get_assignor("fleet_rebalance.assignors.examples.random_assignor:RandomAssignor"),
or list that path under `assignors:` in the replay configuration. A plug-in is any class
with a no-argument constructor, `name`, `protocol` and an `assign(partitions_per_topic,
subscriptions, partition_racks=None)` method returning every member as a key, with a
sorted list, each partition of a subscribed topic owned exactly once. Subclassing
AssignorBase, as here, does the input checks and the output form: implement `_assign`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from fleet_rebalance.assignors.types import (
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
)


class RandomAssignor(AssignorBase):
    """Each partition to a uniformly random subscriber of its topic (seeded, so a replay
    is reproducible). Valid, neither balanced nor sticky: a baseline to compare with."""

    name = "random"
    protocol = "eager"

    def __init__(self, seed: int = 848) -> None:
        self.seed = seed

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        rng = random.Random(self.seed)
        members = sorted(subscriptions)
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for topic in sorted(partitions_per_topic):
            subscribers = [m for m in members if topic in subscriptions[m].topic_set]
            if not subscribers:
                continue
            for partition in range(partitions_per_topic[topic]):
                assignment[rng.choice(subscribers)].append(TopicPartition(topic, partition))
        return assignment
