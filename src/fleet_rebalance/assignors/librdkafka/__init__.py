"""librdkafka's own assignors: what a group whose leader is a librdkafka client (Python's
confluent-kafka, Go's confluent-kafka-go, .NET, Node, C/C++) runs.

librdkafka implements range, roundrobin and cooperative-sticky itself, in C, with its own
tie-breaks: its cooperative-sticky is a port of Kafka's sticky assignor from before
KIP-341's constrained path, and sorts and iterates its own way (sticky.py). A librdkafka
group's assignment is judged against these, never against Kafka's Java classes. They
are not replayed as alternatives (a group chooses an assignor, not its client's C
library), so they are no entries of `available_assignors()`.
"""

from __future__ import annotations

from fleet_rebalance.assignors.librdkafka.base import RackAwareNotPorted
from fleet_rebalance.assignors.librdkafka.range import LibrdkafkaRangeAssignor
from fleet_rebalance.assignors.librdkafka.roundrobin import LibrdkafkaRoundRobinAssignor
from fleet_rebalance.assignors.librdkafka.sticky import (
    LibrdkafkaAbort,
    LibrdkafkaCooperativeStickyAssignor,
)
from fleet_rebalance.assignors.types import Assignor

# partition.assignment.strategy names librdkafka knows (CONFIGURATION.md): it has no
# eager `sticky`.
ASSIGNORS: dict[str, type] = {
    cls.name: cls
    for cls in (
        LibrdkafkaRangeAssignor,
        LibrdkafkaRoundRobinAssignor,
        LibrdkafkaCooperativeStickyAssignor,
    )
}


def librdkafka_assignor(strategy: str) -> Assignor | None:
    """librdkafka's assignor of that strategy name; None for one it does not have."""
    cls = ASSIGNORS.get(strategy)
    return cls() if cls is not None else None


__all__ = [
    "ASSIGNORS",
    "LibrdkafkaAbort",
    "LibrdkafkaCooperativeStickyAssignor",
    "LibrdkafkaRangeAssignor",
    "LibrdkafkaRoundRobinAssignor",
    "RackAwareNotPorted",
    "librdkafka_assignor",
]
