"""The member facts of a group's coordinator log: who joined, left, was expired or
fenced, and when (rebalance_events.py carries a member set forward through them).

Each is a member line (KIP-394's joins, static and KIP-848 joins, leaves, expiries,
fencings, the members a `removed dynamic members` set names) or a member a
generation's start reason names (`Adding new member`, `Removing member ... on
LeaveGroup`, `removing member ... on heartbeat expiration`, ``explicit `LeaveGroup`
request for (...)``); a member both name is one fact twice, harmless to apply twice. A
static member back under a new member id within its session timeout is a `rekey`: the
same member, no rebalance. A KIP-394 member is added at its first JoinGroup (`Dynamic
member with unknown member id joins ... Created a new member id`): its second one, which
makes it a member, is logged at DEBUG up to 3.9 (INFO from 4.0), and a pending member
that never sends it is removed by its own line (`Pending member ... has been removed
after session timeout expiration`). A KIP-848 static member that `temporarily left`
keeps its place; a static member's fenced request (a stale id) or refused join changes
nothing. A removal is an expiry (`expired`) when the coordinator removed the member
because no heartbeat came for its session timeout: the member had been silent since at
least that long before the line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet_rebalance.replay.generations import Generation
from fleet_rebalance.replay.log_causes import member_cause
from fleet_rebalance.vocabulary import Cause, MemberEvent

ADDS = (MemberEvent.PENDING, MemberEvent.JOINED, MemberEvent.STATIC_JOINED)
REMOVES = (MemberEvent.LEFT, MemberEvent.FAILED, MemberEvent.FENCED)
INSTANCE_IN_LINE = [
    re.compile(r"groupInstanceId=([^\s,]+)"),
    re.compile(r"with instance id (\S+?)(?: |\.$)"),
    re.compile(r"Adding new static member (\S+) to group"),
    re.compile(r"Static member (\S+) of group"),
]
# The old coordinator's static rejoin names the replaced id, not the new one.
REPLACED_OLD = re.compile(r"Replacing previously mapped member")
# Removals for a session timeout: a KIP-848 fencing's reason, a classic generation's.
SESSION_EXPIRED = re.compile(r"session expired")
HEARTBEAT_EXPIRATION = re.compile(r"on heartbeat expiration")


@dataclass(frozen=True)
class Change:
    """One member fact of the log: `add` or `remove` a member id at a time."""

    at: dt.datetime
    action: str
    member_id: str
    instance_id: str | None
    kind: str  # the cause the log gives it (scale_out, scale_in, session_timeout, ...)
    line: str
    expired: bool = False  # a removal for a session timeout (module docstring)


def member_changes(
    generations: Sequence[Generation], log_rows: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """Every member added or removed, in time order, from member lines and the members
    a generation's start reason names."""
    found: list[Change] = []
    for row in log_rows:
        member, event, reason = row.get("member_id"), row["event"], row.get("reason")
        if not member:
            continue
        if event in ADDS:
            instance = _instance_of(row["line"]) if event == MemberEvent.STATIC_JOINED else None
            found.append(
                Change(row["logged_at"], "add", member, instance, Cause.SCALE_OUT, row["line"])
            )
        elif event == MemberEvent.STATIC_REJOINED and not REPLACED_OLD.search(row["line"]):
            instance = _instance_of(row["line"])
            if instance:  # the same member under a new id: no rebalance
                found.append(Change(row["logged_at"], "rekey", member, instance, "", row["line"]))
        elif event in REMOVES and _removes(event, reason):
            kind = member_cause(event, reason)
            expired = (event == MemberEvent.FAILED and not reason) or (
                event == MemberEvent.FENCED and SESSION_EXPIRED.search(reason or "") is not None
            )
            found.append(
                Change(row["logged_at"], "remove", member, None, kind, row["line"], expired)
            )
    for gen in generations:
        reading = gen.reading
        if reading.action is None or gen.started_at is None:
            continue
        action = "add" if reading.action == "add" else "remove"
        kind, _ = gen.cause() if action == "remove" else (Cause.SCALE_OUT, None)
        expired = HEARTBEAT_EXPIRATION.search(gen.start_reason or "") is not None
        line = gen.start_line or ""
        for member in reading.members:
            found.append(
                Change(gen.started_at, action, member, reading.instance, kind, line, expired)
            )
    return sorted(found, key=lambda c: (c.at, c.action == "add", c.member_id))


def _instance_of(line: str) -> str | None:
    """The group.instance.id a static member line names."""
    found = next((m for p in INSTANCE_IN_LINE if (m := p.search(line))), None)
    return found.group(1) if found else None


def _removes(event: str, reason: str | None) -> bool:
    """Does this member line take the member out of the group (module docstring)?"""
    if event == MemberEvent.LEFT:
        return reason != "temporarily"
    if event == MemberEvent.FENCED:
        return reason is not None and " " in reason and "instance id is" not in reason
    return True
