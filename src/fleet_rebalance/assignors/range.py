"""Kafka's RangeAssignor, with KIP-881 rack-aware assignment."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from fleet_rebalance.assignors.members import (
    leader_order,
    member_rack,
    sorted_members,
    subscribers_by_topic,
)
from fleet_rebalance.assignors.types import (
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
    topic_partitions,
)
from fleet_rebalance.vocabulary import RebalanceProtocol


class RangeAssignor(AssignorBase):
    """Per topic, contiguous ranges of partitions to the topic's subscribers in MemberInfo order.

    Rule: with N partitions and M subscribers, the first N % M members (static members
    first by group.instance.id, then by member id) get N // M + 1 partitions, the rest
    N // M. Example: t0 with 4 partitions, C0..C2 -> C0 [t0-0, t0-1], C1 [t0-2], C2 [t0-3].
    Invariants: every partition of a subscribed topic has exactly one owner; per topic,
    counts differ by at most one. Not balanced across topics, not sticky.
    Rack-aware (KIP-881): when members declare racks and partition replicas are known
    and not all on every rack, a first pass hands out only rack-matching partitions
    within each member's quota (co-partitioned topics together), then plain ranges
    fill the rest; per-topic quotas still win over rack locality.
    """

    name = "range"
    protocol = RebalanceProtocol.EAGER

    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> dict[str, list[TopicPartition]]:
        order = leader_order(subscriptions)
        racks = {m: r for m in order if (r := member_rack(subscriptions[m]))}
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in order}
        if not racks or not partition_racks:
            # Rack awareness needs both sides: plain contiguous ranges, computed directly.
            # Filtering one stable sort gives each topic's stable-sorted subscribers.
            in_order = sorted_members(order, subscriptions)
            for topic, subscribers in subscribers_by_topic(
                in_order, subscriptions, in_order
            ).items():
                count = partitions_per_topic.get(topic, 0)
                if count > 0:
                    _contiguous_ranges(topic, count, subscribers, assignment)
            return assignment
        by_topic = subscribers_by_topic(order, subscriptions, order)  # in leader order
        states = []
        # Topics with the same subscribers (most of them) share their sort and racks.
        shared: dict[tuple[str, ...], tuple[list[str], set[str]]] = {}
        for topic, count in partitions_per_topic.items():
            if count <= 0:
                continue
            subscribed = tuple(by_topic.get(topic, ()))
            if subscribed not in shared:
                members = sorted_members(list(subscribed), subscriptions)
                shared[subscribed] = (members, {racks[m] for m in members if m in racks})
            states.append(_TopicState(topic, count, *shared[subscribed], racks, partition_racks))
        if any(s.needs_rack_aware for s in states):
            _assign_with_rack_matching(states, assignment)
        for state in states:
            if state.members and len(state.unassigned) == state.count:  # no rack match
                _contiguous_ranges(state.topic, state.count, state.members, assignment)
            else:
                _assign_ranges(state, None, assignment)
        return assignment


def _contiguous_ranges(
    topic: str,
    count: int,
    members: Sequence[str],
    assignment: dict[str, list[TopicPartition]],
) -> None:
    """The plain range assignment of a whole topic: the first count % len(members)
    members get one partition more."""
    per, extra = divmod(count, len(members))
    partitions = topic_partitions(topic, count)
    if per == 0:  # more members than partitions: one each for the first ones
        for member, tp in zip(members, partitions, strict=False):
            assignment[member].append(tp)
        return
    for i, member in enumerate(members):
        start = per * i + min(i, extra)
        assignment[member].extend(partitions[start : start + per + (i < extra)])


_NO_RACK = frozenset([None])


class _TopicState:
    def __init__(
        self,
        topic: str,
        count: int,
        members: list[str],
        member_racks: set[str],
        racks: dict[str, str],
        partition_racks: PartitionRacks | None,
    ) -> None:
        """`members`: the topic's subscribers in MemberInfo order, `member_racks` their
        racks, `racks` every member's rack (members without one are absent)."""
        self.topic = topic
        self.count = count
        self.members = members
        self.racks = racks
        partitions = topic_partitions(topic, count)
        self.unassigned = dict.fromkeys(partitions)
        self.assigned_count: dict[str, int] = {}
        self.per_member = count // len(members) if members else 0
        self.with_extra = count % len(members) if members else 0
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        all_partition_racks: frozenset[str] = frozenset()
        if member_racks:
            replicas = map((partition_racks or {}).get, partitions, itertools.repeat(()))
            rack_sets = list(map(frozenset, replicas))
            all_partition_racks = all_partition_racks.union(*rack_sets)
            if None in all_partition_racks:  # a replica whose broker has no rack
                rack_sets = [r - _NO_RACK for r in rack_sets]
                all_partition_racks -= _NO_RACK
            self.partition_racks = dict(zip(partitions, rack_sets, strict=True))
        self.needs_rack_aware = use_rack_aware(
            member_racks, all_partition_racks, self.partition_racks
        )

    def racks_match(self, member: str, tp: TopicPartition) -> bool:
        rack = self.racks.get(member)
        return rack is None or rack in self.partition_racks.get(tp, ())

    def max_assignable(self, member: str) -> int:
        quota = self.per_member + (1 if self.with_extra > 0 else 0)
        return max(0, quota - self.assigned_count.get(member, 0))

    def on_assigned(self, member: str, partitions: list[TopicPartition]) -> None:
        self.assigned_count[member] = self.assigned_count.get(member, 0) + len(partitions)
        if self.assigned_count[member] > self.per_member:
            self.with_extra -= 1
        for tp in partitions:
            self.unassigned.pop(tp, None)


