"""Which classic groups can move to the consumer protocol (KIP-848), what holds the others
back, and in which wave each should go: the rules of `protocol_migration_plan`.

KIP-1274 retires the classic protocol (deprecated in 4.3, `group.protocol=consumer` the
default in 5.0, classic support removed in 6.0), so every classic group moves; the plan
orders the moves. Blockers (the group cannot move as it is):
- `custom_assignor`: the consumer protocol runs only the brokers' assignors (uniform,
  range); a client-side assignor other than Kafka's four cannot run there, and Kafka's
  coordinator refuses the online upgrade of a group whose assignment carries a custom
  assignor's user data ("Cannot upgrade classic group ... because an unsupported custom
  assignor is in use").
- `streams_application`: the assignor named `stream` is Kafka Streams'; such a group moves
  to the streams protocol (KIP-1071), not the consumer protocol.
- `brokers_pre_4_0`: the cluster's coordinator log is the pre-4.0 GroupCoordinator's
  (protocols.py); the consumer protocol needs 4.0 brokers.
- `assign_only`: no member joined the group all day and no generation was logged: its
  offsets are committed by consumers that assign() partitions themselves, and there is no
  membership to migrate (readiness `not_applicable`).
Cautions (the group can move; someone must check first):
- `static_membership`: under the consumer protocol a static member joining with a
  group.instance.id another member still holds is refused (UNRELEASED_INSTANCE_ID), where
  the classic protocol fenced the old member: a rolling deploy must stop a pod before its
  replacement starts.
- `assignor_unknown`: no state capture named the group's assignor.
Client versions are not in any capture (a broker logs no client software version at
INFO); the plan's prerequisites say what clients need, for every group alike.

Waves: 1 = ready and the replay of uniform pauses fewer partitions (or partition-seconds)
than what the group runs; 2 = ready with nothing to gain (it still has to move before 6.0);
3 = ready once its cautions are checked; none for blocked or not-applicable groups. Within
the fleet, groups are ranked by wave, then by paused partition-seconds saved, then by
paused partitions saved (most first).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

BUILT_IN_ASSIGNORS = frozenset({"range", "roundrobin", "sticky", "cooperative-sticky"})
STREAMS_ASSIGNOR = "stream"
TARGET_ASSIGNOR = "uniform"
READY, CHECKS, BLOCKED, NOT_APPLICABLE = "ready", "ready_with_checks", "blocked", "not_applicable"
PREREQUISITES = (
    "clients that run group.protocol=consumer (Apache Kafka clients 4.0+; other clients "
    "per their KIP-848 support); group.consumer.migration.policy allowing the upgrade "
    "(bidirectional or upgrade) for an online move"
)


@dataclass(frozen=True)
class GroupFacts:
    """What the day's tables say of one classic group."""

    cluster: str
    group_id: str
    declared_assignor: str | None
    brokers: str | None  # protocols.cluster_brokers: consumer_groups | classic_coordinator
    members: int  # most members in one capture of the day
    static_members: int  # distinct group.instance.ids captured
    rebalances: int
    generations_logged: int
    paused_partitions_now: int | None = None
    paused_partitions_uniform: int | None = None
    paused_seconds_now: float | None = None
    paused_seconds_uniform: float | None = None


@dataclass(frozen=True)
class Verdict:
    blockers: tuple[str, ...]
    cautions: tuple[str, ...]
    readiness: str
    paused_partitions_saved: int | None
    paused_seconds_saved: float | None
    wave: int | None
    reason: str


def blockers(declared_assignor: str | None, brokers: str | None, idle: bool) -> tuple[str, ...]:
    """What keeps a classic group from moving as it is (module docstring); `idle`: no
    member joined and no generation was logged all day."""
    found = []
    if declared_assignor == STREAMS_ASSIGNOR:
        found.append("streams_application")
    elif declared_assignor is not None and declared_assignor not in BUILT_IN_ASSIGNORS:
        found.append("custom_assignor")
    if brokers == "classic_coordinator":
        found.append("brokers_pre_4_0")
    if idle:
        found.append("assign_only")
    return tuple(found)


