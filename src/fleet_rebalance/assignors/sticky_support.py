"""Pieces of Kafka's AbstractStickyAssignor: previous ownership, rack info, movements."""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter, lt

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
_TOPIC = itemgetter(0)
_PARTITION = itemgetter(1)


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
    seed: Collection[str] = ()
    uncontested = _all_valid_and_distinct(order, subscriptions, partitions_per_topic)
    for consumer in order:
        subscription = subscriptions[consumer]
        if uncontested:
            owned[consumer] = list(subscription.owned_partitions)
        # Kafka seeds the comparison from the first non-empty subscription it meets.
        if not subscribed:
            subscribed |= subscription.topic_set
            seed = subscription.topics
        elif (
            all_equal
            and subscription.topics != seed  # equal tuples, equal sets: the cheap check
            and subscription.topic_set != subscribed
        ):
            all_equal = False
        generation = subscription.generation
        max_generation = max(max_generation, generation)
        if uncontested:
            continue
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


def _all_valid_and_distinct(
    order: list[str],
    subscriptions: Mapping[str, Subscription],
    partitions_per_topic: Mapping[str, int],
) -> bool:
    """Every owned partition exists and has one claimant (the usual case), checked with
    bulk operations instead of previous_ownership's per-partition loop."""
    claimed = list(chain.from_iterable(subscriptions[c].owned_partitions for c in order))
    if not claimed:
        return True
    numbers = list(map(_PARTITION, claimed))
    counts = map(partitions_per_topic.get, map(_TOPIC, claimed), repeat(0))
    return min(numbers) >= 0 and all(map(lt, numbers, counts)) and len(set(claimed)) == len(claimed)


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
    callers remove a member before its size changes and add it back after, as Kafka does.

    Also keeps the same order per topic (members subscribed to it), so "the smallest
    member that can take this partition" needs no scan over every other member.
    """

    def __init__(
        self, sizes: Callable[[str], int], topics_of: Mapping[str, list[str]] | None = None
    ) -> None:
        self._size = sizes
        self._topics_of = topics_of or {}
        self._keys: list[tuple[int, bytes, str]] = []
        self._by_topic: dict[str, list[tuple[int, bytes, str]]] = {}
        # Per member, built once: the sorted lists it belongs to (these lists are only
        # ever changed in place) and its id's sort key.
        self._lists_of: dict[str, list[list[tuple[int, bytes, str]]]] = {}
        self._id_keys: dict[str, bytes] = {}

    def _key(self, consumer: str) -> tuple[int, bytes, str]:
        id_key = self._id_keys.get(consumer)
        if id_key is None:
            id_key = self._id_keys[consumer] = string_key(consumer)
        return (self._size(consumer), id_key, consumer)

    def _lists(self, consumer: str) -> list[list[tuple[int, bytes, str]]]:
        lists = self._lists_of.get(consumer)
        if lists is None:
            lists = [self._keys]
            lists.extend(
                self._by_topic.setdefault(t, []) for t in self._topics_of.get(consumer, ())
            )
            self._lists_of[consumer] = lists
        return lists

    def add(self, consumer: str) -> None:
        key = self._key(consumer)
        for keys in self._lists(consumer):
            i = bisect.bisect_left(keys, key)
            if i == len(keys) or keys[i] != key:
                keys.insert(i, key)

    def remove(self, consumer: str) -> None:
        key = self._key(consumer)
        for keys in self._lists(consumer):
            i = bisect.bisect_left(keys, key)
            if i < len(keys) and keys[i] == key:
                del keys[i]

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]

    def __iter__(self) -> Iterator[str]:
        # Lazy: every caller stops iterating before it changes the set, as in Kafka.
        return (key[2] for key in self._keys)

    def subscribed_to(self, topic: str) -> Iterator[str]:
        """Members subscribed to topic, in the set's order (lazy, like __iter__)."""
        return (key[2] for key in self._by_topic.get(topic, ()))

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


class BalanceIndex:
    """Per-topic sizes that make the general path's isBalanced() O(topics).

    Kafka's isBalanced() is false iff some member c that can still take partitions
    subscribes to a topic one of whose partitions sits with a member holding more than
    |c| + 1 partitions. That member is never c itself, so per topic it is enough to
    compare the largest owner with the smallest not-full subscriber. Both are kept in
    sorted lists and updated for the two members a move touches.
    """

    def __init__(
        self,
        current: Mapping[str, Mapping[TopicPartition, None]],
        consumer_topics: Mapping[str, list[str]],
        max_size: Callable[[str], int],
    ) -> None:
        self.current = current
        self.topics_of = {c: consumer_topics[c] for c in current}
        self.max_size = {c: max_size(c) for c in current}
        self.owned: dict[str, dict[str, int]] = {}
        self.owners: dict[str, list[tuple[int, str]]] = {}
        self.not_full: dict[str, list[tuple[int, str]]] = {}
        self.subscribers: dict[str, list[tuple[int, str]]] = {}
        for consumer, partitions in current.items():
            counts: dict[str, int] = {}
            for tp in partitions:
                counts[tp.topic] = counts.get(tp.topic, 0) + 1
            self.owned[consumer] = counts
            self._insert(consumer)

    def _entries(self, consumer: str) -> Iterator[tuple[dict, str]]:
        size = len(self.current[consumer])
        for topic in self.owned[consumer]:
            yield self.owners, topic
        for topic in self.topics_of[consumer]:
            yield self.subscribers, topic
            if size < self.max_size[consumer]:
                yield self.not_full, topic

    def _insert(self, consumer: str) -> None:
        key = (len(self.current[consumer]), consumer)
        for table, topic in self._entries(consumer):
            bisect.insort(table.setdefault(topic, []), key)

    def _delete(self, consumer: str) -> None:
        key = (len(self.current[consumer]), consumer)
        for table, topic in self._entries(consumer):
            entries = table[topic]
            del entries[bisect.bisect_left(entries, key)]

    def detach(self, *consumers: str) -> None:
        """Call before the consumers' assignments change."""
        for consumer in consumers:
            self._delete(consumer)

    def attach(self, moved: TopicPartition, old: str, new: str) -> None:
        """Call after `moved` went from old to new."""
        counts = self.owned[old]
        counts[moved.topic] -= 1
        if not counts[moved.topic]:
            del counts[moved.topic]
        self.owned[new][moved.topic] = self.owned[new].get(moved.topic, 0) + 1
        for consumer in dict.fromkeys((old, new)):
            self._insert(consumer)

    def balanced(self) -> bool:
        for topic, owners in self.owners.items():
            candidates = self.not_full.get(topic)
            if owners and candidates and owners[-1][0] > candidates[0][0] + 1:
                return False
        return True

    def smallest_subscriber(self, topic: str) -> int:
        return self.subscribers[topic][0][0]
