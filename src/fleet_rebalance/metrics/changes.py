"""The one change a group should make, out of every candidate its day supports (pure
rules over one group's facts; recommendations.py builds the facts in Spark).

Candidates, each with what it saves against the declared assignor's replay (the
baseline every comparison uses) over the day's rebalances:
- `stuck_partition`: a partition Burrow rates STALL (its committed offset never moves
  while it lags) while the group's other partitions move: a record the consumer cannot
  get past. Named with its topic, partition and offset; no assignor or protocol change
  helps (the new owner would stop at the same record), so it comes first.
- `fix_crash_loop`: one consumer (client id, host or instance id) expired and back with
  a new member id at least `crash_loop_restarts` times, once before its old session had
  even expired (so a new process, not a stalled one): it dies and is restarted. Static
  membership would only hide the restarts shorter than its session timeout. Second.
- `consumer_config` for session timeouts: members expired (heartbeat expiration) and
  came back (same consumer, new member id) within the rejoin window: they stalled past
  session.timeout.ms. A session timeout longer than the longest stall the log shows
  would have kept them: both rebalances of each such incident saved.
- `consumer_config` for poll timeouts: members left because max.poll.interval.ms
  passed between two polls: a longer interval (or fewer records per poll) keeps them.
- `static_membership`, `assignor`, `protocol_migration`: recommendations.py's choice by
  DESIGN.md's rule, with its savings.
A candidate is recommended only when its gain is material (Limits; a protocol migration
that needs the brokers upgraded first must gain `migration_factor` times as much); the
faults first, then the most paused partition-seconds saved, then rebalances, then
paused partitions, then the cheapest change. Below the thresholds the group keeps what
it runs, and the reason says what the best candidate would have saved.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

KEEP, ASSIGNOR, MIGRATION, STATIC = "keep", "assignor", "protocol_migration", "static_membership"
CONFIG, CRASH, STUCK = "consumer_config", "fix_crash_loop", "stuck_partition"
# Cheapest first: the order among candidates that save the same.
EFFORT = (CONFIG, STATIC, ASSIGNOR, MIGRATION)
FAULTS = (STUCK, CRASH)
# What a 3.0+ Java consumer runs with (KIP-735), and what brokers allow by default.
DEFAULT_SESSION_MS = 45_000
MAX_SESSION_MS = 1_800_000  # group.max.session.timeout.ms
DEFAULT_POLL_MS = 300_000  # max.poll.interval.ms
ROUND_MS = 5_000
UPGRADE_BROKERS = "classic_coordinator"


@dataclass(frozen=True)
class Limits:
    """The conf's thresholds of a material gain (metrics.change_*)."""

    rebalances: int = 2
    seconds: float = 60.0
    partitions: int = 12
    skew: float = 0.25
    migration_factor: float = 3.0
    crash_loop_restarts: int = 3


@dataclass(frozen=True)
class Candidate:
    kind: str
    title: str  # the change in a few words: "switching to cooperative-sticky"
    reason: str
    prerequisites: str | None
    rebalances: int | None = None
    seconds: float | None = None
    partitions: int | None = None
    skew: float | None = None  # mean lag skew lower by this much
    balances: bool = False  # brings the count spread to 1 or less
    factor: float = 1.0  # how much more it must gain (a broker upgrade first)

    def material(self, limits: Limits) -> bool:
        if self.kind in FAULTS:
            return True
        f = self.factor
        return (
            self.balances
            or (self.rebalances or 0) >= limits.rebalances * f
            or (self.seconds or 0) >= limits.seconds * f
            or (self.seconds is None and (self.partitions or 0) >= limits.partitions * f)
            or (self.skew or 0) >= limits.skew * f
        )

    def rank(self) -> tuple:
        effort = EFFORT.index(self.kind) if self.kind in EFFORT else len(EFFORT)
        return (
            0 if self.kind == STUCK else 1 if self.kind == CRASH else 2,
            -(self.seconds or 0),
            -(self.rebalances or 0),
            -(self.partitions or 0),
            effort,
        )

    def saving(self) -> str:
        parts = []
        if self.rebalances:
            parts.append(f"{self.rebalances} rebalance{'s' * (self.rebalances != 1)}")
        if self.partitions:
            parts.append(f"{self.partitions} paused partitions")
        if self.seconds:
            parts.append(f"{self.seconds:,.1f} partition-seconds")
        if self.skew:
            parts.append(f"mean lag skew {self.skew:.2f} lower")
        return ", ".join(parts) or "nothing"


