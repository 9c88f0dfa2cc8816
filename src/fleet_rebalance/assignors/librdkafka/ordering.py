"""How librdkafka orders members and sorts lists: the tie-breaks its assignors inherit.

- Strings compare as C compares them: `strcmp` / `rd_kafkap_str_cmp` (memcmp, then the
  length), i.e. bytewise over UTF-8, which is Python's code-point order of `str`.
- `rd_kafka_group_member_cmp` (src/rdkafka_assignor.c, librdkafka 2.x): two static
  members by group.instance.id, any other pair by member id. Unlike Kafka's MemberInfo
  order it does not put static members first, and in a group mixing static and dynamic
  members it is no total order: the result is what the sort makes of it.
- `rd_list_sort` and `qsort` are glibc's `qsort`: a top-down merge sort (msort.c, stable,
  in every released glibc, whenever the temporary array fits in memory), reproduced in
  `glibc_sort` call for call, so a comparator that is no total order gives what it gives
  on Linux. (macOS's and musl's qsort are other algorithms: the same answer only for a
  total order.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from fleet_rebalance.assignors.types import Subscription

T = TypeVar("T")


def c_cmp(a: str, b: str) -> int:
    """strcmp: negative, zero or positive (Python's str order is UTF-8's byte order)."""
    return (a > b) - (a < b)


def member_cmp(a: str, b: str, subscriptions: dict[str, Subscription] | None = None) -> int:
    """rd_kafka_group_member_cmp over member ids, their instance ids from `subscriptions`."""
    if subscriptions is not None:
        ia, ib = subscriptions[a].group_instance_id, subscriptions[b].group_instance_id
        if ia is not None and ib is not None:
            return c_cmp(ia, ib)
    return c_cmp(a, b)


def glibc_sort(items: Sequence[T], cmp: Callable[[T, T], int]) -> list[T]:
    """glibc's msort_with_tmp: halves (the first n // 2), each sorted, merged taking the
    left element while cmp(left, right) <= 0."""
    values = list(items)
    if len(values) <= 1:
        return values
    half = len(values) // 2
    left, right = glibc_sort(values[:half], cmp), glibc_sort(values[half:], cmp)
    merged: list[T] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    merged.extend(left[i:])
    merged.extend(right[j:])
    return merged


def members_in_order(subscriptions: dict[str, Subscription], members: Sequence[str]) -> list[str]:
    """`members` sorted as librdkafka's range and roundrobin sort them."""
    return glibc_sort(members, lambda a, b: member_cmp(a, b, subscriptions))


def eligible_topics(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> list[str]:
    """The topics the leader's Metadata request names, in its order: each member's
    subscription (librdkafka sorts its own by name) in JoinGroup order, first appearance
    first; the brokers answer in the request's order (Kafka's Scala Set keeps it up to
    four topics). Topics without partitions are no eligible topics."""
    seen: dict[str, None] = {}
    for subscription in subscriptions.values():
        for topic in sorted(subscription.topics):
            if partitions_per_topic.get(topic, 0) > 0:
                seen.setdefault(topic)
    return list(seen)
