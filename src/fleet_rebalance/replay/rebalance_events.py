"""A group's rebalances of one day: every generation its coordinator logged, and the
captures' changes where no log covers them (DESIGN.md, rebalance_events).

The day is cut into periods between consecutive usable captures that differ (a
mid-rebalance capture is no boundary, a capture repeating the one before is none of its
own, nor is one that shows only new partitions or subscriptions in an hour the logs
cover with no generation since: the group has not rebalanced onto them yet; the previous
date's last capture opens the first period). A capture is stamped when it started and its
views are taken seconds later (a JVM per tool): a generation that ended within
`capture_skew` after the stamp is before the capture when the capture shows its member
change (a member it took in is listed, none it let go is). A 3.8/3.9 capture that
straddles a cooperative group's two rounds can leave a member's topic-less assignment
unresolved (its offsets view, taken first, shows the partition ownerless): that member's
assignment is the next capture's where the next lists the same members and the logs
cover the time between with no generation in it. In a period:
- each generation that ended in it, in an hour the cluster's coordinator logs cover
  (Coverage), is one event (a cooperative group's revocation round is part of the
  generation before it: one rebalance; where that round also took a member in or let one
  go, the generations before it are the event's `steps`, each replayed with its own
  member set; one without a revocation round of its own, the next rebalance started
  within FOLLOW_UP_WINDOW of its end, is one round of the assignor, `single_round`);
- its member set is the period's first capture's, carried forward through the log's
  member evidence in time order (member_changes.py). A static member back under its
  group.instance.id is the same member (no event). A member never captured has the
  client id its member id starts with and the group's subscription;
- subscriptions and partition counts are the first capture's until a generation the
  log says the topics started (a metadata change, a leader's rejoin, an epoch bump that
  names no member), and the closing capture's from then on;
- the last generation is the one the closing capture shows: that capture's members and
  assignment win (`both`); a reconstruction that disagrees is kept in
  `capture_difference`, as is a member count the log's `Stabilized` line contradicts;
- a change the closing capture shows where the logs do not cover the time it can have
  happened in (since the last capture still showing the period's first state) is the
  captures': one event when the closing capture differs from the last logged state
  (events.classify), as before logs were read; so is a change the captures show in a
  covered stretch where the log has no generation (the group's coordinator log is
  missing: `capture_difference` says so).

Causes: the generation's logged reason (generations.py), then:
- a consumer that comes back (identities.py) within `rejoin_window` makes both its
  departure and its return one incident, named for how it left: a clean LeaveGroup (or
  a static member back past its session timeout) is `deploy_restart`, an expiry
  `session_timeout`, a poll-timeout leave `poll_timeout`;
- a reason that names no cause (a leader's rejoin, a metadata update, none at all) takes
  the topic change the event shows (partitions_added, subscription_changed);
- a capture event takes the captures' cause (capture_causes.py).
An event is avoidable with static membership when each member it changed left and came
back within `static_timeout` (a capture event: when its capture window shows that).
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.replay import capture_causes
from fleet_rebalance.replay.events import (
    BOTH,
    CAPTURES,
    LOGS,
    NO_CHANGE,
    RebalanceEvent,
    classify,
)
from fleet_rebalance.replay.generations import (
    FOLLOW_UP_WINDOW,
    MEMBER_LEAD,
    Generation,
    group_generations,
)
from fleet_rebalance.replay.identities import (
    Departure,
    Identity,
    Return,
    derived_client_id,
    identity_of,
    pair_returns,
    shared_attributes,
)
from fleet_rebalance.replay.member_changes import Change, member_changes
from fleet_rebalance.replay.session_timeouts import (
    SessionTimeout,
    SessionTimeouts,
)
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot
from fleet_rebalance.vocabulary import Cause, GroupType, MemberEvent

HOUR = dt.timedelta(hours=1)
# Causes a logged reason gives that say nothing of what changed.
GENERIC = (Cause.LEADER_REJOIN, Cause.METADATA_CHANGE, Cause.UNKNOWN)
TOPIC_TRIGGERS = (Cause.PARTITIONS_ADDED, Cause.SUBSCRIPTION_CHANGED)
# How a consumer's departure names the incident of its return.
INCIDENT: dict[str, str] = {
    Cause.SCALE_IN: Cause.DEPLOY_RESTART,
    Cause.UNKNOWN: Cause.DEPLOY_RESTART,
}
SHOWN = 3
MILLISECOND = dt.timedelta(milliseconds=1)


@dataclass(frozen=True)
class Coverage:
    """The UTC hours for which a cluster's coordinator logs were collected."""

    hours: frozenset[dt.datetime] = frozenset()

    def logged(self, at: dt.datetime) -> bool:
        return at.replace(minute=0, second=0, microsecond=0) in self.hours

    def covers(self, start: dt.datetime, end: dt.datetime) -> bool:
        """Every hour of [start, end) has a log."""
        hour = start.replace(minute=0, second=0, microsecond=0)
        while hour < end:
            if hour not in self.hours:
                return False
            hour += HOUR
        return True


