"""One group's generations from its coordinator_events rows, with what started each.

The one place log lines become generations: the replay reads them (replay/rebalance_events.py)
and rebalance_timeline is their rows (metrics/timeline.py). "Preparing to rebalance ...
old generation g" starts generation g + 1 and "Stabilized group ... generation g + 1"
ends it, or "Group ... with generation g + 1 is now empty" (GroupCoordinator.onCompleteJoin
logs one or the other when the join phase completes: with no member left the group goes
Empty instead of syncing); a KIP-848 "Bumped group epoch to e" starts epoch e and
"Computed a new target assignment for epoch e" ends it. The first line of each wins
(two coordinators after a failover log the same generation, or the same instant: then
the line's text orders them); its coordinator is that line's broker.

Member lines (joined, left, failed, fenced) belong to the first generation whose span
holds them: from MEMBER_LEAD before its start (the new coordinator logs a leave, and a
KIP-848 group its member changes, just before the start line) to its end (classic
members join and are dropped while the group prepares). A member line outside every
span (a static member rejoining during Stable) belongs to none, but one: the old
coordinator logs a LeaveGroup's `has left` line after removing the member, and when
that removal completes the join, after the generation's `Stabilized ... with n members`
too (GroupCoordinator.handleLeaveGroup: removeMemberAndUpdateGroup, then the info line).
A leave line within LEAVE_TRAIL after an end whose member count it is missing from
(the count before, plus the joins, less the leaves, is more than the end line's n)
belongs to that generation.

A cooperative group's second round (KIP-429: the members that revoked partitions rejoin
at once, client reason `need to revoke partitions and re-join`) is a generation of its
own in the log but part of the rebalance before it: `follow_up` says so. Clients that
send no reason (librdkafka, Java before 3.2) show it as a known member's rejoin during
Stable (`Updating metadata for member $m during Stable`, `Leader $m re-joining group
during Stable`) within FOLLOW_UP_WINDOW of the generation before it stabilizing (the
lab's librdkafka group: 157 ms).

A generation's cause is its start reason's (log_causes.reason_cause); a client reason on the
leave line of a member the reason names refines it (the new coordinator's LeaveGroup
reason carries none). Without a reason that says anything (KIP-848, 2.0 and before) the
member lines decide, the most telling first (CAUSE_ORDER). Its evidence is the line
that decided.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from fleet_rebalance.replay.log_causes import CLIENT_REASON, Reading, member_cause, reason_cause
from fleet_rebalance.vocabulary import Cause, GroupType, MemberEvent

MEMBER_LEAD = dt.timedelta(seconds=10)
LEAVE_TRAIL = dt.timedelta(seconds=1)
STARTS = ("prepare_rebalance", "epoch_bumped")
ENDS = ("stabilized", "target_assignment", "group_empty")
MEMBER_EVENTS = (
    MemberEvent.PENDING,
    MemberEvent.JOINED,
    MemberEvent.STATIC_JOINED,
    MemberEvent.STATIC_REJOINED,
    MemberEvent.LEFT,
    MemberEvent.FAILED,
    MemberEvent.FENCED,
)
JOINS = (
    MemberEvent.PENDING,
    MemberEvent.JOINED,
    MemberEvent.STATIC_JOINED,
    MemberEvent.STATIC_REJOINED,
)
CAUSE_ORDER = (
    Cause.POLL_TIMEOUT,
    Cause.SESSION_TIMEOUT,
    Cause.SUBSCRIPTION_CHANGED,
    Cause.PARTITIONS_ADDED,
    Cause.SCALE_IN,
    Cause.SCALE_OUT,
    Cause.DEPLOY_RESTART,
    Cause.UNKNOWN,
)
REVOKE_ROUND = "need to revoke partitions and re-join"
FOLLOW_UP_WINDOW = dt.timedelta(seconds=3)
# A known member's JoinGroup during Stable, as both coordinators word its reason.
STABLE_REJOIN = re.compile(
    r"^(?:Updating metadata for member \S+|Leader \S+ re-joining group) during Stable"
)
SILENT_CLIENT = ("", "not provided")
MEMBER_COUNT = re.compile(r" with (\d+) members\.?(?: \(|$)")


@dataclass(frozen=True)
class MemberLine:
    at: dt.datetime
    event: str
    member_id: str | None
    reason: str | None
    line: str


@dataclass
class Generation:
    generation: int
    protocol: str  # classic | consumer
    started_at: dt.datetime | None = None
    stabilized_at: dt.datetime | None = None
    start_reason: str | None = None
    start_line: str | None = None
    end_line: str | None = None
    members: list[MemberLine] = field(default_factory=list)
    # Members the end line says the generation has ("Stabilized ... with n members"; 0
    # for "is now empty"); None where the line does not say (KIP-848, before 2.8).
    member_count: int | None = None
    # When the generation before it stabilized (None: not logged).
    previous_end: dt.datetime | None = None
    # The member_count of the generation before it (None: not logged).
    previous_count: int | None = None
    broker: int | None = None  # the coordinator's: the start line's, else the end line's
    # The member whose SyncGroup brought the assignment (`Assignment received from leader
    # $m ... for generation $g`, 3.0+): the client that ran the assignor.
    leader: str | None = None

    @property
    def at(self) -> dt.datetime:
        """When it happened: its start, else (the log begins mid-rebalance) its end."""
        return self.started_at or self.stabilized_at  # type: ignore[return-value]

    @property
    def ended(self) -> dt.datetime:
        """When its member set was settled: its end, else (the log ends first) its start."""
        return self.stabilized_at or self.started_at  # type: ignore[return-value]

    @property
    def duration_ms(self) -> int | None:
        if self.started_at is None or self.stabilized_at is None:
            return None
        return (self.stabilized_at - self.started_at) // dt.timedelta(milliseconds=1)

    @property
    def follow_up(self) -> bool:
        """A cooperative group's revocation round: part of the rebalance before it."""
        return is_follow_up(self.start_reason, self.started_at, self.previous_end)

    @cached_property
    def reading(self) -> Reading:
        """The start reason read (once: the matcher asks for it per candidate event)."""
        return reason_cause(self.start_reason)

    @property
    def added(self) -> set[str]:
        """Member ids this generation took in: named by its reason or by a join line."""
        reading = self.reading
        named = set(reading.members) if reading.action == "add" else set()
        return named | {m.member_id for m in self.members if m.event in JOINS[1:] and m.member_id}

    @property
    def removed(self) -> set[str]:
        reading = self.reading
        named = set(reading.members) if reading.action == "remove" else set()
        return named | {
            m.member_id
            for m in self.members
            if m.event in (MemberEvent.LEFT, MemberEvent.FAILED, MemberEvent.FENCED) and m.member_id
        }

    def member_summary(self) -> str | None:
        """Its member lines counted by event ("member_left x2, member_joined"), for a
        generation whose start line gives no reason (KIP-848); None without any."""
        counts: dict[str, int] = {}
        for m in self.members:
            if m.event != MemberEvent.PENDING:
                counts[m.event] = counts.get(m.event, 0) + 1
        labels = sorted(e if n == 1 else f"{e} x{n}" for e, n in counts.items())
        return ", ".join(labels) or None

    def cause(self) -> tuple[str, str | None]:
        """(cause, the line that decided it) from the log alone."""
        reading = self.reading
        if reading.cause == Cause.SCALE_IN:  # a leave line's client reason may say why
            for m in self.members:
                if m.event == MemberEvent.LEFT and m.member_id in reading.members:
                    told = member_cause(m.event, m.reason)
                    if told not in (Cause.SCALE_IN, Cause.UNKNOWN):
                        return told, m.line
        if reading.cause != Cause.UNKNOWN:
            return reading.cause, self.start_line
        causes = [(member_cause(m.event, m.reason), m) for m in self.members]
        causes = [(c, m) for c, m in causes if m.event != MemberEvent.PENDING]
        if causes:
            cause, line = min(causes, key=lambda cm: CAUSE_ORDER.index(cm[0]))
            return cause, line.line
        return Cause.UNKNOWN, self.start_line or self.end_line


