"""librdkafka's cooperative-sticky assignor: its own C port of Kafka's old StickyAssignor.

A port of `rd_kafka_sticky_assignor_assign_cb` (src/rdkafka_sticky_assignor.c) and of the
cooperative adjustment the group leader applies to its answer,
`rd_kafka_cooperative_protocol_adjust_assignment` (src/rdkafka_cgrp.c), librdkafka 2.x
(confluentinc/librdkafka master of 2026-07, 2.16.0 in the lab's confluent-kafka; the
files unchanged in substance since the infinite-loop fix of 2.5.0, #4800). Without
rack awareness: the replay has no racks (docs/replay.md), and given racks it refuses.

librdkafka ports Kafka's StickyAssignor of before KIP-341's constrained path: every
assignment takes the general path, and its tie-breaks are its own, not Java's:
1. prepopulate: each member's owned partitions (highest generation wins; a partition two
   members claim in one generation is nobody's), and each partition's previous owner
   (the second highest generation);
2. sortPartitions: with identical subscriptions, partitions taken one at a time from the
   member with the most (the member id breaks ties, strcmp), one it took over last time
   first; then the rest in the reverse of their insertion into a librdkafka map
   (rd_map iterates newest first); otherwise all by (potential consumers, topic,
   partition);
3. unowned partitions to the member with the fewest, member id breaking ties;
4. performReassignments over the unowned partitions (unless a revocation is required),
   then over all, moving a partition from a member with at least two more than another
   to the first member (fewest partitions, then id) that may take it, as long as the
   assignment is not balanced; a move undoes an earlier opposite move where it can;
5. the new assignment is kept only if its balance score (the sum over member pairs of
   the difference in counts) fell;
6. cooperative: a partition owned by one member and given to another is given to nobody
   this round (the owner revokes it; the follow-up round hands it over); a partition
   owned and left out of the answer (its topic gone) stays with its owner.

Example (the lab's librdkafka group, members in JoinGroup order): c1, c2 subscribe to
clicks (4 partitions), nothing owned -> c1 [0, 2], c2 [1, 3] (Java's: c1 [0, 1], c2 [2, 3]);
c3 joins -> c2 gives up clicks-1 (the first of the member with most, c2 > c1 by id),
which c3 takes in the follow-up round; c1 leaves -> its 0 and 2 go, in the map's reverse
order, 2 to c2 and 0 to c3.

Invariants as Kafka's sticky assignor; where its own code would abort (an rd_assert on a
partition moved back and moved again), `LibrdkafkaAbort` says so.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fleet_rebalance.assignors.librdkafka.base import LibrdkafkaAssignor
from fleet_rebalance.assignors.librdkafka.ordering import eligible_topics, glibc_sort
from fleet_rebalance.assignors.types import Subscription, TopicPartition, topic_partitions
from fleet_rebalance.vocabulary import RebalanceProtocol

Partition = TopicPartition


class LibrdkafkaAbort(RuntimeError):
    """Where librdkafka's own assignor would fail an rd_assert (abort the leader)."""