@dataclass(frozen=True)
class Settings:
    """The conf's replay settings (metrics.*) as durations; its defaults are the conf's."""

    rejoin_window: dt.timedelta
    static_timeout: dt.timedelta
    capture_skew: dt.timedelta
    # session.timeout.ms of a consumer whose log does not give it (session_timeouts.py)
    session_timeout: dt.timedelta

    @classmethod
    def of(cls, m: MetricsConfig | None = None) -> Settings:
        m = m or MetricsConfig()
        return cls(
            dt.timedelta(seconds=m.rejoin_window_s),
            dt.timedelta(seconds=m.static_session_timeout_s),
            dt.timedelta(seconds=m.capture_skew_s),
            dt.timedelta(milliseconds=m.session_timeout_ms),
        )


@dataclass
class _Day:
    """What the whole day's log and captures say of the group's members."""

    changes: list[Change]
    returns: dict[str, Return]  # arrival member id -> its return
    returned: dict[str, Return]  # departed member id -> its return
    known: dict[str, Identity]
    settings: Settings
    # Expired member id -> its session timeout (how long it was silent before the line).
    expiries: dict[str, SessionTimeout] = field(default_factory=dict)
    generations: list[Generation] = field(default_factory=list)
    # Generation -> the capture stamp it is before, where a capture taken just after its
    # end already shows it (module docstring); else placed_at places it.
    placed: dict[int, dt.datetime] = field(default_factory=dict)
    # Generation -> when each of its rounds ended that a follow-up round changing the
    # members continued (_merged): the ends of its steps.
    steps: dict[int, tuple[dt.datetime, ...]] = field(default_factory=dict)
    # Generation -> when its members settled (_merged): where a capture can show it.
    settled: dict[int, dt.datetime] = field(default_factory=dict)
    # Generations whose revoking members rejoined into the next rebalance (_absorbed).
    absorbed: frozenset[int] = frozenset()

    @cached_property
    def change_times(self) -> list[dt.datetime]:
        return [c.at for c in self.changes]

    def placed_at(self, gen: Generation) -> dt.datetime:
        """Where the generation is in the day: before the capture it is placed before
        (_placements), else when its members settled (a later revocation round moves
        partitions only), else its end."""
        number = gen.generation
        return self.placed.get(number, self.settled.get(number, gen.ended))


def group_history(
    snapshots: Iterable[Snapshot],
    log_rows: Sequence[Mapping[str, Any]],
    coverage: Coverage,
    run_date: dt.date,
    settings: Settings | None = None,
) -> Iterator[RebalanceEvent]:
    """The group's events of run_date in time order, numbered from 1. `snapshots` are
    its captures in capture order, the previous date's included (the last usable one
    opens the day)."""
    usable = [s for s in snapshots if not s.rebalancing]
    for before, after in itertools.pairwise(usable):
        if after.captured_at <= before.captured_at:
            raise ValueError(
                f"snapshots out of capture order: {after.captured_at} after {before.captured_at}"
            )
    baseline = next((s for s in reversed(usable) if s.captured_at.date() < run_date), None)
    today = [s for s in usable if s.captured_at.date() == run_date]
    if not today:
        return
    day = _day(usable, log_rows, settings or Settings.of())
    today = _completed(today, day, coverage)
    seq = 1
    previous, rest = baseline, today
    if previous is None:
        first = today[0]
        yield RebalanceEvent(
            seq, first.captured_at, "initial", first, None, source=CAPTURES,
            generation=_confirmed(day, None, first), lags_at=first.captured_at,
        )  # fmt: skip
        seq, previous, rest = seq + 1, first, today[1:]
    for current in rest:
        events = _period(previous, current, day, coverage, seq)
        if events is None:
            continue
        yield from events
        seq += len(events)
        previous = current


