"""One group's state at one capture, as the replay sees it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from fleet_rebalance.assignors import TopicPartition

REBALANCING_STATES = frozenset(
    {
        "PreparingRebalance",
        "CompletingRebalance",
        "Assigning",
        "Reconciling",
        "AwaitingSync",
        "Unknown",  # librdkafka's name for a consumer group's Assigning and Reconciling
    }
)


@dataclass(frozen=True)
class MemberSnapshot:
    member_id: str
    instance_id: str | None
    subscription: tuple[str, ...] | None  # None: unknown, see group.fill_unknown_subscriptions
    assignment: tuple[TopicPartition, ...] | None  # None: not captured / unresolved
    client_id: str | None = None
    host: str | None = None

    @property
    def topics(self) -> tuple[str, ...]:
        """The subscription's topics; none while it is unknown (before
        group.fill_unknown_subscriptions)."""
        return self.subscription or ()

    @property
    def key(self) -> str:
        """Identity across captures: a static member keeps its group.instance.id when it
        comes back with a new member id (Kafka's static membership: no rebalance)."""
        return f"instance:{self.instance_id}" if self.instance_id else f"member:{self.member_id}"


@dataclass(frozen=True)
class Snapshot:
    captured_at: dt.datetime
    members: tuple[MemberSnapshot, ...]
    state: str | None = None
    strategy: str | None = None
    partition_counts: dict[str, int] = field(default_factory=dict)
    lags: dict[TopicPartition, int] = field(default_factory=dict)
    # The group's capture just before this one (whatever it showed), None for its first:
    # captures that repeat a snapshot are not snapshots of their own (group.snapshots_from),
    # so this says until when the previous state was seen.
    follows: dt.datetime | None = None
    # The members view's own warning: the tool described the group mid-rebalance (its
    # state view, a second later, may already say Stable).
    warned: bool = False

    @property
    def rebalancing(self) -> bool:
        """Mid-rebalance: the tool or the broker's state says so, or (old coordinator)
        every member is listed with an empty assignment although the group subscribes
        to partitions. A member whose assignment is not known (a 3.8/3.9 topic-less one
        the offsets view could not resolve) may hold partitions: no such capture is."""
        if self.warned or self.state in REBALANCING_STATES:
            return True
        return (
            bool(self.members)
            and all(m.assignment == () for m in self.members)
            and any(self.partition_counts.get(t, 0) for m in self.members for t in m.topics)
        )

    def by_key(self) -> dict[str, MemberSnapshot]:
        return {m.key: m for m in self.members}

    def subscribed_counts(self) -> dict[str, int]:
        topics = {t for m in self.members for t in m.topics}
        return {
            t: self.partition_counts[t]
            for t in sorted(topics)
            if self.partition_counts.get(t, 0) > 0
        }