class LibrdkafkaCooperativeStickyAssignor(LibrdkafkaAssignor):
    """librdkafka's `cooperative-sticky` (module docstring): the leader's answer of one
    round, partitions changing owner left out."""

    name = "cooperative-sticky"
    protocol = RebalanceProtocol.COOPERATIVE

    def _deal(
        self, partitions_per_topic: Mapping[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        return cooperative_adjustment(
            sticky_answer(partitions_per_topic, subscriptions), subscriptions
        )


def sticky_answer(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> dict[str, list[Partition]]:
    """rd_kafka_sticky_assignor_assign_cb's answer (steps 1-5 of the module docstring),
    before the leader's cooperative adjustment: what librdkafka's own unit tests check."""
    return _Sticky(partitions_per_topic, subscriptions).assign()


def cooperative_adjustment(
    answer: Mapping[str, list[Partition]], subscriptions: Mapping[str, Subscription]
) -> dict[str, list[Partition]]:
    """rd_kafka_cooperative_protocol_adjust_assignment: a partition stays with its owner,
    goes to a member if nobody owned it, and is left out if another member owns it; an
    owned partition the answer leaves out stays with whoever owns it."""
    owner: dict[Partition, str] = {}
    for member, subscription in subscriptions.items():
        for tp in subscription.owned_partitions:
            owner[tp] = member  # rd_kafka_collect_partitions: the last claim wins
    result: dict[str, list[Partition]] = {m: [] for m in subscriptions}
    assigned: set[Partition] = set()
    for member, partitions in answer.items():
        for tp in partitions:
            assigned.add(tp)
            if tp not in owner or owner[tp] == member:
                result[member].append(tp)
    for tp, member in owner.items():
        if tp not in assigned:
            result[member].append(tp)
    return result


@dataclass
class _Movements:
    """PartitionMovements_t: where each moved partition came from and went to."""

    by_partition: dict[Partition, tuple[str, str]] = field(default_factory=dict)
    by_topic: dict[str, dict[tuple[str, str], list[Partition]]] = field(default_factory=dict)

    def _remove(self, tp: Partition) -> tuple[str, str]:
        """removeMovementRecordOfPartition; like librdkafka it keeps `by_partition`'s
        entry (Java removes it), which a later move of the partition trips over."""
        pair = self.by_partition[tp]
        pairs = self.by_topic.get(tp.topic)
        moved = pairs.get(pair) if pairs is not None else None
        if pairs is None or moved is None:
            raise LibrdkafkaAbort(f"no movement record of {tp} (rd_assert(plist))")
        if tp in moved:
            moved.remove(tp)
        if not moved:
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp.topic]
        return pair

    def _add(self, tp: Partition, pair: tuple[str, str]) -> None:
        self.by_partition[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, []).append(tp)

    def move(self, tp: Partition, old: str, new: str) -> None:
        if tp in self.by_partition:
            src, dst = self._remove(tp)
            if dst != old:
                raise LibrdkafkaAbort(f"{tp} moved from {old}, recorded at {dst}")
            if src != new:  # not back to where it was
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def to_be_moved(self, tp: Partition, old: str, new: str) -> Partition:
        """getTheActualPartitionToBeMoved: a partition of the topic that moved the other
        way, from `new` to `old`, goes back instead. (Java looks for one that moved from
        `new` to the partition's original owner: librdkafka builds its reverse pair
        before it reads the original owner, and never uses that.)"""
        if tp.topic not in self.by_topic:
            return tp
        pair = self.by_partition.get(tp)
        if pair is not None and pair[1] != old:
            raise LibrdkafkaAbort(f"{tp} is at {old}, recorded at {pair[1]}")
        moved = self.by_topic[tp.topic].get((new, old))
        return moved[0] if moved else tp


class _Sticky:
    """One rd_kafka_sticky_assignor_assign_cb call (without racks)."""

    def __init__(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> None:
        self.members = list(subscriptions)
        self.subscriptions = subscriptions
        self.topics = eligible_topics(partitions_per_topic, subscriptions)
        self.counts = partitions_per_topic
        # rd_map iteration is newest first: the dicts keep insertion order, read reversed.
        self.current: dict[str, list[Partition]] = {}
        self.previous: dict[Partition, str] = {}
        self.owner: dict[Partition, str] = {}
        self.potential_partitions: dict[str, list[Partition]] = {}
        self.potential_consumers: dict[Partition, list[str]] = {}
        self.movements = _Movements()
        self.sorted_consumers: list[str] = []

    def assign(self) -> dict[str, list[Partition]]:
        if not self.members:
            return {}
        self._prepopulate()
        self._potentials()
        sorted_partitions = self._sort_partitions()
        unassigned = list(sorted_partitions)
        revocation_required = False
        for consumer in reversed(list(self.current)):
            topics = set(self.subscriptions[consumer].topics)
            kept = []
            for tp in self.current[consumer]:
                if tp not in self.potential_consumers:
                    self.owner.pop(tp, None)
                elif tp.topic not in topics:
                    revocation_required = True  # its owner stays in `owner`, as in C
                else:
                    kept.append(tp)
                    _delete(unassigned, tp)
            self.current[consumer] = kept
        self._resort()
        self._balance(sorted_partitions, unassigned, revocation_required)
        return {m: list(self.current[m]) for m in self.members}

    # -- 1. prepopulateCurrentAssignments ------------------------------------------------
    def _prepopulate(self) -> None:
        claims: dict[Partition, list[tuple[str, int]]] = {}
        for member in self.members:
            self.current[member] = []
            self.potential_partitions[member] = []
            subscription = self.subscriptions[member]
            for tp in subscription.owned_partitions:
                claims.setdefault(tp, []).append((member, subscription.generation))
                self.owner[tp] = member
        for tp, consumers in reversed(list(claims.items())):
            ordered = glibc_sort(consumers, lambda a, b: a[1] - b[1])
            if any(a[1] == b[1] for a, b in itertools.pairwise(ordered)):
                del self.owner[tp]  # claimed twice in one generation: invalidated
                continue
            self.current[ordered[-1][0]].append(tp)
            if len(ordered) >= 2:
                self.previous[tp] = ordered[-2][0]

    # -- populatePotentialMaps -----------------------------------------------------------
    def _potentials(self) -> None:
        for topic in self.topics:
            partitions = topic_partitions(topic, self.counts[topic])
            for member in self.members:
                if topic not in self.subscriptions[member].topic_set:
                    continue
                self.potential_partitions[member].extend(partitions)
                for tp in partitions:
                    self.potential_consumers.setdefault(tp, []).append(member)

    # -- 2. sortPartitions ---------------------------------------------------------------
    def _identical(self) -> bool:
        """areSubscriptionsIdentical: every partition has the same consumers (in the same
        order), every consumer the same partitions."""
        consumers = {tuple(c) for c in self.potential_consumers.values()}
        partitions = {frozenset(p) for p in self.potential_partitions.values()}
        return len(consumers) <= 1 and len(partitions) <= 1

    def _sort_partitions(self) -> list[Partition]:
        if not self.current or not self._identical():  # isFreshAssignment: no members
            return sorted(
                self.potential_consumers, key=lambda tp: (len(self.potential_consumers[tp]), tp)
            )
        assignments: dict[str, list[Partition]] = {}
        for consumer in reversed(list(self.current)):
            self.current[consumer].sort()
            still = [tp for tp in self.current[consumer] if tp in self.potential_consumers]
            if still:
                assignments[consumer] = still
        order = sorted(assignments, key=lambda c: (len(assignments[c]), c))
        out: list[Partition] = []
        while order:
            consumer = order[-1]
            remaining = assignments[consumer]
            moved_before = [tp for tp in remaining if tp in self.previous]
            if moved_before:
                remaining.remove(moved_before[0])
                out.append(moved_before[0])
            elif remaining:
                out.append(remaining.pop(0))
            else:
                order.pop()
                continue
            order.sort(key=lambda c: (len(assignments[c]), c))
        was_empty = not out
        listed = set(out)
        for tp in reversed(list(self.potential_consumers)):
            if tp not in listed:
                out.append(tp)
        return sorted(out) if was_empty else out

    # -- 3-5. balance --------------------------------------------------------------------
    def _resort(self) -> None:
        self.sorted_consumers.sort(key=lambda c: (len(self.current[c]), c))

    def _balance(
        self, sorted_partitions: list[Partition], unassigned: list[Partition], revocation: bool
    ) -> None:
        self.sorted_consumers = sorted(self.current, key=lambda c: (len(self.current[c]), c))
        initializing = not self.current[self.sorted_consumers[-1]]
        for tp in unassigned:  # maybeAssign, removeAssigned false
            self._maybe_assign(tp)
        for tp in list(self.potential_consumers):
            if len(self.potential_consumers[tp]) < 2:
                _delete(sorted_partitions, tp)
                _delete(unassigned, tp)
        fixed: dict[str, list[Partition]] = {}
        for consumer in list(self.sorted_consumers):
            if not self._can_participate(consumer):
                self.sorted_consumers.remove(consumer)
                fixed[consumer] = self.current.pop(consumer)
        before = {c: list(p) for c, p in self.current.items()}
        before_owner = dict(self.owner)
        if not revocation and unassigned:
            self._perform_reassignments(unassigned)
        performed = self._perform_reassignments(sorted_partitions)
        if not initializing and performed and _score(self.current) >= _score(before):
            for consumer, partitions in before.items():
                self.current[consumer] = partitions
            self.owner = before_owner
        self.current.update(fixed)

    def _maybe_assign(self, tp: Partition) -> None:
        for consumer in self.sorted_consumers:
            if tp in self.potential_partitions[consumer]:
                self.current[consumer].append(tp)
                self.owner[tp] = consumer
                self._resort()
                return

    def _can_participate(self, consumer: str) -> bool:
        partitions = self.current[consumer]
        if len(partitions) < len(self.potential_partitions[consumer]):
            return True
        return any(len(self.potential_consumers.get(tp, ())) >= 2 for tp in partitions)

    def _balanced(self) -> bool:
        low = len(self.current[self.sorted_consumers[0]])
        high = len(self.current[self.sorted_consumers[-1]])
        if low >= high - 1:
            return True
        owner_of = {tp: c for c in reversed(list(self.current)) for tp in self.current[c]}
        for consumer in self.sorted_consumers:
            mine = self.current[consumer]
            potential = self.potential_partitions[consumer]
            if len(mine) == len(potential):
                continue
            for tp in potential:
                if tp in mine:
                    continue
                if len(mine) < self._count(owner_of.get(tp)):
                    return False
        return True

    def _count(self, consumer: str | None) -> int:
        """RD_MAP_GET(currentAssignment, consumer)->cnt, which C dereferences unchecked."""
        if consumer is None or consumer not in self.current:
            raise LibrdkafkaAbort(f"no current assignment for {consumer} (a NULL dereference)")
        return len(self.current[consumer])

    def _perform_reassignments(self, reassignable: Sequence[Partition]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            i = 0
            while i < len(reassignable) and not self._balanced():
                tp = reassignable[i]
                i += 1
                consumer = self.owner.get(tp)
                count = self._count(consumer)
                previous = self.previous.get(tp)
                if previous is not None and count > self._count(previous) + 1:
                    self._reassign_to(tp, previous)
                    performed = modified = True
                    continue
                for other in self.potential_consumers[tp]:
                    if other == consumer or count <= self._count(other) + 1:
                        continue
                    self._reassign(tp)
                    performed = modified = True
                    break
        return performed

    def _reassign(self, tp: Partition) -> None:
        """reassignPartition: to the first member (fewest, then id) that may take it."""
        for consumer in self.sorted_consumers:
            if tp in self.potential_partitions[consumer]:
                self._reassign_to(tp, consumer)
                return
        raise LibrdkafkaAbort(f"reassignPartition(): no new consumer found for {tp}")

    def _reassign_to(self, tp: Partition, new: str) -> None:
        moving = self.movements.to_be_moved(tp, self.owner[tp], new)
        old = self.owner[moving]
        self.movements.move(moving, old, new)
        self.current[new].append(moving)
        _delete(self.current[old], moving)
        self.owner[moving] = new
        self._resort()


def _delete(partitions: list[Partition], tp: Partition) -> None:
    """rd_kafka_topic_partition_list_del: the first occurrence, if any."""
    if tp in partitions:
        partitions.remove(tp)


def _score(assignment: Mapping[str, list[Partition]]) -> int:
    """getBalanceScore: the sum over member pairs of the difference in counts."""
    sizes = [len(p) for p in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])
