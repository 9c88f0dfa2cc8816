"""librdkafka's roundrobin assignor (`rd_kafka_roundrobin_assignor_assign_cb`,
src/rdkafka_roundrobin_assignor.c, librdkafka 2.x).

The eligible topics sorted by name (strcmp), the members sorted by
`rd_kafka_group_member_cmp` (ordering.py); each partition in turn goes to the next
member in that circle subscribed to its topic. Kafka's RoundRobinAssignor deals the same
way over its MemberInfo order (static members first): the two agree unless a group
mixes static and dynamic members.
"""

from __future__ import annotations

from collections.abc import Mapping

from fleet_rebalance.assignors.librdkafka.base import LibrdkafkaAssignor
from fleet_rebalance.assignors.librdkafka.ordering import eligible_topics, members_in_order
from fleet_rebalance.assignors.types import Subscription, TopicPartition, topic_partitions
from fleet_rebalance.vocabulary import RebalanceProtocol


class LibrdkafkaRoundRobinAssignor(LibrdkafkaAssignor):
    """librdkafka's `roundrobin` (module docstring)."""

    name = "roundrobin"
    protocol = RebalanceProtocol.EAGER

    def _deal(
        self, partitions_per_topic: Mapping[str, int], subs: dict[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        members = members_in_order(subs, list(subs))
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in subs}
        position = -1
        for topic in sorted(eligible_topics(partitions_per_topic, subs)):
            for tp in topic_partitions(topic, partitions_per_topic[topic]):
                position = (position + 1) % len(members)
                while topic not in subs[members[position]].topic_set:
                    position = (position + 1) % len(members)
                assignment[members[position]].append(tp)
        return assignment
