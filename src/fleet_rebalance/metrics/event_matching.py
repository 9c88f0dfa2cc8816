"""Each replayed rebalance event of a group, matched to the generation its coordinator
log shows for it, and its cause.

An event is found at the first usable capture after a rebalance, so the rebalance began
after the previous usable capture (`previous_at`, the start of the event's window) and
before the event's capture (`at`), give or take CLOCK_SLACK: capture times are the
minute a script ran, log times the broker's clock. A partition count is only as new as
the last topics capture, so a partitions_added or mixed event's window opens at the
group's previous event instead (a day back for its first). Of the generations in the
window not matched to an earlier event, the one whose member change agrees with the
event's best is matched:
- agreeing ids first: members the generation took in that the event shows joining, and
  members it removed that the event shows leaving (member ids are the same in captures
  and logs);
- a generation that names no member (KIP-848 epochs without member lines, 2.0-and-older
  reasons) agrees when its cause fits the event's trigger (COMPATIBLE); a leader rejoin,
  metadata change or unknown fits any trigger, after every fitting specific cause;
- a generation naming only members the event does not show changing is another change
  (one the captures missed) and never matches;
- ties go to the latest generation in the window (the one closest to the capture that
  showed the change), those in the slack after the capture last.
Several generations between two captures (a rolling deploy, a crash and its
replacement) are one event: the others match no event and stay in rebalance_timeline,
where a left anti join on (cluster, group_id, generation) with rebalance_causes lists
them (README, "Rebalance causes").

The cause is the matched generation's (generations.py), with deploy_restart decided by
the captures, as DESIGN.md defines it: a member replaced by a new member id on the same
host, the same client id, or (a static member restarting past its session timeout) the
same group.instance.id (`replacements`). A scale_in or scale_out whose member is so
replaced is a deploy_restart, and so is a session_timeout of a static member whose
instance id came back. An event no generation matches, or whose generation's log says
nothing (`unknown`), takes its cause from the captures (capture_cause), and its
evidence says which capture fact decided.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fleet_rebalance.metrics.generations import Generation

CLOCK_SLACK = dt.timedelta(seconds=60)
NO_PREVIOUS = dt.timedelta(days=1)  # a window for an event without a previous capture
MEMBERSHIP = ("member_joined", "member_left", "members_replaced", "mixed")
# Partition counts come from topics captures, often hours apart: a partitions_added (or
# mixed) event may show a change from long before its previous members capture.
TOPIC_TRIGGERS = ("partitions_added", "mixed")
COMPATIBLE = {
    "scale_out": ("member_joined", "members_replaced", "mixed"),
    "scale_in": ("member_left", "members_replaced", "mixed"),
    "session_timeout": ("member_left", "members_replaced", "mixed"),
    "poll_timeout": ("member_left", "members_replaced", "mixed"),
    "deploy_restart": MEMBERSHIP,
    "partitions_added": ("partitions_added", "mixed"),
    "subscription_changed": ("subscription_changed", "mixed"),
}
GENERIC = ("leader_rejoin", "metadata_change", "unknown")
SHOWN_IDS = 3  # member ids an evidence text lists before "and N more"
# The attributes that make a new member id the same consumer, most telling first.
CONTINUITY = (("instance_id", "instance id"), ("host", "host"), ("client_id", "client id"))


@dataclass(frozen=True)
class Member:
    member_id: str
    host: str | None = None
    client_id: str | None = None
    instance_id: str | None = None


@dataclass(frozen=True)
class Event:
    seq: int
    at: dt.datetime
    previous_at: dt.datetime | None
    trigger: str
    before: tuple[Member, ...]
    after: tuple[Member, ...]

    @property
    def joined(self) -> list[Member]:
        old = {m.member_id for m in self.before}
        return sorted((m for m in self.after if m.member_id not in old), key=_id)

    @property
    def left(self) -> list[Member]:
        new = {m.member_id for m in self.after}
        return sorted((m for m in self.before if m.member_id not in new), key=_id)


@dataclass(frozen=True)
class Replacement:
    old: Member
    new: Member
    by: str  # "instance id", "host" or "client id"


@dataclass(frozen=True)
class EventCause:
    seq: int
    at: dt.datetime
    previous_at: dt.datetime | None
    trigger: str
    cause: str
    evidence: str
    generation: int | None
    duration_ms: int | None
    replacements: tuple[Replacement, ...]
    # Every member that joined or left is one of `replacements`: nothing else changed
    # in the group's membership.
    only_replacements: bool


def replacements(event: Event) -> list[Replacement]:
    """Left members paired one to one with joined members of the same instance id,
    else host, else client id (ids in sorted order: deterministic)."""
    left, joined = event.left, event.joined
    pairs: list[Replacement] = []
    for attribute, label in CONTINUITY:
        for old in list(left):
            value = _known(getattr(old, attribute))
            new = next(
                (j for j in joined if value and _known(getattr(j, attribute)) == value), None
            )
            if new is not None:
                pairs.append(Replacement(old, new, label))
                left.remove(old)
                joined.remove(new)
    return sorted(pairs, key=lambda p: p.old.member_id)


def match_events(events: Iterable[Event], generations: Sequence[Generation]) -> list[EventCause]:
    """Every event's cause, in event order; each generation matches at most one event."""
    taken: set[int] = set()
    causes = []
    earlier: dt.datetime | None = None
    for event in sorted(events, key=lambda e: e.seq):
        opens = event.previous_at
        if event.trigger in TOPIC_TRIGGERS or opens is None:
            opens = earlier or event.at - NO_PREVIOUS
        generation = _best(event, [g for g in generations if id(g) not in taken], opens)
        if generation is not None:
            taken.add(id(generation))
        causes.append(_decide(event, generation))
        earlier = event.at
    return causes


