"""Which member ids are one consumer, and when a consumer that left came back.

A classic member id is `<client.id or group.instance.id>-<UUID>` (FORMATS 1.1), so a
member the captures never saw still has a client id; a KIP-848 member id is a bare Uuid
and tells nothing. The captures add what they show of each member id: its
group.instance.id, host and client id.

A departure (a member removed by a LeaveGroup, a session expiry, a poll timeout, a
fencing) and an arrival (a member added) are one consumer coming back when they share an
identity: the same group.instance.id, else the same host, else the same client id (a
Deployment's pods may all show `consumer-<group>-1`, so the host is preferred where it is
known). An attribute two members of one capture share tells nobody apart (consumers on
one machine share its host; a Deployment's pods may share a client id): it is not
matched on in that group (`shared`). Each arrival takes the latest unreturned departure of
its identity before it, or failing that the first one that follows it closely (a
restarted process may join before its dead predecessor's session expired).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CLASSIC_ID = re.compile(
    r"^(?P<prefix>.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.ASCII
)
UNKNOWN = ("", "-")  # Kafka's missing value in the captures


@dataclass(frozen=True)
class Identity:
    instance_id: str | None = None
    host: str | None = None
    client_id: str | None = None

    def attributes(self, shared: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
        """(attribute, value) pairs to match on, most telling first, but the `shared` ones."""
        return [
            (name, value)
            for name, value in (
                ("instance id", self.instance_id),
                ("host", self.host),
                ("client id", self.client_id),
            )
            if value and value not in UNKNOWN and name not in shared
        ]

    def label(self) -> str:
        """How a person would name the consumer: its instance id, client id or host."""
        return self.instance_id or self.client_id or self.host or "?"


def derived_client_id(member_id: str | None) -> str | None:
    """The client.id (or group.instance.id) a classic member id starts with."""
    found = CLASSIC_ID.match(member_id or "")
    return found.group("prefix") if found else None


def shared_attributes(captures: Iterable[Iterable[Identity]]) -> frozenset[str]:
    """The attributes two members of one capture have the same value of."""
    shared: set[str] = set()
    for members in captures:
        seen: set[tuple[str, str]] = set()
        for identity in members:
            for pair in identity.attributes():
                if pair in seen:
                    shared.add(pair[0])
                seen.add(pair)
    return frozenset(shared)


def identity_of(member_id: str, known: Mapping[str, Identity]) -> Identity:
    seen = known.get(member_id)
    if seen is not None and seen.client_id:
        return seen
    client = derived_client_id(member_id)
    if seen is not None:
        return Identity(seen.instance_id, seen.host, client)
    return Identity(client_id=client)


@dataclass(frozen=True)
class Departure:
    at: dt.datetime
    member_id: str
    kind: str  # the cause the log gives the removal: scale_in, session_timeout, ...
    # How long before `at` the consumer fell silent: an expired member's session timeout
    # (no heartbeat for that long), zero for a member that left (a LeaveGroup).
    silent: dt.timedelta = dt.timedelta(0)


@dataclass(frozen=True)
class Return:
    """An arrival that is a departed consumer coming back."""

    departure: Departure
    arrival_at: dt.datetime
    member_id: str
    by: str  # "instance id", "host" or "client id"
    identity: Identity

    @property
    def away(self) -> dt.timedelta:
        """From when the departed member fell silent (an expiry's line less its session
        timeout) to the arrival; zero for an arrival before even that."""
        silent_since = self.departure.at - self.departure.silent
        return max(self.arrival_at - silent_since, dt.timedelta(0))


def pair_returns(
    departures: Iterable[Departure],
    arrivals: Iterable[tuple[dt.datetime, str]],
    known: Mapping[str, Identity],
    window: dt.timedelta,
    shared: frozenset[str] = frozenset(),
    first_seen: Mapping[str, dt.datetime] | None = None,
) -> dict[str, Return]:
    """arrival member id -> its Return, for arrivals that are a departed consumer back.
    A member's first departure and first arrival count (a reason and a member line may
    both name it). An arrival takes the latest departure of its identity within
    `window` before it, else the first within `window` after it of a member that was in
    the group before it arrived (a restarted process that joined before its dead
    predecessor's session expired), else the latest before it whenever it was. A member
    the log never saw arrive arrived when a capture first showed it (`first_seen`; a
    static member rejoining under a new id, whose id the old coordinator's line does not
    give), else was there from the start."""
    first_departures: dict[str, Departure] = {}
    for d in sorted(departures, key=lambda d: d.at):
        first_departures.setdefault(d.member_id, d)
    open_departures = sorted(first_departures.values(), key=lambda d: (d.at, d.member_id))
    first_arrivals: dict[str, dt.datetime] = dict(first_seen or {})
    logged: dict[str, dt.datetime] = {}
    for at, member in sorted(arrivals):
        logged.setdefault(member, at)
    first_arrivals.update(logged)
    found: dict[str, Return] = {}
    for member, at in sorted(logged.items(), key=lambda kv: (kv[1], kv[0])):
        who = identity_of(member, known)
        earlier = [
            d for d in open_departures if d.at <= at or _arrived_before(d, at, first_arrivals)
        ]
        match = _departed(who, at, member, earlier, known, window, shared)
        if match is None:
            continue
        departure, by = match
        open_departures.remove(departure)
        found[member] = Return(departure, at, member, by, who)
    return found


def _arrived_before(d: Departure, at: dt.datetime, arrivals: Mapping[str, dt.datetime]) -> bool:
    """The departed member was in the group before `at` (a member the log never saw
    arrive was there from the start)."""
    arrived = arrivals.get(d.member_id)
    return arrived is None or arrived < at


def _departed(
    who: Identity,
    at: dt.datetime,
    member: str,
    departures: list[Departure],
    known: Mapping[str, Identity],
    window: dt.timedelta,
    shared: frozenset[str],
) -> tuple[Departure, str] | None:
    for by, value in who.attributes(shared):
        same = [
            d
            for d in departures
            if d.member_id != member
            and dict(identity_of(d.member_id, known).attributes()).get(by) == value
        ]
        before = [d for d in same if d.at <= at]
        after = [d for d in same if at < d.at <= at + window]
        if before and at - before[-1].at <= window:
            return before[-1], by
        if after:
            return after[0], by
        if before:
            return before[-1], by
    return None