def decide(
    recommended: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    stuck: Sequence[Mapping[str, Any]],
    limits: Limits,
) -> dict[str, Any]:
    """The group's final change: `recommended` is recommendations.py's row (its
    assignor, protocol or static-membership choice), `events` the day's rebalances with
    the baseline replay's cost (cause, departed, returned, away_ms, paused_partitions,
    paused_partition_seconds), `stuck` its stalled partitions (topic, partition, offset,
    lag, since). Returns the row's change columns."""
    candidates = [
        *_stuck(stuck),
        *_crash_loop(events, limits),
        *_session(events, limits),
        *_poll(events),
        *_recommended(recommended, limits),
    ]
    chosen = sorted((c for c in candidates if c.material(limits)), key=Candidate.rank)
    if chosen:
        return _row(chosen[0], recommended)
    best = sorted(candidates, key=Candidate.rank)
    return _keep(recommended, best[0] if best else None, limits)


def _row(change: Candidate, recommended: Mapping[str, Any]) -> dict[str, Any]:
    if change.kind in (ASSIGNOR, MIGRATION, STATIC):
        return {"change_kind": change.kind, "changed_assignor": change.kind != STATIC}
    return {
        "change_kind": change.kind,
        "changed_assignor": False,
        "reason": change.reason,
        "prerequisites": change.prerequisites,
        "paused_partitions_saved": change.partitions,
        "rebalances_saved": change.rebalances,
        "paused_partition_seconds_saved": change.seconds,
    }


def _keep(recommended: Mapping[str, Any], best: Candidate | None, limits: Limits) -> dict[str, Any]:
    row: dict[str, Any] = {"change_kind": KEEP, "changed_assignor": False}
    if best is None or best.kind == KEEP:
        return row
    row.update(
        reason=(
            f"keep {recommended.get('declared_assignor') or 'the current assignor'}: gain too "
            f"small: {best.title} would save {best.saving()}, below the thresholds "
            f"({_thresholds(limits, best.factor)})"
        ),
        prerequisites=None,
        paused_partitions_saved=0
        if recommended.get("paused_partitions_saved") is not None
        else None,
        rebalances_saved=None,
        paused_partition_seconds_saved=(
            0.0 if recommended.get("paused_partition_seconds_saved") is not None else None
        ),
    )
    return row


def _thresholds(limits: Limits, factor: float) -> str:
    f = factor
    scaled = f" (x{f:g}: the brokers need upgrading first)" if f != 1 else ""
    return (
        f"{limits.rebalances * f:g} rebalances, {limits.seconds * f:g} partition-seconds, "
        f"{limits.partitions * f:g} paused partitions or a mean lag skew {limits.skew * f:g} "
        f"lower{scaled}"
    )


