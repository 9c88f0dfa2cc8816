"""Kafka's StickyAssignor and CooperativeStickyAssignor (AbstractStickyAssignor)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sized
from operator import itemgetter
from typing import Any

from fleet_rebalance.assignors.java import string_key
from fleet_rebalance.assignors.members import leader_order
from fleet_rebalance.assignors.sticky_support import (
    BalanceIndex,
    PartitionMovements,
    PreviousOwnership,
    RackInfo,
    SortedConsumers,
    log,
    previous_ownership,
    valid_owned,
)
from fleet_rebalance.assignors.types import (
    DEFAULT_GENERATION,
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
    topic_partitions,
)
from fleet_rebalance.vocabulary import RebalanceProtocol


class KafkaAssignorError(RuntimeError):
    """Kafka's own assignor would throw here (IllegalStateException, NullPointerException)."""


class StickyAssignor(AssignorBase):
    """Balance first, then keep as many previous owners as possible (Kafka's StickyAssignor).

    Rule: every member gets floor(P/M) or ceil(P/M) partitions when all members subscribe
    to the same topics (the constrained path), otherwise the most balanced assignment the
    subscriptions allow (the general path); within that, each partition stays with its
    previous owner (owned_partitions, highest generation wins a contested partition; one
    claimed twice in the same generation is revoked from both, with an error log line).
    Example: C0 [t0-0, t1-1, t3-0], C1 [t0-1, t2-0, t3-1], C2 [t1-0, t2-1]; C1 leaves ->
    C0 [t0-0, t0-1, t1-1, t3-0], C2 [t1-0, t2-0, t2-1, t3-1]: 5 of 8 partitions stay put
    (roundrobin keeps 3). Invariants: validity (each partition of a subscribed topic owned
    by exactly one subscriber), balance, stickiness; balance wins over stickiness, and
    rack locality (KIP-881) over stickiness but not over balance.
    """

    name = "sticky"
    protocol = RebalanceProtocol.EAGER

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        assignment, _ = self._target(partitions_per_topic, subscriptions, partition_racks)
        return assignment

    def _target(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str] | None]:
        """The assignment and, on the constrained path, the partitions changing owner."""
        if not subscriptions:
            return {}, {}
        order = leader_order(subscriptions)
        subscribed = {t for s in subscriptions.values() for t in s.topics}
        topics = {t: n for t, n in partitions_per_topic.items() if t in subscribed and n > 0}
        rack_info = RackInfo(order, subscriptions, topics, partition_racks)
        previous = previous_ownership(order, subscriptions, topics)
        if previous.all_equal:
            builder = _ConstrainedBuilder(topics, rack_info, previous)
            return builder.build(), builder.transferring
        general = _GeneralBuilder(topics, rack_info, previous, subscriptions, order)
        return general.build(), None


class CooperativeStickyAssignor(StickyAssignor):
    """The sticky target minus every partition that changes owner this round.

    Under the cooperative protocol an owner first revokes what it loses; the partition
    is handed out in the follow-up rebalance (call assign again with the new owned
    partitions). Same invariants as sticky, except that after the first round a moving
    partition is owned by nobody.
    """

    name = "cooperative-sticky"
    protocol = RebalanceProtocol.COOPERATIVE

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        assignment, transferring = self._target(
            partitions_per_topic, subscriptions, partition_racks
        )
        if transferring is None:
            transferring = _transferring(subscriptions, assignment)
        for tp, consumer in transferring.items():
            if tp in assignment[consumer]:
                assignment[consumer].remove(tp)
        return assignment


def _transferring(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, list[TopicPartition]]
) -> dict[TopicPartition, str]:
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for consumer, assigned in assignment.items():
        owned = subscriptions[consumer].owned_partitions
        owned_set, assigned_set = set(owned), set(assigned)
        for tp in assigned:
            if tp not in owned_set:
                added[tp] = consumer
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: c for tp, c in added.items() if tp in revoked}