def _best(event: Event, generations: list[Generation], opens: dt.datetime) -> Generation | None:
    start, end = opens - CLOCK_SLACK, event.at + CLOCK_SLACK
    joined = {m.member_id for m in event.joined}
    left = {m.member_id for m in event.left}
    scored = []
    for g in generations:
        if not start < g.at <= end:
            continue
        overlap = len(g.added & joined) + len(g.removed & left)
        named = g.added | g.removed
        cause = g.cause()[0]
        fits = event.trigger in COMPATIBLE.get(cause, ())
        # Latest first, within the window proper before its slack.
        when = (g.at > event.at, event.at - g.at if g.at <= event.at else g.at - event.at)
        if overlap:
            scored.append(((-overlap, 0, *when), g))
        elif not named and (fits or cause in GENERIC):
            scored.append(((0, 0 if fits else 1, *when), g))
    return min(scored, key=lambda s: s[0])[1] if scored else None


def _decide(event: Event, generation: Generation | None) -> EventCause:
    pairs = replacements(event)
    only = bool(pairs) and len(pairs) == len(event.left) == len(event.joined)
    number = duration = None
    if generation is None:
        cause, evidence = capture_cause(event, pairs)
    else:
        number, duration = generation.generation, generation.duration_ms
        cause, line = generation.cause()
        evidence = line or ""
        named = generation.added | generation.removed
        replaced = {p.old.member_id for p in pairs} | {p.new.member_id for p in pairs}
        static = {p.old.member_id for p in pairs if p.by == "instance id"}
        moved = cause in ("scale_in", "scale_out") and pairs and (not named or named & replaced)
        restarted = cause == "session_timeout" and generation.removed & static
        if moved or restarted:
            cause, evidence = "deploy_restart", f"{evidence} | {_replaced_text(event, pairs)}"
        elif cause == "unknown":
            cause, fact = capture_cause(event, pairs)
            evidence = f"{evidence} | {fact}" if evidence else fact
    return EventCause(
        event.seq,
        event.at,
        event.previous_at,
        event.trigger,
        cause,
        evidence,
        number,
        duration,
        tuple(pairs),
        only,
    )


def capture_cause(event: Event, pairs: Sequence[Replacement] = ()) -> tuple[str, str]:
    """(cause, the capture fact that decided it) from the members captures alone."""
    joined, left = event.joined, event.left
    when = f"members capture {_time(event.at)}"
    if pairs:
        return "deploy_restart", _replaced_text(event, pairs)
    if joined or left:
        sizes = f"({len(event.before)} -> {len(event.after)} members)"
        if joined and left:
            text = f"{when}: {_ids(left)} left and {_ids(joined)} joined {sizes}"
            text += ", no shared host, client id or instance id"
        else:
            text = f"{when}: {_ids(joined or left)} {'joined' if joined else 'left'} {sizes}"
        if len(joined) > len(left):
            return "scale_out", text
        if len(left) > len(joined):
            return "scale_in", text
        return "unknown", text
    if event.trigger in ("member_joined", "member_left"):  # members not captured
        return ("scale_out" if event.trigger == "member_joined" else "scale_in"), (
            f"{when}: trigger {event.trigger}"
        )
    if event.trigger == "partitions_added":
        return "partitions_added", f"{when}: a subscribed topic has more partitions"
    if event.trigger in ("subscription_changed", "mixed"):
        return "subscription_changed", f"{when}: a member's subscription changed"
    return "unknown", f"{when}: trigger {event.trigger}"


def _replaced_text(event: Event, pairs: Sequence[Replacement]) -> str:
    shown = "; ".join(
        f"{p.old.member_id} replaced by {p.new.member_id} with {p.by} "
        f"{getattr(p.new, _attribute(p.by))}"
        for p in pairs[:SHOWN_IDS]
    )
    more = f"; and {len(pairs) - SHOWN_IDS} more" if len(pairs) > SHOWN_IDS else ""
    return f"members capture {_time(event.at)}: {shown}{more}"


def _attribute(label: str) -> str:
    return next(a for a, name in CONTINUITY if name == label)


def _ids(members: Sequence[Member]) -> str:
    ids = ", ".join(m.member_id for m in members[:SHOWN_IDS])
    return ids + (f" and {len(members) - SHOWN_IDS} more" if len(members) > SHOWN_IDS else "")


def _time(at: dt.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ" if at.second else "%Y-%m-%dT%H:%MZ")


def _known(value: str | None) -> str | None:
    """A capture value that can pair members: `-` is Kafka's missing value."""
    return value if value and value != "-" else None


def _id(member: Member) -> str:
    return member.member_id
