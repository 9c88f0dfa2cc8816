"""Kafka's partition assignors in pure Python (no Spark): the API of shared/CONTRACT.md.

    from fleet_rebalance.assignors import Subscription, get_assignor
    get_assignor("sticky").assign({"orders": 6}, {"c1": Subscription(["orders"])})

Plug-ins: any class with `name`, `protocol` ("eager" or "cooperative") and
`assign(partitions_per_topic, subscriptions, partition_racks=None)` returning
{member: sorted [TopicPartition]} for every member, loaded with
get_assignor("package.module:ClassName"). See fleet_rebalance.assignors.examples.
"""

from fleet_rebalance.assignors.registry import PluginError, available_assignors, get_assignor
from fleet_rebalance.assignors.types import (
    Assignor,
    AssignorInputError,
    Subscription,
    TopicPartition,
)

__all__ = [
    "Assignor",
    "AssignorInputError",
    "PluginError",
    "Subscription",
    "TopicPartition",
    "available_assignors",
    "get_assignor",
]