def is_follow_up(
    reason: str | None, started_at: dt.datetime | None, previous_end: dt.datetime | None
) -> bool:
    """The module docstring's rule for a cooperative revocation round."""
    coordinator, _, client = (reason or "").partition(CLIENT_REASON)
    if client.startswith(REVOKE_ROUND):
        return True
    return (
        client.strip().rstrip(".") in SILENT_CLIENT
        and STABLE_REJOIN.match(coordinator) is not None
        and started_at is not None
        and previous_end is not None
        and started_at - previous_end <= FOLLOW_UP_WINDOW
    )


def group_generations(rows: Iterable[Mapping[str, Any]]) -> list[Generation]:
    """A group's generations in time order from its coordinator_events rows (dicts with
    logged_at, event, generation, member_id, reason, line; broker optional)."""
    ordered = sorted(rows, key=lambda r: (r["logged_at"], r.get("line") or ""))
    by_number: dict[int, Generation] = {}
    members: list[MemberLine] = []
    for row in ordered:
        event, number = row["event"], row.get("generation")
        if event in STARTS and number is not None:
            number = number + 1 if event == "prepare_rebalance" else number
            protocol = GroupType.CLASSIC if event == "prepare_rebalance" else GroupType.CONSUMER
            gen = by_number.setdefault(number, Generation(number, protocol))
            if gen.started_at is None:
                gen.started_at, gen.start_reason = row["logged_at"], row.get("reason")
                gen.start_line, gen.protocol = row.get("line"), protocol
                gen.broker = row.get("broker")
        elif event in ENDS and number is not None:
            protocol = GroupType.CONSUMER if event == "target_assignment" else GroupType.CLASSIC
            gen = by_number.setdefault(number, Generation(number, protocol))
            if gen.stabilized_at is None:
                gen.stabilized_at, gen.end_line = row["logged_at"], row.get("line")
                gen.member_count = _member_count(event, row.get("line"))
                if gen.started_at is None:
                    gen.broker = row.get("broker")
        elif event == "assignment_received" and number in by_number:
            gen = by_number[number]  # it follows the generation's Stabilized line
            gen.leader = gen.leader or row.get("member_id")
        elif event in MEMBER_EVENTS:
            members.append(
                MemberLine(
                    row["logged_at"], event, row.get("member_id"), row.get("reason"), row["line"]
                )
            )
    generations = sorted(by_number.values(), key=lambda g: (g.at, g.generation))
    for gen in generations:
        before = by_number.get(gen.generation - 1)
        gen.previous_end = before.stabilized_at if before is not None else None
        gen.previous_count = before.member_count if before is not None else None
    for member in members:
        owner = _trailed(member, generations) or next(
            (g for g in generations if g.at - MEMBER_LEAD <= member.at <= g.ended), None
        )
        if owner is not None:
            owner.members.append(member)
    return generations


def _trailed(member: MemberLine, generations: list[Generation]) -> Generation | None:
    """The generation a leave line trails (the module docstring's exception), if any."""
    if member.event != MemberEvent.LEFT or any(g.at <= member.at <= g.ended for g in generations):
        return None
    for gen in generations:
        end, count, before = gen.stabilized_at, gen.member_count, gen.previous_count
        if end is None or count is None or before is None:
            continue
        trails = end < member.at <= end + LEAVE_TRAIL and member.member_id not in gen.removed
        if trails and before + len(gen.added) - len(gen.removed) > count:
            return gen
    return None


def _member_count(event: str, line: str | None) -> int | None:
    if event == "group_empty":
        return 0
    found = MEMBER_COUNT.search(line or "") if event == "stabilized" else None
    return int(found.group(1)) if found else None