class _ConstrainedBuilder:
    """Every member subscribes to the same topics: quotas are known up front."""

    def __init__(
        self, topics: Mapping[str, int], rack_info: RackInfo, previous: PreviousOwnership
    ) -> None:
        self.topics = topics
        self.rack_info = rack_info
        self.current = previous.owned
        self.multiple_owners = previous.multiple_owners
        total = sum(topics.values())
        members = len(self.current)
        self.min_quota = total // members
        self.max_quota = -(-total // members)
        self.expected_over_min = total % members
        self.current_over_min = 0
        self.assignment: dict[str, list[TopicPartition]] = {c: [] for c in self.current}
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []

    def build(self) -> dict[str, list[TopicPartition]]:
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        self.under_min.sort(key=string_key)
        self.exactly_min.sort(key=string_key)
        unassigned = self.rack_info.sort_by_rack_consumers(unassigned)
        unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        self._verify_unfilled()
        return self.assignment

    def _assign_owned(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        # Kafka topic names are ASCII, where str order is Java's; anything else gets
        # the UTF-16 key.
        by_partition: Callable[[TopicPartition], tuple[Any, ...]]
        if all(t.isascii() for t in self.topics):
            by_partition = itemgetter(1, 0)
        else:
            by_partition = lambda tp: (tp.partition, string_key(tp.topic))  # noqa: E731
        racks = self.rack_info if self.rack_info.consumer_racks else None
        for consumer, claimed in self.current.items():
            owned = list(claimed)
            if racks is not None:
                owned = []
                for tp in claimed:
                    if racks.racks_mismatch(consumer, tp):
                        self.maybe_revoked[tp] = consumer
                    else:
                        owned.append(tp)
            owned.sort(key=by_partition)
            for tp in self.multiple_owners:
                if tp in owned:
                    log.error(
                        "Found partition %s still claimed as owned by consumer %s, despite "
                        "being claimed by multiple consumers already in the same generation. "
                        "Removing it from the ownedPartitions",
                        tp,
                        consumer,
                    )
                    owned.remove(tp)
            mine = self.assignment[consumer]
            if len(owned) < self.min_quota:
                mine.extend(owned)
                assigned.extend(owned)
                self.under_min.append(consumer)
            elif len(owned) >= self.max_quota and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                keep = self.max_quota
                mine.extend(owned[:keep])
                assigned.extend(owned[:keep])
                for tp in owned[keep:]:
                    self.maybe_revoked[tp] = consumer
            else:
                keep = self.min_quota
                mine.extend(owned[:keep])
                assigned.extend(owned[:keep])
                for tp in owned[keep:]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(consumer)
        return assigned

    def _unassigned(self, assigned: list[TopicPartition]) -> list[TopicPartition]:
        """Partitions nobody kept, by topic then partition. `assigned` holds distinct
        partitions (previous_ownership leaves each one owner), so a topic with as many
        kept partitions as it has is skipped without looking at its partitions."""
        kept = Counter(map(itemgetter(0), assigned))
        taken: set[TopicPartition] | None = None
        unassigned: list[TopicPartition] = []
        for topic in sorted(self.topics, key=string_key):
            count = self.topics[topic]
            if kept[topic] >= count:
                continue
            partitions = topic_partitions(topic, count)
            if not kept[topic]:
                unassigned.extend(partitions)
                continue
            if taken is None:
                taken = set(assigned)
            unassigned.extend(tp for tp in partitions if tp not in taken)
        return unassigned

    def _assign_rack_aware_round_robin(
        self, unassigned: list[TopicPartition]
    ) -> list[TopicPartition]:
        if not self.rack_info.consumer_racks:
            return unassigned
        remaining = []
        next_index = 0
        for tp in unassigned:
            consumer = None
            index = self.rack_info.next_rack_consumer(tp, self.under_min, next_index)
            if index >= 0:
                consumer = self.under_min[index]
                count = len(self.assignment[consumer]) + 1
                if count >= self.min_quota:
                    self.under_min.remove(consumer)
                    if count < self.max_quota and self.current_over_min < self.expected_over_min:
                        self.exactly_min.append(consumer)
                else:
                    index += 1
                next_index = index % len(self.under_min) if self.under_min else 0
            elif self.exactly_min:
                first = self.rack_info.next_rack_consumer(tp, self.exactly_min, 0)
                if first >= 0:
                    consumer = self.exactly_min[first]
                    if len(self.assignment[consumer]) + 1 == self.max_quota:
                        del self.exactly_min[first]
                        self.current_over_min += 1
                        if self.current_over_min == self.expected_over_min:
                            self.exactly_min.clear()
            if consumer is None:
                remaining.append(tp)
            else:
                self._assign_new(tp, consumer)
        return remaining

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        """Kafka's iterator loop, dealt in bulk. Round r gives one partition to every
        member still under minQuota (sorted order), so while the set of such members is
        fixed, member k of them takes block[k::len(members)]; members reaching minQuota
        join exactly_min in order. What is left goes one each to exactly_min, FIFO."""
        special = set(self.maybe_revoked) | self.multiple_owners
        position, total = 0, len(unassigned)
        active = list(self.under_min)
        while active and position < total:
            rounds = min(self.min_quota - len(self.assignment[c]) for c in active)
            block_size = rounds * len(active)
            if position + block_size > total:
                self._deal_one_by_one(unassigned, position, active, special)
                return
            block = unassigned[position : position + block_size]
            for k, consumer in enumerate(active):
                self._take(consumer, block[k :: len(active)], special)
            position += block_size
            reached = [c for c in active if len(self.assignment[c]) == self.min_quota]
            self.exactly_min.extend(reached)
            active = [c for c in active if len(self.assignment[c]) < self.min_quota]
        self.under_min[:] = active
        remaining = unassigned[position:]
        if len(remaining) > len(self.exactly_min):
            log.error(
                "No more unfilled consumers to be assigned. The remaining unassigned "
                "partitions are: %s",
                remaining[len(self.exactly_min) :],
            )
            raise KafkaAssignorError("No more unfilled consumers to be assigned.")
        before = self.current_over_min
        for tp, consumer in zip(remaining, self.exactly_min[: len(remaining)], strict=True):
            self._take(consumer, [tp], special)
        del self.exactly_min[: len(remaining)]
        self.current_over_min += len(remaining)
        if 1 <= self.expected_over_min - before < len(remaining):
            log.error(
                "Filled the last member up to maxQuota but still had partitions "
                "remaining to assign, will continue but this indicates a bug in "
                "the assignment."
            )

    def _deal_one_by_one(
        self,
        unassigned: list[TopicPartition],
        position: int,
        active: list[str],
        special: set[TopicPartition],
    ) -> None:
        """Partitions run out mid-round (only when quotas cannot be met): Kafka's loop."""
        while active and position < len(unassigned):
            still_under = []
            for consumer in active:
                if position == len(unassigned):
                    still_under.append(consumer)
                    continue
                self._take(consumer, [unassigned[position]], special)
                position += 1
                if len(self.assignment[consumer]) == self.min_quota:
                    self.exactly_min.append(consumer)
                else:
                    still_under.append(consumer)
            active = still_under
        self.under_min[:] = active

    def _take(
        self, consumer: str, partitions: list[TopicPartition], special: set[TopicPartition]
    ) -> None:
        self.assignment[consumer].extend(partitions)
        if special and not special.isdisjoint(partitions):
            for tp in partitions:
                if tp in special:
                    self._note_transfer(tp, consumer)

    def _note_transfer(self, tp: TopicPartition, consumer: str) -> None:
        previous_owner = self.maybe_revoked.get(tp)
        if (previous_owner is not None and previous_owner != consumer) or (
            tp in self.multiple_owners
        ):
            self.transferring[tp] = consumer

    def _assign_new(self, tp: TopicPartition, consumer: str) -> int:
        mine = self.assignment[consumer]
        mine.append(tp)
        if tp in self.maybe_revoked or tp in self.multiple_owners:
            self._note_transfer(tp, consumer)
        return len(mine)

    def _verify_unfilled(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise KafkaAssignorError(
                "We haven't reached the expected number of members with more than the minQuota "
                "partitions, but no more partitions to be assigned"
            )
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise KafkaAssignorError(
                    f"Consumer: [{member}] doesn't reach minQuota partitions, and no more "
                    "partitions to be assigned"
                )


class _GeneralBuilder:
    """Members subscribe to different topics: greedy fill, then moves that improve balance."""

    def __init__(
        self,
        topics: Mapping[str, int],
        rack_info: RackInfo,
        previous: PreviousOwnership,
        subscriptions: Mapping[str, Subscription],
        order: list[str],
    ) -> None:
        self.topics = topics
        self.rack_info = rack_info
        self.subscriptions = subscriptions
        self.order = order
        self.max_generation = previous.max_generation
        self.total = sum(topics.values())
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in topics}
        self.consumer_topics: dict[str, list[str]] = {}
        for consumer in order:
            mine = [t for t in dict.fromkeys(subscriptions[consumer].topics) if t in topics]
            self.consumer_topics[consumer] = mine
            for topic in mine:
                self.topic_consumers[topic].append(consumer)
        # Ordered sets: O(1) membership, Kafka's list order kept for iteration.
        self.current: dict[str, dict[TopicPartition, None]] = {
            c: dict.fromkeys(previous.owned[c]) for c in order
        }
        self.partition_consumer = {tp: c for c, tps in self.current.items() for tp in tps}
        sorted_topics = sorted(
            self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), string_key(t))
        )
        self.sorted_partitions = [
            tp for t in sorted_topics for tp in topic_partitions(t, topics[t])
        ]
        self.sorted_consumers = SortedConsumers(
            lambda c: len(self.current[c]), self.consumer_topics
        )
        self.revocation_required = False
        self.movements = PartitionMovements()
        self.index: BalanceIndex | None = None

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._previous_assignment()
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        for consumer in self.current:
            self.sorted_consumers.add(consumer)
        self._balance(previous, unassigned)
        return {c: list(tps) for c, tps in self.current.items()}

    def _previous_assignment(self) -> dict[TopicPartition, tuple[str, int]]:
        """Older generations' claims, to move partitions back to a previous owner."""
        previous: dict[TopicPartition, tuple[str, int]] = {}
        for consumer in self.order:
            subscription = self.subscriptions[consumer]
            generation = subscription.generation
            if DEFAULT_GENERATION < generation < self.max_generation or (
                generation <= DEFAULT_GENERATION < self.max_generation
            ):
                generation = max(generation, DEFAULT_GENERATION)
                for tp in valid_owned(subscription, self.topics):
                    held = previous.get(tp)
                    if held is None or generation > held[1]:
                        previous[tp] = (consumer, generation)
        return previous

    def _assign_owned(self) -> list[TopicPartition]:
        assigned = []
        for consumer, partitions in self.current.items():
            subscription = self.subscriptions[consumer]
            for tp in list(partitions):
                if tp.topic not in self.topic_consumers:
                    del partitions[tp]
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in subscription.topic_set or self.rack_info.racks_mismatch(
                    consumer, tp
                ):
                    del partitions[tp]
                    self.revocation_required = True
                else:
                    assigned.append(tp)
        return assigned

    def _unassigned(self, assigned: list[TopicPartition]) -> list[TopicPartition]:
        if not assigned:
            return self.sorted_partitions  # the same list, as in Kafka
        taken = set(assigned)
        return [tp for tp in self.sorted_partitions if tp not in taken]

    def _max_size(self, consumer: str) -> int:
        mine = self.consumer_topics[consumer]
        if len(mine) == len(self.topics):
            return self.total
        return sum(self.topics[t] for t in mine)

    def _is_balanced(self) -> bool:
        low = len(self.current[self.sorted_consumers.first()])
        high = len(self.current[self.sorted_consumers.last()])
        if low >= high - 1:
            return True
        assert self.index is not None
        return self.index.balanced()

    def _maybe_assign(
        self, partitions: list[TopicPartition], racks: RackInfo | None, remove_assigned: bool
    ) -> list[TopicPartition]:
        left = []
        for tp in partitions:
            if not self.topic_consumers[tp.topic]:
                left.append(tp)
                continue
            done = self._maybe_assign_partition(tp, racks)
            if not (done and remove_assigned):
                left.append(tp)
        return left

    def _maybe_assign_partition(self, tp: TopicPartition, racks: RackInfo | None) -> bool:
        for consumer in self.sorted_consumers.subscribed_to(tp.topic):
            if racks is None or not racks.racks_mismatch(consumer, tp):
                self.sorted_consumers.remove(consumer)
                self.current[consumer][tp] = None
                self.partition_consumer[tp] = consumer
                self.sorted_consumers.add(consumer)
                return True
        return False

    def _can_reassign_topic(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _can_reassign_consumer(self, consumer: str) -> bool:
        partitions = self.current[consumer]
        max_size = self._max_size(consumer)
        if len(partitions) > max_size:
            log.error(
                "The consumer %s is assigned more partitions than the maximum possible.", consumer
            )
        if len(partitions) < max_size:
            return True
        return any(self._can_reassign_topic(tp.topic) for tp in partitions)

    def _balance(
        self, previous: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]
    ) -> None:
        initializing = not self.current[self.sorted_consumers.last()]
        to_assign = unassigned
        if self.rack_info.consumer_racks:
            to_assign = self._maybe_assign(list(unassigned), self.rack_info, True)
        self._maybe_assign(to_assign, None, False)

        fixed = {
            TopicPartition(t, p)
            for t in self.topic_consumers
            if not self._can_reassign_topic(t)
            for p in range(self.topics[t])
        }
        same_list = unassigned is self.sorted_partitions
        self.sorted_partitions[:] = [tp for tp in self.sorted_partitions if tp not in fixed]
        if not same_list:
            unassigned[:] = [tp for tp in unassigned if tp not in fixed]
        fixed_assignments: dict[str, dict[TopicPartition, None]] = {}
        for consumer in self.consumer_topics:
            if not self._can_reassign_consumer(consumer):
                self.sorted_consumers.remove(consumer)
                fixed_assignments[consumer] = self.current.pop(consumer)
        before = {c: dict(tps) for c, tps in self.current.items()}
        before_owners = dict(self.partition_consumer)
        self.index = BalanceIndex(self.current, self.consumer_topics, self._max_size)
        if not self.revocation_required:
            self._perform_reassignments(unassigned, previous)
        performed = self._perform_reassignments(self.sorted_partitions, previous)
        self.index = None
        if (
            not initializing
            and performed
            and _balance_score(self.current) >= _balance_score(before)
        ):
            self.current.clear()
            self.current.update(before)
            self.partition_consumer = before_owners
        for consumer, partitions in fixed_assignments.items():
            self.current[consumer] = partitions
            self.sorted_consumers.add(consumer)

    def _perform_reassignments(
        self, partitions: list[TopicPartition], previous: dict[TopicPartition, tuple[str, int]]
    ) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                if len(self.topic_consumers[tp.topic]) <= 1:
                    log.error("Expected more than one potential consumer for partition '%s'", tp)
                consumer = self.partition_consumer.get(tp)
                if consumer is None:
                    log.error("Expected partition '%s' to be assigned to a consumer", tp)
                    raise KafkaAssignorError(f"partition {tp} has no current consumer")
                size = len(self.current[consumer])
                held = previous.get(tp)
                if held is not None:
                    if held[0] not in self.current:
                        raise KafkaAssignorError(
                            f"previous owner {held[0]} of {tp} is not reassignable "
                            "(Kafka's StickyAssignor fails here with a NullPointerException)"
                        )
                    if size > len(self.current[held[0]]) + 1:
                        self._reassign(tp, held[0])
                        performed = modified = True
                        continue
                if self._reassign_if_better(tp, consumer, size):
                    performed = modified = True
        return performed

    def _reassign_if_better(self, tp: TopicPartition, consumer: str, size: int) -> bool:
        candidates = self.topic_consumers[tp.topic]
        rack = self.rack_info.consumer_racks.get(consumer)
        replica_racks = self.rack_info.partition_racks.get(tp)
        if rack is not None and replica_racks and rack in replica_racks:
            for other in candidates:
                other_rack = self.rack_info.consumer_racks.get(other)
                if other_rack is None or other_rack not in replica_racks:
                    continue
                if size > len(self.current[other]) + 1:
                    self._reassign(tp, None)
                    return True
        assert self.index is not None
        if self.index.smallest_subscriber(tp.topic) < size - 1:
            self._reassign(tp, None)
            return True
        return False

    def _reassign(self, tp: TopicPartition, new_consumer: str | None) -> None:
        if new_consumer is None:
            new_consumer = next(self.sorted_consumers.subscribed_to(tp.topic))
        old = self.partition_consumer[tp]
        moving = self.movements.partition_to_move(tp, old, new_consumer)
        self._process_movement(moving, new_consumer)

    def _process_movement(self, tp: TopicPartition, new_consumer: str) -> None:
        old = self.partition_consumer[tp]
        self.sorted_consumers.remove(old)
        self.sorted_consumers.remove(new_consumer)
        if self.index is not None:
            self.index.detach(*dict.fromkeys((old, new_consumer)))
        self.movements.move(tp, old, new_consumer)
        del self.current[old][tp]
        self.current[new_consumer][tp] = None
        self.partition_consumer[tp] = new_consumer
        if self.index is not None:
            self.index.attach(tp, old, new_consumer)
        self.sorted_consumers.add(new_consumer)
        self.sorted_consumers.add(old)


def _balance_score(assignment: Mapping[str, Sized]) -> int:
    """Sum of |size difference| over all member pairs, from sorted sizes in O(n log n)."""
    sizes = sorted(len(v) for v in assignment.values())
    score = 0
    prefix = 0
    for i, size in enumerate(sizes):
        score += size * i - prefix
        prefix += size
    return score