def verdict(g: GroupFacts) -> Verdict:
    """The group's blockers, cautions, readiness, savings and wave (module docstring)."""
    assignor = g.declared_assignor
    idle = g.members == 0 and g.generations_logged == 0 and g.rebalances == 0
    blocked = list(blockers(assignor, g.brokers, idle))
    cautions = []
    if g.static_members:
        cautions.append("static_membership")
    if assignor is None and not idle:
        cautions.append("assignor_unknown")
    now, uniform = g.paused_partitions_now, g.paused_partitions_uniform
    saved_partitions = None if now is None or uniform is None else now - uniform
    seconds, seconds_uniform = g.paused_seconds_now, g.paused_seconds_uniform
    # Both sums are whole milliseconds (rollups.seconds_sum): so is the difference.
    saved_seconds = (
        None if seconds is None or seconds_uniform is None else round(seconds - seconds_uniform, 3)
    )
    if idle:
        readiness = NOT_APPLICABLE
    elif blocked:
        readiness = BLOCKED
    elif cautions:
        readiness = CHECKS
    else:
        readiness = READY
    gains = (saved_partitions or 0) > 0 or (saved_seconds or 0) > 0
    wave = {READY: 1 if gains else 2, CHECKS: 3}.get(readiness)
    return Verdict(
        tuple(blocked),
        tuple(cautions),
        readiness,
        saved_partitions,
        saved_seconds,
        wave,
        _reason(g, blocked, cautions, saved_partitions, saved_seconds),
    )


def ranked(
    groups: Iterable[tuple[GroupFacts, Verdict]],
) -> list[tuple[GroupFacts, Verdict, int | None]]:
    """Each group with its place in the fleet's migration order (1 first; none when it
    has no wave): wave, then partition-seconds saved, then partitions saved, most first."""
    rows = list(groups)
    waved = sorted(
        (row for row in rows if row[1].wave is not None),
        key=lambda row: (
            row[1].wave,
            -(row[1].paused_seconds_saved or 0.0),
            -(row[1].paused_partitions_saved or 0),
            row[0].cluster,
            row[0].group_id,
        ),
    )
    place = {(g.cluster, g.group_id): rank for rank, (g, _) in enumerate(waved, start=1)}
    return [(g, v, place.get((g.cluster, g.group_id))) for g, v in rows]


BLOCKER_TEXT = {
    "custom_assignor": "its client-side assignor {assignor} cannot run under the consumer "
    "protocol (only the brokers' uniform and range do)",
    "streams_application": "a Kafka Streams application: it moves to the streams protocol "
    "(KIP-1071), not the consumer protocol",
    "brokers_pre_4_0": "its cluster's brokers run the pre-4.0 group coordinator",
    "assign_only": "no member joined all day: offsets committed through assign(), no "
    "membership to migrate",
}
CAUTION_TEXT = {
    "static_membership": "{static} static member(s): a replacement joining while its "
    "group.instance.id is still held is refused (UNRELEASED_INSTANCE_ID); stop a pod "
    "before its replacement starts",
    "assignor_unknown": "no state capture named its assignor: check it is one of Kafka's",
}


def _reason(
    g: GroupFacts,
    blockers: list[str],
    cautions: list[str],
    saved_partitions: int | None,
    saved_seconds: float | None,
) -> str:
    facts = {"assignor": g.declared_assignor, "static": g.static_members}
    parts = [BLOCKER_TEXT[b].format(**facts) for b in blockers]
    parts += [CAUTION_TEXT[c].format(**facts) for c in cautions]
    if "assign_only" not in blockers:
        parts.append(_effect(g, saved_partitions, saved_seconds))
    return "; ".join(parts)


def _effect(g: GroupFacts, saved_partitions: int | None, saved_seconds: float | None) -> str:
    if saved_partitions is None:
        return "no replayed rebalance today: uniform's effect unknown"
    now, then = g.paused_partitions_now, g.paused_partitions_uniform
    text = f"uniform would pause {then} partitions over today's rebalances where it pauses {now}"
    if saved_seconds:
        fewer = "fewer" if saved_seconds > 0 else "more"
        text += f" ({abs(saved_seconds):.0f} paused partition-seconds {fewer})"
    return text