def _recommended(recommended: Mapping[str, Any], limits: Limits) -> list[Candidate]:
    row: dict[str, Any] = {
        k: (v if _number(v) or not isinstance(v, float) else None) for k, v in recommended.items()
    }
    kind = row.get("change_kind")
    if kind not in (ASSIGNOR, MIGRATION, STATIC):
        return []
    skew_delta = row.get("mean_lag_skew_delta")
    spread_before = row.get("declared_max_count_spread")
    spread_after = row.get("recommended_max_count_spread")
    balances = (
        kind != STATIC
        and spread_before is not None
        and spread_after is not None
        and spread_before > 1 >= spread_after
    )
    upgrade = kind == MIGRATION and row.get("brokers") in (UPGRADE_BROKERS, None)
    to = row.get("recommended_assignor")
    title = {
        ASSIGNOR: f"switching to {to}",
        MIGRATION: f"migrating to the consumer protocol ({to})",
        STATIC: "static membership",
    }[kind]
    return [
        Candidate(
            kind,
            title,
            row.get("reason") or "",
            row.get("prerequisites"),
            rebalances=row.get("rebalances_saved"),
            seconds=row.get("paused_partition_seconds_saved"),
            partitions=row.get("paused_partitions_saved"),
            skew=-skew_delta if kind != STATIC and _number(skew_delta) and skew_delta < 0 else None,
            balances=balances,
            factor=limits.migration_factor if upgrade else 1.0,
        )
    ]


def _stuck(stuck: Sequence[Mapping[str, Any]]) -> list[Candidate]:
    if not stuck:
        return []
    named = sorted(stuck, key=lambda s: (s["topic"], s["partition"]))
    where = "; ".join(
        f"{s['topic']}-{s['partition']} at offset {_count(s.get('offset'))} "
        f"(lag {_count(s.get('lag'))} messages, Burrow STALL since {_clock(s.get('since'))})"
        for s in named
    )
    first = named[0]
    topic, partition, offset = first["topic"], first["partition"], first.get("offset")
    reason = (
        f"stuck partition: {where}, while the group's other partitions move: the consumer "
        "cannot get past a record there; no assignor or protocol change helps (the new "
        "owner stops at the same record)"
    )
    after = "the next offset" if offset is None else str(int(offset) + 1)
    prerequisites = (
        f"look at the record: kafka-console-consumer.sh --topic {topic} --partition "
        f"{partition} --offset {offset if _number(offset) else '<offset>'} --max-messages 1; "
        "fix the consumer's handling "
        "of it (a dead-letter topic for records it cannot process), or, once decided, skip "
        f"it with the group stopped: kafka-consumer-groups.sh --reset-offsets --group <group> "
        f"--topic {topic}:{partition} --to-offset {after} --execute"
    )
    return [Candidate(STUCK, "fixing the stuck partition", reason, prerequisites)]


def _incidents(events: Sequence[Mapping[str, Any]], cause: str) -> list[Mapping[str, Any]]:
    return [e for e in events if e.get("cause") == cause]


def _looping(events: Sequence[Mapping[str, Any]], limits: Limits) -> dict[str, int]:
    """Consumers back after a session expiry `crash_loop_restarts` times or more, once at
    least before the expiry itself: a new process while the old one's session was still
    alive (a consumer that only stalled can rejoin only once it is told it was fenced)."""
    timeouts = _incidents(events, "session_timeout")
    back = Counter(e["returned"] for e in timeouts if e.get("returned"))
    restarted = {e["returned"] for e in timeouts if e.get("returned") and e.get("away_ms") == 0}
    return {c: n for c, n in back.items() if n >= limits.crash_loop_restarts and c in restarted}


def _crash_loop(events: Sequence[Mapping[str, Any]], limits: Limits) -> list[Candidate]:
    back = _looping(events, limits)
    looping = sorted(back)
    if not looping:
        return []
    timeouts = _incidents(events, "session_timeout")
    mine = [e for e in timeouts if e.get("returned") in back or e.get("departed") in back]
    early = sum(1 for e in mine if e.get("returned") in back and e.get("away_ms") == 0)
    who = ", ".join(f"{c} ({back[c]} restarts)" for c in looping)
    reason = (
        f"crash loop: {who} left without a LeaveGroup (the coordinator expired its session) "
        f"and came back with a new member id, {early} time{'s' * (early != 1)} before the "
        "old session had even expired: the process dies and is restarted; fix what kills "
        "it. Static membership would only hide the restarts shorter than its session timeout"
    )
    prerequisites = (
        "the consumer's own logs and exit status around those times (an OOM kill, a "
        "crash on startup, a failing liveness probe): kubectl describe pod / "
        "kubectl logs --previous"
    )
    return [_saving(CRASH, "fixing the crash loop", reason, prerequisites, mine)]


