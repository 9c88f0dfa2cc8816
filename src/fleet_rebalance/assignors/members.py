"""Kafka's MemberInfo order and the inputs every client assignor derives."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TypeVar

from fleet_rebalance.assignors.java import member_order, string_key
from fleet_rebalance.assignors.types import Subscription

T = TypeVar("T")


def member_info_key(member_id: str, subscription: Subscription) -> tuple:
    """MemberInfo.compareTo: static members first, by group.instance.id, then by member id.
    Two members with the same instance id compare equal (the sort is stable)."""
    if subscription.group_instance_id is not None:
        return (0, string_key(subscription.group_instance_id), b"")
    return (1, b"", string_key(member_id))


def sorted_members(members: list[str], subscriptions: Mapping[str, Subscription]) -> list[str]:
    if any(subscriptions[m].group_instance_id is not None for m in members):
        return sorted(members, key=lambda m: member_info_key(m, subscriptions[m]))
    if "".join(members).isascii():  # str order is String.compareTo's
        return sorted(members)
    return sorted(members, key=string_key)


def member_info_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """All members sorted as MemberInfo. The sort is stable, so the leader's HashMap
    order matters only between members sharing a group.instance.id."""
    ids = [s.group_instance_id for s in subscriptions.values() if s.group_instance_id is not None]
    members = list(subscriptions) if len(ids) == len(set(ids)) else leader_order(subscriptions)
    return sorted_members(members, subscriptions)


def leader_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Member ids as the leader's subscriptions HashMap iterates them."""
    return member_order(subscriptions)


def member_rack(subscription: Subscription) -> str | None:
    """Kafka ignores an empty client.rack."""
    return subscription.rack or None


def subscribers_by_topic(
    members: Sequence[str], subscriptions: Mapping[str, Subscription], items: Sequence[T]
) -> dict[str, list[T]]:
    """Each subscribed topic's members in the order of `members`, each as `items[i]` for
    members[i] (the member id, its index, ...). Members with one topic set (most of a
    group) are grouped first, so the work is per topic set and topic, not per member and
    topic; topics with the same subscribers share one list."""
    sharing: dict[frozenset[str], list[int]] = {}
    for index, member in enumerate(members):
        sharing.setdefault(subscriptions[member].topic_set, []).append(index)
    listed = {topics: [items[i] for i in indexes] for topics, indexes in sharing.items()}
    groups: dict[str, list[frozenset[str]]] = {}
    for topics in sharing:
        for topic in topics:
            groups.setdefault(topic, []).append(topics)
    return {
        t: listed[g[0]]
        if len(g) == 1
        else [items[i] for i in sorted(itertools.chain.from_iterable(map(sharing.__getitem__, g)))]
        for t, g in groups.items()
    }
