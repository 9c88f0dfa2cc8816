"""Pieces of Kafka's AbstractStickyAssignor: previous ownership, rack info, movements."""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from fleet_rebalance.assignors.java import JavaHashMap, string_key, topic_partition_hash
from fleet_rebalance.assignors.members import member_rack
from fleet_rebalance.assignors.range import use_rack_aware
from fleet_rebalance.assignors.types import (
    DEFAULT_GENERATION,
    PartitionRacks,
    Subscription,
    TopicPartition,
)

log = logging.getLogger("fleet_rebalance.assignors.sticky")


def _tp_hash(tp: TopicPartition) -> int:
    return topic_partition_hash(tp.topic, tp.partition)


def new_tp_set() -> JavaHashMap[TopicPartition]:
    return JavaHashMap(_tp_hash)


@dataclass
class PreviousOwnership:
    """allSubscriptionsEqual's by-products: who keeps which previously owned partition."""

    all_equal: bool
    owned: dict[str, list[TopicPartition]]  # consumerToOwnedPartitions, in leader order
    multiple_owners: set[TopicPartition]
    max_generation: int


def valid_owned(
    subscription: Subscription, partitions_per_topic: Mapping[str, int]
) -> list[TopicPartition]:
    """Owned partitions that still exist. Kafka drops those of topics without metadata;
    partition numbers past the topic's count are dropped too (Kafka never shrinks topics,
    so only a stale capture produces them)."""
    return [
        tp
        for tp in subscription.owned_partitions
        if 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0)
    ]


def previous_ownership(
    order: list[str],
    subscriptions: Mapping[str, Subscription],
    partitions_per_topic: Mapping[str, int],
) -> PreviousOwnership:
    all_equal = True
    subscribed: set[str] = set()
    owner_of: dict[TopicPartition, str] = {}
    owned: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    max_generation = DEFAULT_GENERATION
    for consumer in order:
        subscription = subscriptions[consumer]
        # Kafka seeds the comparison from the first non-empty subscription it meets.
        if not subscribed:
            subscribed |= subscription.topic_set
        elif all_equal and subscription.topic_set != subscribed:
            all_equal = False
        generation = subscription.generation
        max_generation = max(max_generation, generation)
        mine: list[TopicPartition] = []
        owned[consumer] = mine
        for tp in valid_owned(subscription, partitions_per_topic):
            other = owner_of.get(tp)
            if other is None:
                mine.append(tp)
                owner_of[tp] = consumer
                continue
            other_generation = subscriptions[other].generation
            if generation == other_generation:
                log.error(
                    "Found multiple consumers %s and %s claiming the same TopicPartition %s "
                    "in the same generation %d, this will be invalidated and removed from "
                    "their previous assignment.",
                    consumer,
                    other,
                    tp,
                    generation,
                )
                multiple.add(tp)
                _remove_first(owned[other], tp)
                owner_of[tp] = consumer
                continue
            log.warning(
                "Consumer %s in generation %d and consumer %s in generation %d claiming the "
                "same TopicPartition %s in different generations. The topic partition will be "
                "assigned to the member with the higher generation %d.",
                consumer,
                generation,
                other,
                other_generation,
                tp,
                max(generation, other_generation),
            )
            if generation > other_generation:
                mine.append(tp)
                _remove_first(owned[other], tp)
                owner_of[tp] = consumer
    return PreviousOwnership(all_equal, owned, multiple, max_generation)


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    if tp in items:
        items.remove(tp)


class RackInfo:
    """AbstractStickyAssignor.RackInfo: which member racks and replica racks count."""

    def __init__(
        self,
        order: list[str],
        subscriptions: Mapping[str, Subscription],
        partitions_per_topic: Mapping[str, int],
        partition_racks: PartitionRacks | None,
    ) -> None:
        by_rack: dict[str, list[str]] = {}
        for consumer in order:
            rack = member_rack(subscriptions[consumer])
            if rack:
                by_rack.setdefault(rack, []).append(consumer)
        racks_of: dict[TopicPartition, set[str]] = {}
        all_partition_racks: set[str] = set()
        if by_rack:
            given = partition_racks or {}
            for topic, count in partitions_per_topic.items():
                for p in range(count):
                    tp = TopicPartition(topic, p)
                    racks = {r for r in given.get(tp, ()) if r is not None}
                    racks_of[tp] = racks
                    all_partition_racks |= racks
        if use_rack_aware(set(by_rack), all_partition_racks, racks_of):
            self.consumer_racks = {c: r for r, cs in by_rack.items() for c in cs}
            self.partition_racks = racks_of
        else:
            self.consumer_racks = {}
            self.partition_racks = {}
        # Kafka counts these from every partition's replica racks, rack-aware or not.
        self.consumers_by_partition = {
            tp: sum(len(by_rack.get(r, ())) for r in racks) for tp, racks in racks_of.items()
        }

    def racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(consumer)
        if rack is None:
            return False
        replica_racks = self.partition_racks.get(tp)
        return replica_racks is None or rack not in replica_racks

    def sort_by_rack_consumers(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        if not self.consumers_by_partition:
            return partitions
        return sorted(partitions, key=lambda tp: self.consumers_by_partition.get(tp, 0))

    def next_rack_consumer(self, tp: TopicPartition, consumers: list[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(consumers)):
            index = (first + i) % len(consumers)
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


class SortedConsumers:
    """Java's TreeSet<String> ordered by (assignment size, member id), where sizes change:
    callers remove a member before its size changes and add it back after, as Kafka does."""

    def __init__(self, sizes: Callable[[str], int]) -> None:
        self._size = sizes
        self._keys: list[tuple[int, bytes, str]] = []

    def _key(self, consumer: str) -> tuple[int, bytes, str]:
        return (self._size(consumer), string_key(consumer), consumer)

    def add(self, consumer: str) -> None:
        key = self._key(consumer)
        i = bisect.bisect_left(self._keys, key)
        if i == len(self._keys) or self._keys[i] != key:
            self._keys.insert(i, key)

    def remove(self, consumer: str) -> None:
        key = self._key(consumer)
        i = bisect.bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            del self._keys[i]

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]

    def __iter__(self) -> Iterator[str]:
        return iter([k[2] for k in self._keys])

    def __len__(self) -> int:
        return len(self._keys)


@dataclass
class PartitionMovements:
    """Kafka's record of moves during a general-path rebalance, used to move a partition
    back along a previous move instead of creating a new one (keeps the result sticky)."""

    by_topic: dict[str, dict[tuple[str, str], JavaHashMap[TopicPartition]]] = field(
        default_factory=dict
    )
    moves: dict[TopicPartition, tuple[str, str]] = field(default_factory=dict)

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        per_pair = self.by_topic[tp.topic]
        per_pair[pair].remove(tp)
        if not len(per_pair[pair]):
            del per_pair[pair]
        if not per_pair:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, new_tp_set()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            source, _ = self._remove_record(tp)
            if source != new:
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        per_pair = self.by_topic.get(tp.topic)
        if per_pair is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = per_pair.get((new, old))
        if reverse is None:
            return tp
        return reverse.first()