def _session(events: Sequence[Mapping[str, Any]], limits: Limits) -> list[Candidate]:
    timeouts = _incidents(events, "session_timeout")
    looping = _looping(events, limits)
    incidents = [
        e
        for e in timeouts
        if (e.get("returned") or e.get("departed"))
        and e.get("returned") not in looping
        and e.get("departed") not in looping
    ]
    returns = [e for e in incidents if e.get("returned") and _number(e.get("away_ms"))]
    if not returns:
        return []
    stall_ms = max(e["away_ms"] for e in returns)
    proposed = min(
        MAX_SESSION_MS,
        max(60_000, math.ceil((DEFAULT_SESSION_MS + stall_ms) / ROUND_MS) * ROUND_MS),
    )
    reason = (
        f"session timeouts: {len(returns)} expired member{'s' * (len(returns) != 1)} came back "
        f"with a new member id, the last after {stall_ms / 1000:.0f} s: they stalled past "
        f"session.timeout.ms (long GC pauses, CPU throttling, a blocked heartbeat thread); "
        f"session.timeout.ms={proposed} keeps a member through a stall that long"
    )
    prerequisites = (
        f"every consumer with session.timeout.ms={proposed} and heartbeat.interval.ms="
        f"{proposed // 3 // 1000 * 1000} (a third of it or less); the brokers' "
        f"group.max.session.timeout.ms (default {MAX_SESSION_MS}) must allow it; the value "
        f"assumes today's is the {DEFAULT_SESSION_MS} ms default (10000 before Kafka 3.0): add "
        "the difference if it is set higher. A longer timeout also finds dead members later"
    )
    title = f"session.timeout.ms={proposed}"
    return [_saving(CONFIG, title, reason, prerequisites, incidents)]


def _poll(events: Sequence[Mapping[str, Any]]) -> list[Candidate]:
    leaves = _incidents(events, "poll_timeout")
    if not leaves:
        return []
    aways = [e["away_ms"] for e in leaves if _number(e.get("away_ms"))]
    stall = f"; the consumer came back {max(aways) / 60000:.0f} min after leaving" if aways else ""
    reason = (
        f"poll timeouts: {len(leaves)} rebalance{'s' * (len(leaves) != 1)} of members that "
        f"left because max.poll.interval.ms passed between two polls{stall}: processing a "
        "poll's records takes longer than the interval allows"
    )
    prerequisites = (
        f"raise max.poll.interval.ms above the longest processing of one poll (default "
        f"{DEFAULT_POLL_MS}), or lower max.poll.records (default 500) so a poll's records are "
        "processed in time; for the consumer protocol the rebalance timeout is also "
        "max.poll.interval.ms"
    )
    return [_saving(CONFIG, "a longer max.poll.interval.ms", reason, prerequisites, leaves)]


def _saving(
    kind: str, title: str, reason: str, prerequisites: str, saved: Sequence[Mapping]
) -> Candidate:
    seconds = [
        e["paused_partition_seconds"] for e in saved if _number(e.get("paused_partition_seconds"))
    ]
    partitions = [e["paused_partitions"] for e in saved if _number(e.get("paused_partitions"))]
    return Candidate(
        kind,
        title,
        reason,
        prerequisites,
        rebalances=len(saved),
        # Whole milliseconds, as every partition-second sum (rollups.seconds_sum).
        seconds=round(sum(round(s * 1000) for s in seconds) / 1000, 3) if seconds else None,
        partitions=int(sum(partitions)) if partitions else None,
    )


def _number(value: Any) -> TypeGuard[float]:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _count(value: Any) -> str:
    return "?" if not _number(value) else f"{int(value):,}"


def _clock(value: Any) -> str:
    return value.strftime("%H:%M") if hasattr(value, "strftime") else "?"
