"""The cause of a rebalance the captures saw and no coordinator log covers.

Two members captures some minutes apart show members joining and leaving; a member
replaced by a new member id on the same host, the same client id, or (a static member
back past its session timeout) the same group.instance.id is a restart
(`deploy_restart`, DESIGN.md); other joins are a scale_out, other leaves a scale_in, and
a change of partitions or subscriptions names itself. The evidence says which capture
fact decided.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from fleet_rebalance.vocabulary import Cause, MemberEvent

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


def capture_cause(event: Event, pairs: Sequence[Replacement] = ()) -> tuple[str, str]:
    """(cause, the capture fact that decided it) from the members captures alone."""
    joined, left = event.joined, event.left
    when = f"members capture {_time(event.at)}"
    if pairs:
        return Cause.DEPLOY_RESTART, _replaced_text(event, pairs)
    if joined or left:
        sizes = f"({len(event.before)} -> {len(event.after)} members)"
        if joined and left:
            text = f"{when}: {_ids(left)} left and {_ids(joined)} joined {sizes}"
            text += ", no shared host, client id or instance id"
        else:
            text = f"{when}: {_ids(joined or left)} {'joined' if joined else 'left'} {sizes}"
        if len(joined) > len(left):
            return Cause.SCALE_OUT, text
        if len(left) > len(joined):
            return Cause.SCALE_IN, text
        return Cause.UNKNOWN, text
    if event.trigger in (MemberEvent.JOINED, MemberEvent.LEFT):  # members not captured
        return (Cause.SCALE_OUT if event.trigger == MemberEvent.JOINED else Cause.SCALE_IN), (
            f"{when}: trigger {event.trigger}"
        )
    if event.trigger == Cause.PARTITIONS_ADDED:
        return Cause.PARTITIONS_ADDED, f"{when}: a subscribed topic has more partitions"
    if event.trigger in (Cause.SUBSCRIPTION_CHANGED, "mixed"):
        return Cause.SUBSCRIPTION_CHANGED, f"{when}: a member's subscription changed"
    return Cause.UNKNOWN, f"{when}: trigger {event.trigger}"


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
