"""KIP-848's server-side UniformAssignor (group coordinator), homogeneous and heterogeneous.

Kafka keys the assignment by topic id (a random UUID per topic and cluster): the
homogeneous builder deals unassigned partitions in the HashSet<Uuid> order of the
subscribed topics and walks each member's assignment in HashMap<Uuid> order (filled
in the order its owned partitions list the topics, as the coordinator loads it from
its record; a bucket's keys keep that order); the heterogeneous one breaks its
topic-order ties with Uuid.compareTo. So the same group on two clusters can get
different assignments. `topic_ids` (name -> the id as kafka-topics prints it) gives
the real ids; a topic without one is keyed by its name (String.hashCode,
String.compareTo), which is what Kafka would do if the ids hashed and sorted as the
names. Everything else follows UniformHomogeneousAssignmentBuilder
and UniformHeterogeneousAssignmentBuilder, including the member id HashMap order that
decides which members get the extra partition.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
from collections import Counter
from collections.abc import Collection, Mapping
from functools import lru_cache

from fleet_rebalance.assignors.java import (
    DEFAULT_CAPACITY,
    MASK32,
    MIN_TREEIFY_CAPACITY,
    TREEIFY_THRESHOLD,
    hashmap_order,
    int32,
    member_order,
    string_hash,
    string_key,
    table_size_for,
)
from fleet_rebalance.assignors.members import subscribers_by_topic
from fleet_rebalance.assignors.types import (
    Assignment,
    AssignorBase,
    AssignorInputError,
    PartitionRacks,
    Subscription,
    TopicPartition,
    sorted_assignment,
    topic_partitions,
    validate_input,
)
from fleet_rebalance.vocabulary import RebalanceProtocol

MAX_ITERATION_COUNT = 16


def _copy_capacity(size: int) -> int:
    """Initial capacity of `new HashSet<>(collection)`."""
    return max(int(size / 0.75) + 1, 16)


def _int_set_order(partitions: list[int]) -> list[int]:
    """A member's partitions as Java's HashSet<Integer> (from a collection) iterates them."""
    if len(partitions) == 1:
        return partitions
    capacity = _copy_capacity(len(partitions))
    ordered = sorted(partitions)
    if ordered[-1] < capacity:  # Integer.hashCode is the value: one bucket each, ascending
        return ordered
    if ordered[-1] < 1 << 16:  # HashMap's spread leaves values under 2^16 alone
        mask = table_size_for(capacity) - 1
        if ordered[-1] - ordered[0] <= mask:
            # One key per bin, ascending from the bin after the first's: a rotation.
            wrap = bisect.bisect_left(ordered, (ordered[0] | mask) + 1)
            return ordered[wrap:] + ordered[:wrap]
        bucket = mask.__and__
        if (
            len(ordered) <= TREEIFY_THRESHOLD
            or mask >= MIN_TREEIFY_CAPACITY - 1
            or max(Counter(map(bucket, ordered)).values()) <= TREEIFY_THRESHOLD
        ):  # no bin grew past eight, so no resize: a stable sort by bucket
            return sorted(ordered, key=bucket)
    return hashmap_order(ordered, _identity, capacity)


@lru_cache(maxsize=1 << 16)
def uuid_bits(topic_id: str) -> tuple[int, int] | None:
    """Kafka's Uuid (most, least significant bits, signed) from its toString(): URL-safe
    base64 of 16 bytes without padding. None if `topic_id` is not one."""
    try:
        raw = base64.urlsafe_b64decode(topic_id + "==")
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 16 or len(topic_id) != 22:
        return None
    return (
        int.from_bytes(raw[:8], "big", signed=True),
        int.from_bytes(raw[8:], "big", signed=True),
    )


class _TopicKeys:
    """Each topic's hashCode and sort key as Kafka's assignor sees its topic id; only
    the topics an assignment touches are looked up (the map holds the whole cluster)."""

    def __init__(self, topic_ids: Mapping[str, str] | None) -> None:
        self.ids = topic_ids or {}
        self._hashes: dict[str, int] = {}

    def bits(self, topic: str) -> tuple[int, int] | None:
        topic_id = self.ids.get(topic)
        return uuid_bits(topic_id) if isinstance(topic_id, str) else None

    def hash(self, topic: str) -> int:
        """Uuid.hashCode: (int) (h >> 32) ^ (int) h with h = msb ^ lsb."""
        value = self._hashes.get(topic)
        if value is None:
            bits = self.bits(topic)
            if bits is None:
                value = string_hash(topic)
            else:
                h = bits[0] ^ bits[1]
                value = int32(((h >> 32) ^ h) & MASK32)
            self._hashes[topic] = value
        return value

    def key(self, topic: str) -> tuple:
        """Uuid.compareTo (signed msb, then lsb); names after ids, by String.compareTo."""
        bits = self.bits(topic)
        return (0, *bits, b"") if bits is not None else (1, 0, 0, string_key(topic))

    def order(self, topics: list[str], capacity: int = DEFAULT_CAPACITY) -> list[str]:
        """Iteration order of a HashMap<Uuid, ...> filled with `topics` in order."""
        if not self.ids or not any(self.bits(t) for t in topics):
            return _name_order(tuple(topics), capacity)
        return hashmap_order(topics, self.hash, capacity)


@lru_cache(maxsize=4096)
def _name_order(topics: tuple[str, ...], capacity: int) -> list[str]:
    return hashmap_order(topics, string_hash, capacity)


def _identity(value: int) -> int:
    return value


class UniformAssignor(AssignorBase):
    """Spread partitions evenly, keeping current owners where balance allows.

    Homogeneous (every member subscribes to the same topics): each member keeps up to
    its quota (floor(P/M), plus one for the first P % M members in member order, where a
    member that would take its extra one from the unassigned partitions leaves it to a
    later member while enough are left: Kafka 4.1's KAFKA-18688) of what it owns; the
    rest is dealt to members below quota. Heterogeneous: keep everything
    still subscribed, fill least-loaded subscribers topic by topic (topics with more
    partitions per subscriber first), then move partitions from the most to the least
    loaded subscribers of each topic, up to 16 passes. Example: 6 partitions, A owns
    0-3, B owns 4-5, C joins -> A keeps 2, B keeps 2, C gets 2.
    Invariants: validity, balance (homogeneous: counts differ by <= 1), stickiness;
    balance wins. The assignor is server-side: every partition that changes owner is
    unowned until revoked (see replay's cooperative accounting).
    """

    name = "uniform"
    protocol = RebalanceProtocol.COOPERATIVE
    takes_topic_ids = True  # assign() accepts topic_ids (see the module docstring)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None = None,
        *,
        topic_ids: Mapping[str, str] | None = None,
    ) -> Assignment:
        validate_input(partitions_per_topic, subscriptions)
        result = self._assign(partitions_per_topic, subscriptions, partition_racks, topic_ids)
        return sorted_assignment(result, subscriptions)

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
        topic_ids: Mapping[str, str] | None = None,
    ) -> dict[str, list[TopicPartition]]:
        members = member_order(subscriptions)
        if not members:
            return {}
        keys = _TopicKeys(topic_ids)
        first = subscriptions[members[0]]
        if all(_same_topics(subscriptions[m], first) for m in members):
            # The coordinator keeps a member's topic names in `new HashSet<>(list)` and
            # copies the first member's ids from it in that set's order (TopicIds, which
            # skips names it cannot resolve but counts them in its size): insertion
            # order decides ties inside a bucket of the ids' HashSet.
            names = tuple(dict.fromkeys(first.topics))
            capacity = _copy_capacity(len(names))
            topics = [t for t in _name_order(names, capacity) if t in partitions_per_topic]
            return _homogeneous(
                members, keys.order(topics, capacity), partitions_per_topic, subscriptions, keys
            )
        return _Heterogeneous(members, subscriptions, partitions_per_topic, keys).build()


def _same_topics(subscription: Subscription, other: Subscription) -> bool:
    """Equal topic sets; equal tuples (the usual case) are compared first, more cheaply."""
    return subscription.topics == other.topics or subscription.topic_set == other.topic_set


def _owned(
    members: list[str],
    subscriptions: Mapping[str, Subscription],
    partitions_per_topic: Mapping[str, int],
    topics: list[str],
) -> tuple[list[Collection[TopicPartition]], set[TopicPartition]]:
    """Each member's owned partitions of `topics`, and all of them. A partition may have
    one owner only, as the coordinator guarantees; a member holds its partitions in a
    Set, so one listed twice counts once; a deleted topic's or partition's are dropped."""
    owned = [subscriptions[m].owned_partitions for m in members]
    everything = list(itertools.chain.from_iterable(owned))
    claimed = set(everything)
    if len(claimed) == len(everything) and _partition_set(
        tuple((t, partitions_per_topic[t]) for t in topics)
    ).issuperset(claimed):
        return owned, claimed  # the usual case, checked without a per-partition loop
    wanted = set(topics)
    owner: dict[TopicPartition, str] = {}
    for index, member in enumerate(members):
        mine: dict[TopicPartition, None] = {}
        for tp in owned[index]:
            if 0 <= tp[1] < partitions_per_topic.get(tp[0], 0):
                if owner.setdefault(tp, member) != member:
                    _raise_shared(tp, owner[tp], member)
                if tp[0] in wanted:
                    mine[tp] = None
        owned[index] = mine.keys()
    return owned, set(itertools.chain.from_iterable(owned))


@lru_cache(maxsize=64)
def _partition_set(counts: tuple[tuple[str, int], ...]) -> frozenset[TopicPartition]:
    return frozenset(itertools.chain.from_iterable(topic_partitions(*tc) for tc in counts))


def _raise_shared(tp: TopicPartition, first: str, second: str) -> None:
    raise AssignorInputError(
        f"{tp} is owned by both {first!r} and {second!r}; "
        "a KIP-848 group assigns each partition to one member"
    )


def _by_topic(
    owned: Collection[TopicPartition], partitions_per_topic: Mapping[str, int], keys: _TopicKeys
) -> dict[str, list[int]]:
    """A member's partition numbers per topic, the topics in its HashMap<Uuid> order."""
    per_topic: dict[str, list[int]] = {}
    for topic, partition in owned:
        if 0 <= partition < partitions_per_topic.get(topic, 0):
            per_topic.setdefault(topic, []).append(partition)
    if len(per_topic) > 1:
        per_topic = {t: per_topic[t] for t in keys.order(list(per_topic))}
    return {t: list(dict.fromkeys(ps)) for t, ps in per_topic.items()}


def _homogeneous(
    members: list[str],
    topic_set: list[str],
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    keys: _TopicKeys,
) -> dict[str, list[TopicPartition]]:
    """`topic_set`: the subscribed topics in the order of the builder's HashSet<Uuid>."""
    if not topic_set:
        return {}
    owned, claimed = _owned(members, subscriptions, partitions_per_topic, topic_set)
    parts = {t: topic_partitions(t, partitions_per_topic[t]) for t in topic_set}
    unassigned: list[TopicPartition] = []
    total = sum(partitions_per_topic[t] for t in topic_set)
    if len(claimed) < total:
        unowned = claimed.__contains__
        for topic in topic_set:
            unassigned.extend(itertools.filterfalse(unowned, parts[topic]))
    minimum, extra = divmod(total, len(members))
    target: dict[str, list[TopicPartition]] = {}
    unfilled: list[tuple[str, int]] = []
    for index, member in enumerate(members):
        quota = minimum
        gets_extra = extra > 0
        if gets_extra:
            quota += 1
        if len(owned[index]) <= quota:  # keeps all it owns
            kept = list(owned[index])
            quota -= len(kept)
        else:
            kept = []
            per_topic = _by_topic(
                subscriptions[member].owned_partitions, partitions_per_topic, keys
            )
            for topic, partitions in per_topic.items():
                if topic not in parts:
                    continue
                by_number = parts[topic].__getitem__
                if len(partitions) <= quota:
                    quota -= len(partitions)
                    kept.extend(map(by_number, partitions))
                    continue
                partitions = _int_set_order(partitions)  # which ones stay: HashSet order
                kept.extend(map(by_number, partitions[:quota]))
                unassigned.extend(map(by_number, partitions[quota:]))
                quota = 0
        # KAFKA-18688 (4.1): a member that would fill its extra slot from the unassigned
        # partitions leaves it to a later member, which may already own its extra one.
        if quota > 0 and gets_extra and len(members) - index > extra:
            quota -= 1
            gets_extra = False
        if quota > 0:
            unfilled.append((member, quota))
        if gets_extra:
            extra -= 1
        target[member] = kept
    index = 0
    for member, quota in unfilled:
        take = unassigned[index : index + quota]
        target[member].extend(take)
        index += len(take)
    if index < len(unassigned):
        raise AssignorInputError("Partitions were left unassigned")
    return target


class _Heterogeneous:
    """UniformHeterogeneousAssignmentBuilder. Its tie-breaks are total (topic keys, then
    member index), so the order in which members and topics are gathered here is free."""

    def __init__(
        self,
        members: list[str],
        subscriptions: Mapping[str, Subscription],
        partitions_per_topic: Mapping[str, int],
        keys: _TopicKeys,
    ) -> None:
        self.members = members
        self.keys = keys
        self.counts = partitions_per_topic
        self.subscribers = {
            t: indexes
            for t, indexes in subscribers_by_topic(
                members, subscriptions, range(len(members))
            ).items()
            if t in partitions_per_topic
        }
        self.owners = {t: [-1] * partitions_per_topic[t] for t in self.subscribers}
        self.parts = {t: topic_partitions(t, partitions_per_topic[t]) for t in self.subscribers}
        self.sizes = [0] * len(members)
        self.target: dict[str, dict[TopicPartition, None]] = {}
        released: dict[TopicPartition, int] = {}  # owned, but no longer subscribed to
        for index, member in enumerate(members):
            mine = subscriptions[member].topic_set
            kept: dict[TopicPartition, None] = {}
            for tp in subscriptions[member].owned_partitions:
                topic, p = tp
                if topic in mine and topic in self.owners:  # subscribed, and it exists
                    owners = self.owners[topic]
                    if 0 <= p < len(owners):
                        if owners[p] == -1:
                            owners[p] = index
                            kept[tp] = None
                        elif owners[p] != index:
                            _raise_shared(tp, members[owners[p]], member)
                elif (
                    0 <= p < partitions_per_topic.get(topic, 0)
                    and released.setdefault(tp, index) != index
                ):
                    _raise_shared(tp, members[released[tp]], member)
            self.sizes[index] = len(kept)
            self.target[member] = kept
        for tp, index in released.items():  # claimed by a subscriber as well
            owner = self.owners.get(tp[0], ())[tp[1] : tp[1] + 1]
            if owner and owner[0] != -1:
                first, second = sorted((owner[0], index))
                _raise_shared(tp, members[first], members[second])

    def _topic_key(self, topic: str) -> tuple:
        subscribers = len(self.subscribers[topic])
        return (-self.counts[topic] / subscribers, subscribers, self.keys.key(topic))

    def build(self) -> dict[str, list[TopicPartition]]:
        if not self.subscribers:
            return {m: list(tps) for m, tps in self.target.items()}
        unassigned = {
            t: [p for p, owner in enumerate(owners) if owner == -1]
            for t, owners in self.owners.items()
        }
        balancer = _Balancer(self.sizes)
        for topic in sorted((t for t, ps in unassigned.items() if ps), key=self._topic_key):
            balancer.initialize(self.subscribers[topic])
            for p in unassigned[topic]:
                self._assign(topic, p, balancer.next_least_loaded())
        movable = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if movable:
            self._balance_topics(sorted(movable, key=self._topic_key), balancer)
        return {m: list(tps) for m, tps in self.target.items()}

    def _balance_topics(self, topics: list[str], balancer: _Balancer) -> None:
        last_rebalanced = -1
        for _ in range(MAX_ITERATION_COUNT):
            for index, topic in enumerate(topics):
                if index == last_rebalanced:
                    return
                moved = self._balance_topic(topic, balancer)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = index

    def _balance_topic(self, topic: str, balancer: _Balancer) -> int:
        moved = 0
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return moved
        owners = self.owners[topic]
        partitions = sorted(range(self.counts[topic]), key=owners.__getitem__)  # stable
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            partition = partitions[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic, partition, least)
            moved += 1
        return moved

    def _assign(self, topic: str, partition: int, member_index: int) -> None:
        old = self.owners[topic][partition]
        tp = self.parts[topic][partition]
        if old != -1:
            del self.target[self.members[old]][tp]
            self.sizes[old] -= 1
        self.target[self.members[member_index]][tp] = None
        self.owners[topic][partition] = member_index
        self.sizes[member_index] += 1


class _Balancer:
    """MemberAssignmentBalancer: least- and most-loaded ranges over members sorted by size."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []

    def initialize(self, members: list[int]) -> int:
        if not members:
            raise ValueError("Cannot balance an empty subscriber list.")
        self.sorted = sorted(members)
        self.sorted.sort(key=self.sizes.__getitem__)  # stable: by size, then index
        self.least_end = 0
        self.least_count = self.sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = len(self.sorted)
        self.most_end = len(self.sorted)
        self.most_count = self.sizes[self.sorted[-1]] + 1
        self.next_most = len(self.sorted) - 1
        return self.sizes[self.sorted[-1]] - self.sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while (
                self.least_end < len(self.sorted)
                and self.sizes[self.sorted[self.least_end]] == self.least_count
            ):
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while (
                self.most_start > 0
                and self.sizes[self.sorted[self.most_start - 1]] == self.most_count
            ):
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        self.sorted[i], self.sorted[self.most_end - 1] = (
            self.sorted[self.most_end - 1],
            self.sorted[i],
        )
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
