"""Each assignor's answer to each rebalance event of one group, with its own state.

Every assignor carries what it assigned at the previous event as the members' owned
partitions (by member identity, so a static member keeps its partitions across a new
member id) and a generation that grows by one per generation; cooperative assignors run
the follow-up round. An event whose cooperative follow-up rounds also took members in or
let them go (its `steps`: the member sets of those rounds' generations, rebalance_events.py) is
replayed generation by generation: each step is one round of the assignor with what the
round before left owned, and the event's own members then get the round and its
follow-up; the metrics compare the state before the event with the state after it. A
day that starts from the previous date's baseline capture seeds every state from it
first (see _seed), so its first event is not all `fresh`. `observed` is the assignment
actually captured, so it has rows only at the generations a capture shows; those rows
also say whether it equals what the group's declared strategy gives from the last
observed assignment, carried through the generations in between (and the steps) as that
strategy would have assigned them (conformance), as the group's leader runs it: Kafka's
assignor, or librdkafka's own for a librdkafka leader, or undecided where the leader's
library is not known (client_library.py; `conformance_basis` says which). An event's
cost (paused partition-seconds, messages delayed) takes the generation's logged
duration.

Memory: one event's members and partitions at a time plus, per assignor, one
assignment; nothing grows with the number of events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from fleet_rebalance.assignors import Assignor, Subscription, TopicPartition, get_assignor
from fleet_rebalance.assignors.librdkafka import librdkafka_assignor
from fleet_rebalance.assignors.registry import available_assignors
from fleet_rebalance.assignors.types import Assignment, PartitionRacks
from fleet_rebalance.replay.client_library import KAFKA, UNDECIDED, ClientLibraries
from fleet_rebalance.replay.events import RebalanceEvent
from fleet_rebalance.replay.metrics import differing_partitions, event_metrics
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot
from fleet_rebalance.vocabulary import RebalanceProtocol

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
    libraries: ClientLibraries | None = None,
) -> Iterator[ReplayRow]:
    """`topic_ids`: the cluster's topic ids by name, for the assignors that take them
    (the uniform assignor breaks ties by topic id, as Kafka's does); `libraries`: which
    members are librdkafka clients (metrics.client_libraries)."""
    inputs = _Inputs(racks, topic_ids or None)
    libraries = libraries or ClientLibraries()
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
        basis = libraries.basis(
            snapshot.strategy,
            [(m.member_id, m.client_id) for m in snapshot.members],
            event.leader,
            event.coordinator_assigned,
            len(counts),
        )
        # The declared assignor's own replay, where it carries the shadow's state (a group
        # that conforms), gives `expected` without assigning again.
        declared = states.get(snapshot.strategy or "")
        reuse = (
            event.assigned
            and basis == KAFKA
            and declared is not None
            and not declared.failed
            and declared.generation == shadow.generation
            and declared.assignment == shadow.assignment
        )
        expected: Assignment | None
        if not event.assigned:  # no assignment computed: everyone kept what they had
            expected = {k: list(shadow.assignment.get(k, ())) for k in members}
        elif not reuse:
            expected = _expected(
                event, basis, shadow, members, counts, inputs, not event.single_round
            )
        else:
            expected = None
        # A capture that may predate the last follow-up round may show the round before.
        before_follow_up = (
            _expected(event, basis, shadow, members, counts, inputs, follow_up=False)
            if event.follow_up_pending and event.assigned
            else None
        )
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
                    result = _replayed(
                        assignor, event, members, counts, state, inputs, not event.single_round
                    )
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
                conformance_basis=None,
            )
            if name == OBSERVED and event.previous is not None:
                values.update(
                    _conformance(
                        [expected, before_follow_up], result, universe, basis, snapshot.strategy
                    )
                )
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
            state.generation += 1 + len(event.steps)
        if observed_complete or not members:
            shadow.assignment = observed
        elif expected is not None:
            shadow.assignment = expected
        shadow.generation += 1 + len(event.steps)


def _conformance(
    expected: list[Assignment | None],
    observed: Assignment,
    universe: list[TopicPartition],
    basis: str,
    strategy: str | None,
) -> dict[str, Any]:
    """An observed row's conforms, differing_partitions and conformance_basis: judged
    against `basis`'s assignor of the declared strategy at the round (or rounds: a
    capture that may predate a follow-up round) the capture can show, the nearest of
    them; none where the group declares no strategy we replay."""
    if basis.startswith(UNDECIDED):
        return {"conformance_basis": basis}
    if expected[0] is None:
        if strategy in available_assignors():  # the assignor failed on the group
            return {"conformance_basis": f"{UNDECIDED}{basis}'s {strategy} failed on the group"}
        return {}
    differing = min(differing_partitions(e, observed, universe) for e in expected if e is not None)
    return {
        "conforms": differing == 0,
        "differing_partitions": differing,
        "conformance_basis": basis,
    }


def _expected(
    event: RebalanceEvent,
    basis: str,
    shadow: _State,
    members: Mapping[str, MemberSnapshot],
    counts: Mapping[str, int],
    inputs: _Inputs,
    follow_up: bool = True,
) -> Assignment | None:
    """The declared strategy's assignment at this event from the shadow state, as
    `basis`'s assignor gives it (without `follow_up`: before a cooperative assignor's
    follow-up round); None when the group declares none we replay, the basis is
    undecided, or the assignor failed on it."""
    strategy = event.snapshot.strategy
    if strategy not in available_assignors() or basis.startswith(UNDECIDED):
        return None
    assignor = get_assignor(strategy) if basis == KAFKA else librdkafka_assignor(strategy)
    if assignor is None:
        return None
    try:
        return _replayed(assignor, event, members, counts, shadow, inputs, follow_up)
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
                state.assignment = _assign(
                    loaded[name], members, counts, state.assignment, state.generation, inputs
                )
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


def _replayed(
    assignor: Assignor,
    event: RebalanceEvent,
    members: Mapping[str, MemberSnapshot],
    counts: Mapping[str, int],
    state: _State,
    inputs: _Inputs,
    follow_up: bool = True,
) -> dict[str, list[TopicPartition]]:
    """The assignor's answer to the event from `state`: one round per step (a
    cooperative follow-up round that changed the members), then the event's members'
    round and, cooperative, its follow-up (unless `follow_up` is false)."""
    owned, generation = state.assignment, state.generation
    for step in event.steps:
        step_members = {m.key: m for m in step.members}
        counts_then = step.subscribed_counts()
        owned = _assign(assignor, step_members, counts_then, owned, generation, inputs, False)
        generation += 1
    return _assign(assignor, members, counts, owned, generation, inputs, follow_up)


def _assign(
    assignor: Assignor,
    members: Mapping[str, MemberSnapshot],
    counts: Mapping[str, int],
    owned: Mapping[str, list[TopicPartition]],
    generation: int,
    inputs: _Inputs,
    follow_up: bool = True,
) -> dict[str, list[TopicPartition]]:
    """One generation's assignment from what the members own (by member key); a
    cooperative assignor's follow-up round too, unless `follow_up` is false (a round
    another generation continues)."""
    by_id = {m.member_id: key for key, m in members.items()}

    def subscriptions(
        owned: Mapping[str, list[TopicPartition]], generation: int
    ) -> dict[str, Subscription]:
        return {
            m.member_id: Subscription(m.topics, owned.get(key, ()), generation, m.instance_id)
            for key, m in members.items()
        }

    result = inputs.assign(assignor, counts, subscriptions(owned, generation))
    if (
        follow_up
        and assignor.protocol == RebalanceProtocol.COOPERATIVE
        and assignor.name != "uniform"
    ):
        first = {by_id[m]: tps for m, tps in result.items()}
        result = inputs.assign(assignor, counts, subscriptions(first, generation + 1))
    return {by_id[m]: list(tps) for m, tps in result.items()}


def _declared_protocol(strategy: str | None) -> str:
    if strategy in ("cooperative-sticky", "uniform"):
        return RebalanceProtocol.COOPERATIVE
    return RebalanceProtocol.EAGER
