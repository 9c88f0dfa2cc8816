"""Each assignor's answer to each rebalance event of one group, with its own state.

Every assignor carries what it assigned at the previous event as the members' owned
partitions (by member identity, so a static member keeps its partitions across a new
member id) and a generation that grows by one per event; cooperative assignors run the
follow-up round. A day that starts from the previous date's baseline capture seeds every
state from it first (see _seed), so its first event is not all `fresh`. `observed` is
the assignment actually captured; its rows also say whether it equals what the group's
declared strategy would produce from the previous observed assignment (conformance).

Memory: one event's members and partitions at a time plus, per assignor, one
assignment; nothing grows with the number of events.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet_rebalance.assignors import Subscription, TopicPartition, get_assignor
from fleet_rebalance.assignors.registry import available_assignors
from fleet_rebalance.replay.events import RebalanceEvent
from fleet_rebalance.replay.metrics import differing_partitions, event_metrics

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
) -> Iterator[ReplayRow]:
    states = {name: _State() for name in assignors}
    loaded = {name: get_assignor(name) for name in assignors if name != OBSERVED}
    first = True
    for event in events:
        if first and event.previous is not None:
            yield from _seed(event, states, loaded, racks)
        first = False
        snapshot = event.snapshot
        members = {m.key: m for m in snapshot.members}
        counts = snapshot.subscribed_counts()
        universe = [TopicPartition(t, p) for t, n in counts.items() for p in range(n)]
        observed = {k: list(m.assignment) for k, m in members.items() if m.assignment is not None}
        observed_complete = len(observed) == len(members)
        for name in assignors:
            state = states[name]
            if state.failed:
                continue
            try:
                if name == OBSERVED:
                    if not observed_complete:
                        continue
                    protocol = _declared_protocol(snapshot.strategy)
                    result = observed
                else:
                    assignor = loaded[name]
                    protocol = assignor.protocol
                    result = _assign(assignor, members, counts, state, racks)
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
                state.assignment, result, members, universe, protocol, snapshot.lags
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
            if name == OBSERVED:
                values.update(
                    _conformance(event, states[OBSERVED], members, counts, result, universe, racks)
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
            state.assignment = {k: list(v) for k, v in result.items()}
            state.generation += 1


def _seed(event: RebalanceEvent, states, loaded, racks) -> Iterator[ReplayRow]:
    """State before a day that starts from the previous date's baseline capture: what
    was observed there, and what each assignor gives that group from scratch (the best
    estimate of its own state without the earlier history). No metrics rows."""
    previous = event.previous
    members = {m.key: m for m in previous.members}
    counts = previous.subscribed_counts()
    for name, state in states.items():
        try:
            if name == OBSERVED:
                observed = {k: list(m.assignment or ()) for k, m in members.items()}
                if all(m.assignment is not None for m in members.values()):
                    state.assignment = observed
            else:
                state.assignment = _assign(loaded[name], members, counts, state, racks)
        except Exception as exc:
            state.failed = True
            reason = f"{type(exc).__name__} on the baseline capture: {exc}"
            yield ReplayRow(
                "replay_errors", {"event_seq": event.seq, "assignor": name, "reason": reason}
            )
            continue
        state.generation += 1


def _assign(assignor, members, counts, state: _State, racks) -> dict[str, list[TopicPartition]]:
    by_id = {m.member_id: key for key, m in members.items()}

    def subscriptions(owned: Mapping[str, list[TopicPartition]], generation: int):
        return {
            m.member_id: Subscription(m.subscription, owned.get(key, ()), generation, m.instance_id)
            for key, m in members.items()
        }

    result = assignor.assign(counts, subscriptions(state.assignment, state.generation), racks)
    if assignor.protocol == "cooperative" and assignor.name != "uniform":
        first = {by_id[m]: tps for m, tps in result.items()}
        result = assignor.assign(counts, subscriptions(first, state.generation + 1), racks)
    return {by_id[m]: list(tps) for m, tps in result.items()}


def _declared_protocol(strategy: str | None) -> str:
    if strategy in ("cooperative-sticky", "uniform"):
        return "cooperative"
    return "eager"


def _conformance(
    event: RebalanceEvent, observed_state: _State, members, counts, actual, universe, racks
) -> dict[str, Any]:
    strategy = event.snapshot.strategy
    if strategy not in available_assignors() or event.previous is None:
        return {}
    expected = _assign(get_assignor(strategy), members, counts, observed_state, racks)
    differing = differing_partitions(expected, actual, universe)
    return {"conforms": differing == 0, "differing_partitions": differing}
