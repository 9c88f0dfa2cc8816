"""DESIGN.md's metric definitions for one event and one assignor, exactly.

prev and next map member identity -> partitions (the assignor's final assignment before
and after the event, after the follow-up round for cooperative assignors); `universe`
is every partition of a subscribed topic after the event.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.vocabulary import RebalanceProtocol

Assignment = Mapping[str, Collection[TopicPartition]]


def owners(assignment: Assignment) -> dict[TopicPartition, str]:
    return {tp: member for member, tps in assignment.items() for tp in tps}


def event_metrics(
    prev: Assignment,
    next_: Assignment,
    members: Collection[str],
    universe: Collection[TopicPartition],
    protocol: str,
    lags: Mapping[TopicPartition, int],
    duration_ms: int | None = None,
    rates: Mapping[TopicPartition, float] | None = None,
) -> dict[str, Any]:
    """The metrics of one event; with its logged duration, its cost: the paused
    partitions x the duration (partition-seconds) and the messages produced into them
    meanwhile (each paused partition's produce rate x the duration)."""
    before, after = owners(prev), owners(next_)
    current = set(members)
    kept = reassigned = orphaned = fresh = 0
    kept_set: set[TopicPartition] = set()
    owner_before, owner_after = before.get, after.get
    for tp in universe:
        old = owner_before(tp)
        if old is None:
            fresh += 1
        elif owner_after(tp) == old:
            kept += 1
            kept_set.add(tp)
        elif old in current:
            reassigned += 1
        else:
            orphaned += 1
    eager = protocol == RebalanceProtocol.EAGER
    paused = len(universe) if eager else len(universe) - kept
    seconds = delayed = None
    if duration_ms is not None:
        seconds = paused * duration_ms / 1000
        paused_set = universe if eager else [tp for tp in universe if tp not in kept_set]
        if rates:  # unknown (no log-end offsets around it) is not 0
            delayed = int64_or_none(
                round(sum(rates.get(tp, 0.0) for tp in paused_set) * duration_ms / 1000)
            )
    revoked = sum(1 for tp, m in before.items() if m in current) if eager else reassigned
    counts = [len(next_.get(m, ())) for m in current]
    lag_of = lags.get
    member_lags = (
        [sum([lag_of(tp, 0) or 0 for tp in next_.get(m, ())]) for m in current]
        if lags
        else [0] * len(current)
    )
    total = sum(member_lags)
    mean = total / len(member_lags) if member_lags else 0
    return {
        "kept": kept,
        "reassigned": reassigned,
        "orphaned": orphaned,
        "fresh": fresh,
        "stickiness": kept / (kept + reassigned) if kept + reassigned else None,
        "revoked": revoked,
        "rounds": 1 if eager or reassigned == 0 else 2,
        "paused_partitions": paused,
        "paused_partition_seconds": seconds,
        "messages_delayed": delayed,
        "count_min": min(counts) if counts else 0,
        "count_max": max(counts) if counts else 0,
        "count_spread": (max(counts) - min(counts)) if counts else 0,
        "lag_total": int64_or_none(total),
        "lag_max_member": int64_or_none(max(member_lags)) if member_lags else 0,
        "lag_skew": (max(member_lags) / mean) if total > 0 else None,
    }


INT64_MAX = (1 << 63) - 1


def int64_or_none(value: int) -> int | None:
    """A sum of lags as its long column holds it: null when past int64 (each lag is
    one, their sum need not be), never wrapped nor rounded."""
    return value if -INT64_MAX - 1 <= value <= INT64_MAX else None


def differing_partitions(
    expected: Assignment, actual: Assignment, universe: Collection[TopicPartition]
) -> int:
    a, b = owners(expected), owners(actual)
    return sum(1 for tp in universe if a.get(tp) != b.get(tp))