def _completed(captures: list[Snapshot], day: _Day, coverage: Coverage) -> list[Snapshot]:
    """The captures with each member assignment they left unresolved taken from the next
    capture, where that one lists the same members with it resolved and the logs cover
    the time between with no generation in it: the group's assignment cannot have changed
    (module docstring). A straddling 3.8/3.9 capture leaves one unresolved."""
    out = list(captures)
    for i in range(len(out) - 2, -1, -1):
        capture, after = out[i], out[i + 1]
        if all(m.assignment is not None for m in capture.members):
            continue  # nearly every capture: nothing to complete
        later = {m.member_id: m.assignment for m in after.members}
        if (
            later.keys() != {m.member_id for m in capture.members}
            or not coverage.covers(capture.captured_at, after.captured_at)
            or any(
                capture.captured_at < day.placed_at(g) <= after.captured_at for g in day.generations
            )
        ):
            continue
        members = tuple(
            m if m.assignment is not None else replace(m, assignment=later[m.member_id])
            for m in capture.members
        )
        out[i] = replace(capture, members=members)
    return out


def _day(usable: list[Snapshot], log_rows: Sequence[Mapping[str, Any]], settings: Settings) -> _Day:
    known = {
        m.member_id: Identity(m.instance_id, m.host, m.client_id or derived_client_id(m.member_id))
        for s in usable
        for m in s.members
    }
    first_seen: dict[str, dt.datetime] = {}
    for s in usable:
        for m in s.members:
            first_seen.setdefault(m.member_id, s.captured_at)
    generations = group_generations(log_rows)
    changes = member_changes(generations, log_rows)
    for c in changes:
        if c.action == "add" and c.instance_id:
            seen = known.get(c.member_id, Identity())
            known[c.member_id] = replace(seen, instance_id=c.instance_id)
    logged = SessionTimeouts.logged(log_rows, settings.session_timeout // MILLISECOND)
    expiries = {
        c.member_id: logged.of(c.member_id, identity_of(c.member_id, known))
        for c in changes
        if c.action == "remove" and c.expired
    }
    departures = [
        Departure(c.at, c.member_id, c.kind, _silent(expiries.get(c.member_id)))
        for c in changes
        if c.action == "remove"
    ]
    arrivals = [(c.at, c.member_id) for c in changes if c.action == "add"]
    shared = shared_attributes([identity_of(m.member_id, known) for m in s.members] for s in usable)
    returns = pair_returns(departures, arrivals, known, settings.rejoin_window, shared, first_seen)
    returned = {r.departure.member_id: r for r in returns.values()}
    merged, steps, settled = _merged(generations)
    placed = _placements(usable, merged, settings.capture_skew, settled)
    return _Day(
        changes,
        returns,
        returned,
        known,
        settings,
        expiries,
        merged,
        placed,
        steps,
        settled,
        _absorbed(merged, settled),
    )


def _silent(session: SessionTimeout | None) -> dt.timedelta:
    return dt.timedelta(milliseconds=session.ms) if session is not None else dt.timedelta(0)


def _placements(
    usable: list[Snapshot],
    generations: list[Generation],
    skew: dt.timedelta,
    settled: Mapping[int, dt.datetime],
) -> dict[int, dt.datetime]:
    """Generations whose members settled just after a capture's stamp but that the
    capture shows (module docstring) -> that stamp, with every generation that ended
    before them. A generation's members settle when its last round that took a member in
    or let one go ended (`settled`; a later revocation round moves only partitions)."""
    placed: dict[int, dt.datetime] = {}
    when = {g.generation: settled.get(g.generation, g.ended) for g in generations}
    for before, capture in zip([None, *usable], usable, strict=False):
        stamp = capture.captured_at
        late = [g for g in generations if stamp < when[g.generation] <= stamp + skew]
        listed = {m.member_id for m in capture.members}
        had = {m.member_id for m in before.members} if before is not None else set()
        shown = [
            g
            for g in late
            if (g.added or g.removed & had) and g.added <= listed and not g.removed & listed
        ]
        if shown:
            last = when[shown[-1].generation]
            placed.update((g.generation, stamp) for g in late if when[g.generation] <= last)
    return placed


def _merged(
    generations: list[Generation],
) -> tuple[list[Generation], dict[int, tuple[dt.datetime, ...]], dict[int, dt.datetime]]:
    """Generations with each cooperative revocation round folded into the one before:
    that one then ends when its follow-up ended, with the follow-up's member count and
    leader. And per merged generation, the ends of the rounds a follow-up that took a
    member in or let one go continued (its steps), and the end of the last round that
    changed its members (when they settled)."""
    merged: list[Generation] = []
    steps: dict[int, tuple[dt.datetime, ...]] = {}
    settled: dict[int, dt.datetime] = {}
    for gen in generations:
        if gen.follow_up and merged:
            last = merged[-1]
            settled.setdefault(last.generation, last.ended)
            if _changes_members(gen):
                steps[last.generation] = (*steps.get(last.generation, ()), last.ended)
                settled[last.generation] = gen.ended
            merged[-1] = replace(
                last,
                stabilized_at=gen.stabilized_at or last.stabilized_at,
                members=[*last.members, *gen.members],
                member_count=last.member_count if gen.member_count is None else gen.member_count,
                leader=gen.leader or last.leader,
            )
        else:
            merged.append(gen)
    return merged, steps, settled


def _absorbed(merged: list[Generation], settled: Mapping[int, dt.datetime]) -> frozenset[int]:
    """Classic generations with no follow-up round of their own that the next rebalance
    started within FOLLOW_UP_WINDOW of: their members rejoin into it (a member joining
    right after a cooperative round: the revoking members' rejoin is that rebalance's,
    logged with the newcomer's reason), so each was one round of the assignor."""
    return frozenset(
        g.generation
        for g, h in itertools.pairwise(merged)
        if g.protocol == GroupType.CLASSIC
        and g.generation not in settled
        and g.stabilized_at is not None
        and h.started_at is not None
        and dt.timedelta(0) <= h.started_at - g.stabilized_at <= FOLLOW_UP_WINDOW
    )


def _changes_members(gen: Generation) -> bool:
    """A generation that took a member in or let one go: its lines name one (a KIP-394
    first join included: 3.x logs the second at DEBUG), or its Stabilized count is not
    the generation before's."""
    counts = (gen.member_count, gen.previous_count)
    return (
        bool(gen.added or gen.removed)
        or any(m.event == MemberEvent.PENDING for m in gen.members)
        or (None not in counts and counts[0] != counts[1])
    )


def _confirmed(day: _Day, opens: dt.datetime | None, capture: Snapshot) -> int | None:
    ended = [
        g
        for g in day.generations
        if day.placed_at(g) <= capture.captured_at and (opens is None or day.placed_at(g) > opens)
    ]
    return ended[-1].generation if ended else None


def _period(
    previous: Snapshot, current: Snapshot, day: _Day, coverage: Coverage, seq: int
) -> list[RebalanceEvent] | None:
    """The events between two usable captures that differ (captures that repeat one are
    no snapshots: `current.follows` is the last capture still showing `previous`); None
    when `current` is no period boundary (new topics only, module docstring)."""
    opens, closes = previous.captured_at, current.captured_at
    generations = [
        g
        for g in day.generations
        if opens < day.placed_at(g) <= closes and coverage.logged(g.at) and coverage.logged(g.ended)
    ]
    changed_since = max(current.follows or opens, opens)
    visible = classify(previous, current)
    if (
        not generations
        and visible in TOPIC_TRIGGERS
        and previous.by_key().keys() == current.by_key().keys()
        and coverage.covers(changed_since, closes)
    ):
        return None
    if generations and (visible is None or coverage.covers(changed_since, closes)):
        return _logged(previous, current, generations, day, seq, confirmed=True)
    events = _logged(previous, current, generations, day, seq, confirmed=False)
    before = events[-1].snapshot if events else previous
    trigger = classify(before, current)
    if trigger is None:
        return events
    note = None
    if coverage.covers(changed_since, closes) and not generations:
        note = (
            "no generation logged for a change the captures show (the group's coordinator log "
            "is missing)"
        )
    return [*events, _captured(before, current, trigger, seq + len(events), day.settings, note)]


def _captured(
    previous: Snapshot,
    current: Snapshot,
    trigger: str,
    seq: int,
    settings: Settings,
    note: str | None,
) -> RebalanceEvent:
    """An event the captures saw and no log covers: its cause from the captures."""
    window_opens = max(current.follows or previous.captured_at, previous.captured_at)
    event = capture_causes.Event(
        seq,
        current.captured_at,
        window_opens,
        trigger,
        tuple(_capture_member(m) for m in previous.members),
        tuple(_capture_member(m) for m in current.members),
    )
    pairs = capture_causes.replacements(event)
    cause, evidence = capture_causes.capture_cause(event, pairs)
    only = bool(pairs) and len(pairs) == len(event.left) == len(event.joined)
    avoidable = (
        cause == Cause.DEPLOY_RESTART
        and only
        and current.captured_at - window_opens <= settings.static_timeout
    )
    return RebalanceEvent(
        seq,
        current.captured_at,
        trigger,
        current,
        previous,
        window_opens,
        source=CAPTURES,
        cause=cause,
        evidence=evidence,
        static_avoidable=avoidable,
        capture_difference=note,
        departed=_listed([_label(p.old) for p in pairs]),
        returned=_listed([_label(p.new) for p in pairs]),
        lags_at=current.captured_at,
        window=(previous.captured_at, current.captured_at),
    )


def _label(m: capture_causes.Member) -> str:
    return Identity(m.instance_id, m.host, m.client_id).label()


def _capture_member(m: MemberSnapshot) -> capture_causes.Member:
    return capture_causes.Member(m.member_id, m.host, m.client_id, m.instance_id)


def _logged(
    previous: Snapshot,
    current: Snapshot,
    generations: list[Generation],
    day: _Day,
    seq: int,
    confirmed: bool,
) -> list[RebalanceEvent]:
    """One event per logged generation of a period (module docstring); `confirmed`:
    the closing capture shows the last one (else a change no log covers follows it)."""
    state = {m.key: m for m in previous.members}
    horizon = max([current.captured_at, *(g.ended for g in generations)])
    first = bisect.bisect_right(day.change_times, previous.captured_at - MEMBER_LEAD)
    pending = day.changes[first : bisect.bisect_right(day.change_times, horizon)]
    topics = previous
    before = previous
    events: list[RebalanceEvent] = []
    for index, gen in enumerate(generations):
        last = confirmed and index == len(generations) - 1
        old = dict(state)
        # A KIP-848 epoch is bumped by the member change it follows; a classic generation
        # takes every member that joined or was dropped until it stabilized, each of its
        # steps those until the step's round ended.
        strategy = _strategy(gen, previous, current)
        steps = []
        for end in day.steps.get(gen.generation, ()):
            while pending and pending[0].at <= end:
                _apply(state, pending.pop(0), topics, day)
            steps.append(_reconstructed(end, state, topics, strategy))
        cutoff = gen.at if gen.protocol == GroupType.CONSUMER else gen.ended
        while pending and pending[0].at <= cutoff:
            _apply(state, pending.pop(0), topics, day)
        if topics is previous and confirmed and (last or _starts_topic_change(gen)):
            topics = current
        notes = []
        if gen.member_count is not None and gen.member_count != len(state):
            notes.append(
                f"the log's generation {gen.generation} has {gen.member_count} members, its "
                f"member lines {len(state)}"
            )
        if last:
            difference = _difference(state, current)
            if difference:
                notes.append(difference)
            snapshot = replace(current, captured_at=gen.at)
            source = BOTH
        else:
            snapshot = _reconstructed(gen.at, state, topics, strategy)
            source = LOGS
        trigger = classify(before, snapshot) or NO_CHANGE
        added = {m.member_id for k, m in state.items() if k not in old}
        removed = {m.member_id for k, m in old.items() if k not in state}
        added, removed = added | gen.added, removed | gen.removed
        cause, evidence = _cause(gen, trigger, added, removed, day)
        comings = _comings_and_goings(added, removed, day)
        events.append(
            RebalanceEvent(
                seq + index,
                gen.at,
                trigger,
                snapshot,
                before,
                previous.captured_at if index == 0 else events[-1].at,
                source=source,
                generation=gen.generation,
                assigned=not _superseded(gen, generations[index + 1 :]),
                duration_ms=gen.duration_ms,
                cause=cause,
                evidence=evidence,
                static_avoidable=_avoidable(added, removed, day),
                capture_difference="; ".join(notes) or None,
                departed=comings.departed,
                returned=comings.returned,
                away_ms=comings.away_ms,
                session_timeout_ms=comings.session.ms if comings.session else None,
                session_timeout_assumed=comings.session.assumed if comings.session else None,
                lags_at=current.captured_at if topics is current else previous.captured_at,
                window=(previous.captured_at, current.captured_at),
                steps=tuple(steps),
                leader=gen.leader,
                coordinator_assigned=gen.protocol == GroupType.CONSUMER,
                follow_up_pending=(
                    last and gen.generation in day.settled and gen.ended > current.captured_at
                ),
                single_round=gen.generation in day.absorbed,
            )
        )
        if last:
            state = {m.key: m for m in current.members}
        before = snapshot
    return events


def _apply(state: dict[str, MemberSnapshot], change: Change, topics: Snapshot, day: _Day) -> None:
    if change.action == "rekey":
        key = f"instance:{change.instance_id}"
        if key in state:
            state[key] = replace(state[key], member_id=change.member_id)
        return
    if change.action == "remove":
        named = _key_of(state, change.member_id)
        if named is not None:
            del state[named]
        return
    if any(m.member_id == change.member_id for m in state.values()):
        return
    who = day.known.get(change.member_id, Identity())
    instance = change.instance_id or who.instance_id
    state_key = f"instance:{instance}" if instance else f"member:{change.member_id}"
    subscription = _group_subscription(state, topics)
    state[state_key] = MemberSnapshot(
        change.member_id,
        instance,
        subscription,
        None,
        who.client_id or derived_client_id(change.member_id),
        who.host,
    )


def _key_of(state: Mapping[str, MemberSnapshot], member_id: str) -> str | None:
    """The member a line names: by its id, else (a static member whose new id the old
    coordinator never logged) by the group.instance.id its id starts with."""
    key = next((k for k, m in state.items() if m.member_id == member_id), None)
    if key is None:
        prefix = derived_client_id(member_id)
        key = f"instance:{prefix}" if prefix and f"instance:{prefix}" in state else None
    return key


def _group_subscription(state: Mapping[str, MemberSnapshot], topics: Snapshot) -> tuple[str, ...]:
    """A new member's subscription: the group's (the members' union), else the captures'."""
    union = {t for m in state.values() for t in m.topics}
    if not union:
        union = {t for m in topics.members for t in m.topics}
    return tuple(sorted(union))


def _superseded(gen: Generation, later: list[Generation]) -> bool:
    """A KIP-848 epoch with no target assignment that a later epoch followed: the
    coordinator skipped its (delayed) assignment for the newer epoch's."""
    return gen.protocol == GroupType.CONSUMER and gen.stabilized_at is None and bool(later)


def _starts_topic_change(gen: Generation) -> bool:
    """A generation whose log says a member's metadata changed, or names no member."""
    cause = gen.reading.cause
    if cause in (
        Cause.PARTITIONS_ADDED,
        Cause.SUBSCRIPTION_CHANGED,
        Cause.METADATA_CHANGE,
        Cause.LEADER_REJOIN,
    ):
        return True
    return cause == Cause.UNKNOWN and not gen.members and not gen.reading.members


def _strategy(gen: Generation, previous: Snapshot, current: Snapshot) -> str | None:
    """The assignor of a generation no capture shows. A classic generation between two
    captures that name different ones keeps the earlier: the switch is made by a later
    generation, at the latest the one the closing capture shows (a classic group
    converted to a consumer group on its first KIP-848 member: its last classic
    generations were still the members' classic assignor's)."""
    if (
        gen.protocol == GroupType.CLASSIC
        and previous.strategy
        and previous.strategy != current.strategy
    ):
        return previous.strategy
    return current.strategy


def _reconstructed(
    at: dt.datetime, state: Mapping[str, MemberSnapshot], topics: Snapshot, strategy: str | None
) -> Snapshot:
    """A generation no capture shows: the log's members with the topics of `topics`;
    no assignment (only captures show one)."""
    by_key = {m.key: m for m in topics.members}
    members = []
    for key, m in sorted(state.items()):
        captured = by_key.get(key)
        subscription = captured.subscription if captured is not None else m.subscription
        members.append(replace(m, subscription=subscription, assignment=None))
    return Snapshot(
        at,
        tuple(members),
        "Stable",
        strategy,
        dict(topics.partition_counts),
    )


def _difference(state: Mapping[str, MemberSnapshot], capture: Snapshot) -> str | None:
    shown = {m.key: m for m in capture.members}
    extra = sorted(shown[k].member_id for k in shown.keys() - state.keys())
    missing = sorted(state[k].member_id for k in state.keys() - shown.keys())
    if not extra and not missing:
        return None
    parts = []
    if extra:
        parts.append(f"also shows {_ids(extra)}")
    if missing:
        parts.append(f"does not show {_ids(missing)}")
    when = capture.captured_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"the capture at {when} " + " and ".join(parts) + " (the capture's members are used)"


def _cause(
    gen: Generation, trigger: str, added: set[str], removed: set[str], day: _Day
) -> tuple[str, str | None]:
    """(cause, evidence) of a logged generation."""
    cause, line = gen.cause()
    incident = _incident(added, removed, day, day.settings.rejoin_window)
    if incident is not None:
        back, departure_kind = incident
        named = INCIDENT.get(departure_kind, departure_kind)
        if back.by == "instance id":
            named = Cause.DEPLOY_RESTART  # a static member back past its session timeout
        return named, _join(line, _incident_text(back, day))
    if cause in GENERIC and trigger in TOPIC_TRIGGERS:
        return trigger, _join(line, f"the next capture shows {trigger.replace('_', ' ')}")
    if cause == Cause.UNKNOWN and (added or removed):
        cause = Cause.SCALE_OUT if len(added) >= len(removed) else Cause.SCALE_IN
    return cause, line


def _incident_text(back: Return, day: _Day) -> str:
    who = f"{back.identity.label()} ({back.by})"
    away = back.away.total_seconds()
    session = day.expiries.get(back.departure.member_id)
    if session is None:
        return (
            f"{who} left as {back.departure.member_id} and was back {away:.0f} s later as "
            f"{back.member_id}"
        )
    gap = (back.arrival_at - back.departure.at).total_seconds()
    source = "assumed: metrics.session_timeout_ms" if session.assumed else "as logged"
    return (
        f"{who} was expired as {back.departure.member_id} and was back as {back.member_id} "
        f"{gap:.0f} s after the expiry: away {away:.0f} s at least, silent for its session "
        f"timeout of {session.ms / 1000:g} s ({source}) before it"
    )


@dataclass(frozen=True)
class _Comings:
    """RebalanceEvent's departed, returned, away_ms and session timeout of an event."""

    departed: str | None = None
    returned: str | None = None
    away_ms: int | None = None
    session: SessionTimeout | None = None


def _comings_and_goings(added: set[str], removed: set[str], day: _Day) -> _Comings:
    """Every consumer a logged generation let go and took back in (RebalanceEvent says
    what), the longest absence among them, and the session timeout of those expired."""
    backs = [day.returns[m] for m in sorted(added) if m in day.returns]
    gone = sorted(removed)
    departed = []
    for member in gone:
        later = day.returned.get(member)
        who = later.identity if later else identity_of(member, day.known)
        if who.attributes():
            departed.append(who.label())
    returns = backs or [day.returned[m] for m in gone if m in day.returned]
    away = max(r.away for r in returns) // MILLISECOND if returns else None
    named = dict.fromkeys([*gone, *(r.departure.member_id for r in returns)])
    expired = [day.expiries[m] for m in named if m in day.expiries]
    session = max(expired, key=lambda t: (t.ms, t.assumed)) if expired else None
    return _Comings(_listed(departed), _listed([b.identity.label() for b in backs]), away, session)


def _listed(labels: list[str]) -> str | None:
    """Consumers' labels as one cell: each once, in the order given, comma-separated."""
    return ", ".join(dict.fromkeys(labels)) or None


def _incident(
    added: set[str], removed: set[str], day: _Day, window: dt.timedelta
) -> tuple[Return, str] | None:
    """The first return (within the window) this generation is part of: it took the
    consumer back in, or let it go before it came back."""
    candidates = [day.returns[m] for m in sorted(added) if m in day.returns]
    candidates += [day.returned[m] for m in sorted(removed) if m in day.returned]
    for back in candidates:
        if back.away <= window:
            return back, back.departure.kind
    return None


def _avoidable(added: set[str], removed: set[str], day: _Day) -> bool:
    """Every member this generation changed left and came back within the static
    session timeout: with group.instance.id it would not have happened."""
    if not added and not removed:
        return False
    limit = day.settings.static_timeout
    back_in = all(m in day.returns and day.returns[m].away <= limit for m in added)
    back_out = all(m in day.returned and day.returned[m].away <= limit for m in removed)
    return back_in and back_out


def _join(line: str | None, text: str) -> str:
    return f"{line} | {text}" if line else text


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    return shown + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
