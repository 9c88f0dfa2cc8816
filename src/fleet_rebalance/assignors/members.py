"""Kafka's MemberInfo order and the inputs every client assignor derives."""

from __future__ import annotations

from collections.abc import Mapping

from fleet_rebalance.assignors.java import member_order, string_key
from fleet_rebalance.assignors.types import Subscription


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
