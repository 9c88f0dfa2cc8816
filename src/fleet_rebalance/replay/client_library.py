"""Which client library assigned a classic group's partitions, and so what its observed
assignment is judged against (the replay's `conformance_basis`).

A classic group's assignment is computed by its leader, a client: Kafka's Java consumer
runs Kafka's assignors, librdkafka (and the clients built on it: confluent-kafka for
Python, Go, .NET, Node) runs its own C ports with their own tie-breaks
(assignors/librdkafka). A member is a librdkafka client when its client.id matches a
pattern the conf maps to `librdkafka` (`metrics.client_libraries`, fnmatch globs, the
first that matches wins), else when it is librdkafka's default client.id `rdkafka`;
any other is Kafka's Java client. The client.id is the one captured, else the one its
classic member id starts with (`<client.id>-<UUID>`).

The leader is the member the coordinator names in `Assignment received from leader $m
... for generation $g` (3.0+): its library decides. Where no log names it, a group whose
members all run one library is that library's; a mixed group is undecided. A KIP-848
epoch, or a strategy librdkafka does not implement (uniform, sticky, plug-ins), was
assigned by Kafka's own code (the coordinator, or a Java leader). librdkafka's
cooperative-sticky takes the topics in the order the brokers answer its leader's
Metadata request: the request's order up to four topics (KafkaApis turns them into a
Scala Set, whose Set1..Set4 keep it), a hash order beyond: a librdkafka group on more
topics is undecided.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fleet_rebalance.assignors.librdkafka import ASSIGNORS as LIBRDKAFKA_STRATEGIES
from fleet_rebalance.config import CLIENT_LIBRARIES
from fleet_rebalance.replay.identities import derived_client_id

KAFKA, LIBRDKAFKA = CLIENT_LIBRARIES
# librdkafka's default client.id (CONFIGURATION.md).
LIBRDKAFKA_DEFAULT_CLIENT_ID = "rdkafka"
UNDECIDED = "undecided: "
MIXED = (
    "undecided: the group's members run both librdkafka and Kafka's Java client and no "
    "coordinator log names the leader that assigned this generation"
)
ORDERED_TOPICS = 4
TOPIC_ORDER = (
    "undecided: librdkafka's cooperative-sticky takes the topics in the brokers' Metadata "
    f"order, a hash order beyond {ORDERED_TOPICS} topics"
)


@dataclass(frozen=True)
class ClientLibraries:
    """client.id glob -> library (`kafka` or `librdkafka`), as `metrics.client_libraries`."""

    patterns: Mapping[str, str] = field(default_factory=dict)

    def of(self, client_id: str | None) -> str:
        """The library of a member with that client.id (None: not known, Kafka's)."""
        if client_id is None:
            return KAFKA
        for pattern, library in self.patterns.items():
            if fnmatch.fnmatchcase(client_id, pattern):
                return library
        return LIBRDKAFKA if client_id == LIBRDKAFKA_DEFAULT_CLIENT_ID else KAFKA

    def of_member(self, member_id: str, client_ids: Mapping[str, str | None]) -> str:
        """A member's library from its captured client.id, else its member id's prefix."""
        return self.of(client_ids.get(member_id) or derived_client_id(member_id))

    def basis(
        self,
        strategy: str | None,
        members: Iterable[tuple[str, str | None]],
        leader: str | None,
        coordinator_assigned: bool,
        topics: int = 1,
    ) -> str:
        """What the observed assignment of a group running `strategy` on `topics` topics
        is judged against: `kafka`, `librdkafka`, or `undecided: <why>` (module
        docstring). `members`: (member id, captured client.id) pairs."""
        if coordinator_assigned or strategy not in LIBRDKAFKA_STRATEGIES:
            return KAFKA
        client_ids = dict(members)
        if leader is not None:
            library = self.of_member(leader, client_ids)
        else:
            found = {self.of_member(m, client_ids) for m in client_ids}
            if len(found) > 1:
                return MIXED
            library = found.pop() if found else KAFKA
        if library == LIBRDKAFKA and strategy == "cooperative-sticky" and topics > ORDERED_TOPICS:
            return TOPIC_ORDER
        return library
