"""What librdkafka's ports share: the contract's checks, and no racks (librdkafka's
rack-aware paths are not ported; the replay has none)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping

from fleet_rebalance.assignors.types import (
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
)


class RackAwareNotPorted(ValueError):
    """librdkafka's rack-aware assignment is not ported (the replay has no racks)."""


class LibrdkafkaAssignor(AssignorBase):
    """A librdkafka assignor: `_deal` gives its answer to members with no racks."""

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        if partition_racks and any(s.rack for s in subscriptions.values()):
            raise RackAwareNotPorted("librdkafka's rack-aware assignment is not ported")
        return self._deal(partitions_per_topic, dict(subscriptions))

    @abstractmethod
    def _deal(
        self, partitions_per_topic: Mapping[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, list[TopicPartition]]: ...
