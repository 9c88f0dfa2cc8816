"""The public assignor API (shared/CONTRACT.md): TopicPartition, Subscription, Assignor."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple, Protocol, runtime_checkable

from fleet_rebalance.vocabulary import RebalanceProtocol

DEFAULT_GENERATION = -1


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class Subscription:
    """One member's JoinGroup metadata: topics, what it owned, its generation and rack.

    `owned_partitions` + `generation` are Kafka's ownedPartitions / sticky userData;
    generation -1 means "none" (a member that never completed a rebalance).
    """

    topics: Collection[str]
    owned_partitions: Collection[TopicPartition] = ()
    generation: int = DEFAULT_GENERATION
    group_instance_id: str | None = None
    rack: str | None = None
    _topic_set: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.topics, str):
            raise TypeError(
                f"Subscription.topics must be a collection of topic names, "
                f"not the string {self.topics!r}"
            )
        object.__setattr__(self, "topics", tuple(self.topics))
        owned = tuple(self.owned_partitions)
        # A replay builds one per member, event and assignor from what the last one
        # gave: TopicPartitions already, kept as they are instead of rebuilt.
        if not all(type(tp) is TopicPartition for tp in owned):
            owned = tuple(TopicPartition(*tp) for tp in owned)
        object.__setattr__(self, "owned_partitions", owned)
        object.__setattr__(self, "_topic_set", frozenset(self.topics))

    @property
    def topic_set(self) -> frozenset[str]:
        return self._topic_set


Assignment = dict[str, list[TopicPartition]]


@lru_cache(maxsize=4096)
def topic_partitions(topic: str, count: int) -> tuple[TopicPartition, ...]:
    """A topic's partitions, built once: replays call assignors on the same topics
    thousands of times, and creating the tuples dominated small assignments."""
    return tuple(TopicPartition(topic, p) for p in range(count))


PartitionRacks = Mapping[TopicPartition, Collection[str]]


@runtime_checkable
class Assignor(Protocol):
    name: str
    protocol: str

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None = None,
    ) -> Assignment: ...


SETTLING_ROUNDS = 3  # the first follow-up hands out what moved; more only if it moves again


def settled_assignment(
    assignor: Assignor,
    counts: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    racks: PartitionRacks | None = None,
) -> Assignment:
    """Where a group settles: a cooperative assignor leaves a moving partition unowned
    until the follow-up rebalance its members join at once, owning what the first gave."""
    assignment = assignor.assign(counts, subscriptions, racks)
    if assignor.protocol != RebalanceProtocol.COOPERATIVE:
        return assignment
    for _ in range(SETTLING_ROUNDS):
        subscriptions = {
            m: replace(s, owned_partitions=assignment.get(m, ())) for m, s in subscriptions.items()
        }
        follow_up = assignor.assign(counts, subscriptions, racks)
        if follow_up == assignment:
            break
        assignment = follow_up
    return assignment


class AssignorInputError(ValueError):
    """Input no Kafka group could produce (negative partition counts, ...)."""


def validate_input(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> None:
    for topic, count in partitions_per_topic.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise AssignorInputError(
                f"partitions_per_topic[{topic!r}] must be a non-negative int, found {count!r}"
            )
    for member, subscription in subscriptions.items():
        if not isinstance(subscription, Subscription):
            raise AssignorInputError(
                f"subscriptions[{member!r}] must be a Subscription, found "
                f"{type(subscription).__name__}"
            )


class AssignorBase(ABC):
    """Validates the input and returns the contract's form; subclasses implement _assign."""

    name: str
    protocol: str

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None = None,
    ) -> Assignment:
        validate_input(partitions_per_topic, subscriptions)
        result = self._assign(partitions_per_topic, subscriptions, partition_racks)
        return sorted_assignment(result, subscriptions)

    @abstractmethod
    def _assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None,
    ) -> Mapping[str, list[TopicPartition]]: ...


def sorted_assignment(
    assignment: Mapping[str, list[TopicPartition]], members: Collection[str]
) -> Assignment:
    """Every member a key, each list sorted (the contract's output form)."""
    return {m: sorted(assignment.get(m, ())) for m in members}