def use_rack_aware(
    member_racks: AbstractSet[str],
    partition_racks: AbstractSet[str],
    racks_per_partition: Mapping[TopicPartition, AbstractSet[str]],
) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment: only when racks overlap and some
    partition is not replicated on every rack."""
    if not member_racks or member_racks.isdisjoint(partition_racks):
        return False
    racks = list(racks_per_partition.values())
    return racks.count(partition_racks) != len(racks)  # a set equals its frozenset


def _assign(
    member: str,
    partitions: list[TopicPartition],
    state: _TopicState,
    assignment: dict[str, list[TopicPartition]],
) -> None:
    assignment[member].extend(partitions)
    state.on_assigned(member, partitions)


def _assign_ranges(
    state: _TopicState, rack_match: bool | None, assignment: dict[str, list[TopicPartition]]
) -> None:
    for member in state.members:
        if not state.unassigned:
            break
        limit = state.max_assignable(member)
        if limit <= 0:
            continue
        candidates: Iterable[TopicPartition] = state.unassigned
        if rack_match is not None:
            candidates = (tp for tp in state.unassigned if state.racks_match(member, tp))
        picked = list(itertools.islice(candidates, limit))
        if picked:
            _assign(member, picked, state, assignment)


def _assign_with_rack_matching(
    states: list[_TopicState], assignment: dict[str, list[TopicPartition]]
) -> None:
    by_members: dict[tuple, list[_TopicState]] = {}
    for state in states:
        key = tuple(state.members)  # a member's rack is the same in every state
        by_members.setdefault(key, []).append(state)
    for group in by_members.values():
        by_count: dict[int, list[_TopicState]] = {}
        for state in group:
            by_count.setdefault(len(state.partition_racks), []).append(state)
        for count, co_partitioned in by_count.items():
            if len(co_partitioned) > 1:
                _assign_co_partitioned(co_partitioned[0].members, count, co_partitioned, assignment)
            elif co_partitioned[0].needs_rack_aware:
                _assign_ranges(co_partitioned[0], True, assignment)


def _assign_co_partitioned(
    members: list[str],
    count: int,
    states: list[_TopicState],
    assignment: dict[str, list[TopicPartition]],
) -> None:
    remaining = list(members)
    for p in range(count):
        match = next(
            (
                m
                for m in remaining
                if all(
                    s.racks_match(m, TopicPartition(s.topic, p)) and s.max_assignable(m) > 0
                    for s in states
                )
            ),
            None,
        )
        if match is None:
            continue
        for s in states:
            _assign(match, [TopicPartition(s.topic, p)], s, assignment)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break
