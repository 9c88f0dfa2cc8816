"""Kafka's RangeAssignor, with KIP-881 rack-aware assignment."""

from __future__ import annotations

from collections.abc import Mapping

from fleet_rebalance.assignors.members import leader_order, member_rack, sorted_members
from fleet_rebalance.assignors.types import (
    AssignorBase,
    PartitionRacks,
    Subscription,
    TopicPartition,
    topic_partitions,
)


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
    protocol = "eager"

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
            by_topic: dict[str, list[str]] = {}
            for member in sorted_members(order, subscriptions):
                for topic in subscriptions[member].topic_set:
                    by_topic.setdefault(topic, []).append(member)
            for topic, count in partitions_per_topic.items():
                subscribers = by_topic.get(topic)
                if count <= 0 or not subscribers:
                    continue
                per, extra = divmod(count, len(subscribers))
                partitions = topic_partitions(topic, count)
                for i, member in enumerate(subscribers):
                    start = per * i + min(i, extra)
                    assignment[member].extend(partitions[start : start + per + (i < extra)])
            return assignment
        states = []
        subscribed: dict[str, list[str]] = {}  # each topic's members, in leader order
        for member in order:
            for topic in subscriptions[member].topic_set:
                subscribed.setdefault(topic, []).append(member)
        for topic, count in partitions_per_topic.items():
            if count <= 0:
                continue
            subscribers = subscribed.get(topic, [])
            states.append(
                _TopicState(
                    topic, count, sorted_members(subscribers, subscriptions), racks, partition_racks
                )
            )
        if any(s.needs_rack_aware for s in states):
            _assign_with_rack_matching(states, assignment)
        for state in states:
            _assign_ranges(state, None, assignment)
        return assignment


class _TopicState:
    def __init__(
        self,
        topic: str,
        count: int,
        members: list[str],
        racks: dict[str, str],
        partition_racks: PartitionRacks | None,
    ) -> None:
        self.topic = topic
        self.members = members
        self.member_racks = {m: racks.get(m) for m in members}
        self.unassigned = dict.fromkeys(TopicPartition(topic, p) for p in range(count))
        self.assigned_count = dict.fromkeys(members, 0)
        self.per_member = count // len(members) if members else 0
        self.with_extra = count % len(members) if members else 0
        member_racks = {r for r in self.member_racks.values() if r}
        self.partition_racks: dict[TopicPartition, set[str]] = {}
        all_partition_racks: set[str] = set()
        if member_racks:
            for tp in self.unassigned:
                replica_racks = {r for r in (partition_racks or {}).get(tp, ()) if r is not None}
                self.partition_racks[tp] = replica_racks
                all_partition_racks |= replica_racks
        self.needs_rack_aware = use_rack_aware(
            member_racks, all_partition_racks, self.partition_racks
        )

    def racks_match(self, member: str, tp: TopicPartition) -> bool:
        rack = self.member_racks.get(member)
        return rack is None or rack in self.partition_racks.get(tp, ())

    def max_assignable(self, member: str) -> int:
        quota = self.per_member + (1 if self.with_extra > 0 else 0)
        return max(0, quota - self.assigned_count[member])

    def on_assigned(self, member: str, partitions: list[TopicPartition]) -> None:
        self.assigned_count[member] += len(partitions)
        if self.assigned_count[member] > self.per_member:
            self.with_extra -= 1
        for tp in partitions:
            self.unassigned.pop(tp, None)


def use_rack_aware(
    member_racks: set[str],
    partition_racks: set[str],
    racks_per_partition: Mapping[TopicPartition, set[str]],
) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment: only when racks overlap and some
    partition is not replicated on every rack."""
    if not member_racks or member_racks.isdisjoint(partition_racks):
        return False
    return not all(r == partition_racks for r in racks_per_partition.values())


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
        picked: list[TopicPartition] = []
        for tp in state.unassigned:
            if len(picked) >= limit:
                break
            if rack_match is None or state.racks_match(member, tp):
                picked.append(tp)
        if picked:
            _assign(member, picked, state, assignment)


def _assign_with_rack_matching(
    states: list[_TopicState], assignment: dict[str, list[TopicPartition]]
) -> None:
    by_members: dict[tuple, list[_TopicState]] = {}
    for state in states:
        key = tuple((m, state.member_racks[m]) for m in state.members)
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
