"""librdkafka's range assignor (`rd_kafka_range_assignor_assign_cb`, src/rdkafka_range_assignor.c,
librdkafka 2.x), without rack awareness.

Per topic, its subscribers sorted by `rd_kafka_group_member_cmp` (ordering.py: two static
members by instance id, any other pair by member id, no static-first rule) get contiguous
ranges, the first `partitions % subscribers` of them one more. Kafka's RangeAssignor
sorts static members first: the two agree unless a group mixes static and dynamic
members. Example: t0 with 5 partitions, members b (static "z"), a (dynamic) -> a [t0-0,
t0-1, t0-2], b [t0-3, t0-4] (Kafka: b [t0-0, t0-1, t0-2], a [t0-3, t0-4]).
"""

from __future__ import annotations

from collections.abc import Mapping

from fleet_rebalance.assignors.librdkafka.base import LibrdkafkaAssignor
from fleet_rebalance.assignors.librdkafka.ordering import eligible_topics, members_in_order
from fleet_rebalance.assignors.types import Subscription, TopicPartition, topic_partitions
from fleet_rebalance.vocabulary import RebalanceProtocol


class LibrdkafkaRangeAssignor(LibrdkafkaAssignor):
    """librdkafka's `range` (module docstring)."""

    name = "range"
    protocol = RebalanceProtocol.EAGER

    def _deal(
        self, partitions_per_topic: Mapping[str, int], subs: dict[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in subs}
        for topic in eligible_topics(partitions_per_topic, subs):
            members = members_in_order(subs, [m for m in subs if topic in subs[m].topic_set])
            partitions = topic_partitions(topic, partitions_per_topic[topic])
            each, extra = divmod(len(partitions), len(members))
            start = 0
            for i, member in enumerate(members):
                take = each + (1 if i < extra else 0)
                assignment[member].extend(partitions[start : start + take])
                start += take
        return assignment
