"""Each assignor's answer to each rebalance event of one group, with its own state.

Every assignor carries what it assigned at the previous event as the members' owned
partitions (by member identity, so a static member keeps its partitions across a new
member id) and a generation that grows by one per event; cooperative assignors run the
follow-up round. A day that starts from the previous date's baseline capture seeds every
state from it first (see _seed), so its first event is not all `fresh`. `observed` is
the assignment actually captured, so it has rows only at the generations a capture
shows; those rows also say whether it equals what the group's declared strategy gives
from the last observed assignment, carried through the generations in between as that
strategy would have assigned them (conformance). An event's cost (paused
partition-seconds, messages delayed) takes the generation's logged duration.

Memory: one event's members and partitions at a time plus, per assignor, one
assignment; nothing grows with the number of events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from fleet_rebalance.assignors import Assignor, Subscription, TopicPartition, get_assignor
from fleet_rebalance.assignors.registry import available_assignors
from fleet_rebalance.assignors.types import Assignment, PartitionRacks
from fleet_rebalance.replay.events import RebalanceEvent
from fleet_rebalance.replay.metrics import differing_partitions, event_metrics
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

OBSERVED = "observed"


def default_assignors() -> list[str]:
    return [*available_assignors(), OBSERVED]


@dataclass
class _State:
    assignment: dict[str, list[TopicPartition]] = field(default_factory=dict)
    generation: int = 0
    failed: bool = False


@dataclass(frozen=True)
class ReplayRow:
    table: str  # "replay_metrics", "assignment_replay" or "replay_errors"
    values: dict[str, Any]


def replay_events(
    events: Iterable[RebalanceEvent],
    assignors: list[str],
    racks: Mapping[TopicPartition, list[str]] | None = None,
    topic_ids: Mapping[str, str] | None = None,
) -> Iterator[ReplayRow]:
    """`topic_ids`: the cluster's topic ids by name, for the assignors that take them
    (the uniform assignor breaks ties by topic id, as Kafka's does)."""
    inputs = _Inputs(racks, topic_ids or None)
    states = {name: _State() for name in assignors}
    loaded = {name: get_assignor(name) for name in assignors if name != OBSERVED}
    # `observed` last: its conformance needs the declared assignor's answer first.
    ordered = sorted(assignors, key=lambda name: name == OBSERVED)
    # What the declared strategy gives, carried from the last observed assignment through
    # the generations no capture shows: what the group's assignment should be.
    shadow = _State()
    first = True
    for event in events:
        if first and event.previous is not None:
            yield from _seed(event, event.previous, states, loaded, inputs)
            baseline = event.previous.members
            if all(m.assignment is not None for m in baseline):
                shadow.assignment = {m.key: list(m.assignment or ()) for m in baseline}
                shadow.generation = 1
        first = False
        snapshot = event.snapshot
        members = {m.key: m for m in snapshot.members}
        counts = snapshot.subscribed_counts()
        universe = [TopicPartition(t, p) for t, n in counts.items() for p in range(n)]
        observed = {k: sorted(m.assignment) for k, m in members.items() if m.assignment is not None}
        observed_complete = bool(members) and len(observed) == len(members)
        # The declared assignor's own replay, where it carries the shadow's state (a group
        # that conforms), gives `expected` without assigning again.
        declared = states.get(snapshot.strategy or "")
        reuse = (
            event.assigned
            and declared is not None
            and not declared.failed
            and declared.generation == shadow.generation
            and declared.assignment == shadow.assignment
        )
        expected: Assignment | None
        if not event.assigned:  # no assignment computed: everyone kept what they had
            expected = {k: list(shadow.assignment.get(k, ())) for k in members}
        elif not reuse:
            expected = _expected(event, shadow, members, counts, inputs)
        else:
            expected = None
        for name in ordered:
            state = states[name]
            if state.failed:
                continue
            try:
                if name == OBSERVED:
                    if not observed_complete and members:
                        continue
                    protocol = _declared_protocol(snapshot.strategy)
                    result = observed
                else:
                    assignor = loaded[name]
                    protocol = assignor.protocol
                    result = _assign(assignor, members, counts, state, inputs)
            except Exception as exc:
                state.failed = True
                yield ReplayRow(
                    "replay_errors",
                    {
                        "event_seq": event.seq,
                        "assignor": name,
                        "reason": f"{type(exc).__name__}: {exc}",
                    },
                )
                continue
            values = event_metrics(
                state.assignment,
                result,
                members,
                universe,
                protocol,
                snapshot.lags,
                event.duration_ms,
                event.rates,
            )
            values.update(
                event_seq=event.seq,
                assignor=name,
                protocol=protocol,
                member_count=len(members),
                partition_count=len(universe),
                conforms=None,
                differing_partitions=None,
            )
            if name == OBSERVED and expected is not None and event.previous is not None:
                differing = differing_partitions(expected, result, universe)
                values.update(conforms=differing == 0, differing_partitions=differing)
            yield ReplayRow("replay_metrics", values)
            for key, tps in sorted(result.items()):
                yield ReplayRow(
                    "assignment_replay",
                    {
                        "event_seq": event.seq,
                        "assignor": name,
                        "member_id": members[key].member_id if key in members else key,
                        "partitions": sorted(tps),
                    },
                )
            if reuse and name == snapshot.strategy:
                expected = result
            state.assignment = {k: list(v) for k, v in result.items()}
            state.generation += 1
        if observed_complete or not members:
            shadow.assignment = observed
        elif expected is not None:
            shadow.assignment = expected
        shadow.generation += 1


def _expected(
    event: RebalanceEvent,
    shadow: _State,
    members: Mapping[str, MemberSnapshot],
    counts: Mapping[str, int],
    inputs: _Inputs,
) -> Assignment | None:
    """The declared strategy's assignment at this event from the shadow state; None
    when the group declares none we replay, or an assignor failed on it."""
    strategy = event.snapshot.strategy
    if strategy not in available_assignors():
        return None
    try:
        return _assign(get_assignor(strategy), members, counts, shadow, inputs)
    except Exception:  # the replay of that assignor reports it in replay_errors
        return None


def _seed(
    event: RebalanceEvent,
    previous: Snapshot,
    states: Mapping[str, _State],
    loaded: Mapping[str, Assignor],
    inputs: _Inputs,
) -> Iterator[ReplayRow]:
    """State before a day that starts from the previous date's baseline capture
    (`previous`, the first event's): what was observed there, and what each assignor
    gives that group from scratch (the best estimate of its own state without the
    earlier history). No metrics rows."""
    members = {m.key: m for m in previous.members}
    counts = previous.subscribed_counts()
    for name, state in states.items():
        try:
            if name == OBSERVED:
                observed = {k: list(m.assignment or ()) for k, m in members.items()}
                if all(m.assignment is not None for m in members.values()):
                    state.assignment = observed
            else:
                state.assignment = _assign(loaded[name], members, counts, state, inputs)
        except Exception as exc:
            state.failed = True
            reason = f"{type(exc).__name__} on the baseline capture: {exc}"
            yield ReplayRow(
                "replay_errors", {"event_seq": event.seq, "assignor": name, "reason": reason}
            )
            continue
        state.generation += 1


@dataclass(frozen=True)
class _Inputs:
    """What every assignment of the group takes besides its members and counts."""

    racks: Mapping[TopicPartition, list[str]] | None
    topic_ids: Mapping[str, str] | None

    def assign(
        self,
        assignor: Assignor,
        counts: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
    ) -> Assignment:
        if self.topic_ids and getattr(assignor, "takes_topic_ids", False):
            by_id = cast(_TakesTopicIds, assignor)  # the flag says assign() takes them
            return by_id.assign(counts, subscriptions, self.racks, topic_ids=self.topic_ids)
        return assignor.assign(counts, subscriptions, self.racks)


class _TakesTopicIds(Protocol):
    """An assignor whose `takes_topic_ids` is true: assign() also takes the topic ids
    (the uniform assignor breaks ties by them, as Kafka's does)."""

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        partition_racks: PartitionRacks | None = None,
        *,
        topic_ids: Mapping[str, str] | None = None,
    ) -> Assignment: ...


def _assign(
    assignor: Assignor,
    members: Mapping[str, MemberSnapshot],
    counts: Mapping[str, int],
    state: _State,
    inputs: _Inputs,
) -> dict[str, list[TopicPartition]]:
    by_id = {m.member_id: key for key, m in members.items()}

    def subscriptions(
        owned: Mapping[str, list[TopicPartition]], generation: int
    ) -> dict[str, Subscription]:
        return {
            m.member_id: Subscription(m.topics, owned.get(key, ()), generation, m.instance_id)
            for key, m in members.items()
        }

    result = inputs.assign(assignor, counts, subscriptions(state.assignment, state.generation))
    if assignor.protocol == "cooperative" and assignor.name != "uniform":
        first = {by_id[m]: tps for m, tps in result.items()}
        result = inputs.assign(assignor, counts, subscriptions(first, state.generation + 1))
    return {by_id[m]: list(tps) for m, tps in result.items()}


def _declared_protocol(strategy: str | None) -> str:
    if strategy in ("cooperative-sticky", "uniform"):
        return "cooperative"
    return "eager"
