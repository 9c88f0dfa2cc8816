"""The one change a group should make, out of every candidate its day supports (pure
rules over one group's facts; recommendations.py builds the facts in Spark).

Candidates, each with what it saves against the declared assignor's replay (the
baseline every comparison uses) over the day's rebalances:
- `stuck_partition`: a partition Burrow rates STALL (its committed offset never moves
  while it lags) while the group's other partitions move: a record the consumer cannot
  get past. Named with its topic, partition and offset; no assignor or protocol change
  helps (the new owner would stop at the same record), so it comes first.
- `fix_crash_loop`: one consumer (client id, host or instance id) expired and back with
  a new member id at least `crash_loop_restarts` times, once while its old member was
  still in the group (a new process, where a stalled one can only rejoin once it is
  told its session expired): it dies and is restarted. Static membership would only hide
  the restarts shorter than its session timeout. Second.
- `consumer_config` for session timeouts: members expired (heartbeat expiration) and
  came back (same consumer, new member id) within the rejoin window: they were silent
  past session.timeout.ms. So were a static group's members back past their session
  timeout (group.instance.id keeps a member's place only while its session lasts). A
  session timeout covering the longest absence (`away_ms`: from the member's last
  heartbeat, at least a session timeout before its expiry, to its return) would have
  kept them: both rebalances of each such incident saved.
- `consumer_config` for poll timeouts: members left because max.poll.interval.ms
  passed between two polls: a longer interval (or fewer records per poll) keeps them.
- `static_membership`, `assignor`, `protocol_migration`: recommendations.py's choice by
  DESIGN.md's rule, with its savings; never static membership to a group whose members
  already have a group.instance.id.
- `rack_aware`: the group's reads that client.rack, the brokers' replica selector and,
  where its assignor allows, rack-aware assignment would keep in their zone
  (rack_aware_rules.py picks the way from its cross_zone_traffic row), in bytes a day and
  their cost at zones.price_per_gb.
A fault is named whatever it costs. Any other candidate is recommended only when its
gain is material (Limits): a saving in cost (paused partition-seconds or messages
delayed; paused partitions where no log times the rebalances), never in rebalances
alone; for an assignor change also a lower mean lag skew or a balanced group, which
count only while a partition lagged the attention floor (a skew over a handful of
messages is noise). An assignor or protocol change needs a rebalance that day (a
replay of the initial assignment alone shows nothing it would save), and a protocol
migration must pause less, as protocol_migration_plan measures it, of a group the plan
blocks at most for its brokers; one whose brokers must be upgraded first must gain
`migration_factor` times as much. The faults first, then the most paused
partition-seconds saved, then messages delayed, then rebalances, then paused
partitions, then the cheapest change. Below the thresholds the group keeps what it
runs, and the reason says what the best candidate would have saved and why that is not
enough; a change's reason says what it saves, with its units.

A rack_aware saving is in bytes, the others in pauses: the two are weighed by how many
times each clears its own threshold (Candidate.clearance), since a threshold is by
definition the least gain worth one change, in its unit. The faults still come first
(a record nobody gets past or a dying consumer is an outage; bytes are a bill). Else the
best tuning candidate (by the order above) against rack_aware: the larger clearance
wins, a tie keeps the tuning change (it is what the group's rebalances cost in delayed
data). One change is told a day: the one not told is the next day's, once the first is
made, never a second piece of advice beside it. A rack_aware change that wins says how
much more it clears than the tuning change it beat; a keep says why neither is enough.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics import rack_aware_rules as rack
from fleet_rebalance.metrics.cross_zone_rules import GB, cost
from fleet_rebalance.metrics.migration_rules import CAUTION_TEXT, blockers
from fleet_rebalance.metrics.rack_aware_rules import CrossZoneFacts
from fleet_rebalance.vocabulary import Cause, Change, GroupType

# Cheapest first: the order among candidates that save the same.
EFFORT = (
    Change.CONSUMER_CONFIG,
    Change.STATIC_MEMBERSHIP,
    Change.ASSIGNOR,
    Change.PROTOCOL_MIGRATION,
)
FAULTS = (Change.STUCK_PARTITION, Change.FIX_CRASH_LOOP)
# What a 3.0+ Java consumer runs with (KIP-735), and what brokers allow by default
# (GroupCoordinatorConfig: group.max.session.timeout.ms; KIP-848's
# group.consumer.max.session.timeout.ms).
DEFAULT_SESSION_MS = 45_000
MAX_SESSION_MS = 1_800_000
MAX_CONSUMER_SESSION_MS = 60_000
MIN_PROPOSED_SESSION_MS = 60_000  # a minute at least: room for a stall a little longer
DEFAULT_POLL_MS = 300_000  # max.poll.interval.ms
ROUND_MS = 5_000
UPGRADE_BROKERS = "classic_coordinator"
# Blockers of protocol_migration_plan that a recommendation can take on: it says the
# brokers go first, and needs `migration_factor` times the gain.
UPGRADABLE = ("brokers_pre_4_0",)


@dataclass(frozen=True)
class Limits:
    """The conf's thresholds of a material gain (metrics.change_*, the attention floor)."""

    seconds: float
    messages: int
    partitions: int
    skew: float
    min_lag: int
    migration_factor: float
    crash_loop_restarts: int
    cross_zone_bytes: int  # a day, kept in zone: metrics.change_min_cross_zone_gb_saved

    @classmethod
    def of(cls, m: MetricsConfig) -> Limits:
        return cls(
            seconds=m.change_min_seconds_saved,
            messages=m.change_min_messages_delayed_saved,
            partitions=m.change_min_paused_partitions_saved,
            skew=m.change_min_skew_gain,
            min_lag=m.attention_min_lag,
            migration_factor=m.migration_gain_factor,
            crash_loop_restarts=m.crash_loop_restarts,
            cross_zone_bytes=max(1, round(m.change_min_cross_zone_gb_saved * GB)),
        )


@dataclass(frozen=True)
class GroupFacts:
    """What decide needs of the group beyond its events: the group.instance.ids its
    members captured that day (a static group), its protocol, its largest lag and its
    cross_zone_traffic row (None: the table has none, its brokers' zones unknown)."""

    instance_ids: frozenset[str] = field(default_factory=frozenset)
    protocol: str | None = None
    max_lag: int | None = None
    cross_zone: CrossZoneFacts | None = None

    @classmethod
    def of(
        cls,
        instance_ids: Iterable[str] | None,
        protocol: Any,
        max_lag: Any,
        cross_zone: Mapping[str, Any] | None = None,
    ) -> GroupFacts:
        """From a row's cells (null as None, or NaN where pandas hands them over)."""
        return cls(
            frozenset(consumers(instance_ids)),
            protocol if isinstance(protocol, str) else None,
            int(max_lag) if _number(max_lag) else None,
            CrossZoneFacts.of(cross_zone),
        )


@dataclass(frozen=True)
class Candidate:
    kind: str
    title: str  # the change in a few words: "switching to cooperative-sticky"
    reason: str
    prerequisites: str | None
    rebalances: int | None = None
    seconds: float | None = None
    partitions: int | None = None
    messages: int | None = None
    skew: float | None = None  # mean lag skew lower by this much
    balances: bool = False  # brings the count spread to 1 or less
    factor: float = 1.0  # how much more it must gain (a broker upgrade first)
    rebalanced: bool = True  # the group rebalanced that day
    max_lag: int | None = None  # the group's largest lag, messages
    ruled_out: str | None = None  # why the group cannot make it, whatever it saves
    cross_zone_bytes: int | None = None  # rack_aware: bytes a day kept in their zone
    price_per_gb: float = 0.0  # rack_aware: the price cross_zone_traffic used
    assignor: str | None = None  # rack_aware: the rack-aware assignor to switch to

    def costs_less(self, limits: Limits) -> bool:
        """Saves the thresholds in cost: partition-seconds or messages delayed (paused
        partitions where no log times the rebalances); a migration must pause less."""
        f = self.factor
        cheaper = (
            (self.seconds or 0) >= limits.seconds * f
            or (self.messages or 0) >= limits.messages * f
            or (self.seconds is None and (self.partitions or 0) >= limits.partitions * f)
        )
        pauses_less = (self.partitions or 0) > 0 or (self.seconds or 0) > 0
        return cheaper and (self.kind != Change.PROTOCOL_MIGRATION or pauses_less)

    def lag_gain(self, limits: Limits) -> bool:
        """An assignor change that balances the group or lowers its lag skew enough."""
        return self.kind == Change.ASSIGNOR and (
            self.balances or (self.skew or 0) >= limits.skew * self.factor
        )

    def lagging(self, limits: Limits) -> bool:
        return self.max_lag is not None and self.max_lag >= limits.min_lag

    def material(self, limits: Limits) -> bool:
        if self.kind in FAULTS:
            return True
        if self.ruled_out or (
            self.kind in (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION) and not self.rebalanced
        ):
            return False
        if self.kind == Change.RACK_AWARE:
            return (self.cross_zone_bytes or 0) >= limits.cross_zone_bytes
        return self.costs_less(limits) or (self.lag_gain(limits) and self.lagging(limits))

    def clearance(self, limits: Limits) -> float:
        """How many times the saving clears its threshold (1.0: just): what a rack_aware
        saving in bytes and a tuning one in pauses are compared by."""
        if self.kind == Change.RACK_AWARE:
            return (self.cross_zone_bytes or 0) / limits.cross_zone_bytes
        f = self.factor
        ratios = [
            (self.seconds or 0) / (limits.seconds * f),
            (self.messages or 0) / (limits.messages * f),
        ]
        if self.seconds is None:
            ratios.append((self.partitions or 0) / (limits.partitions * f))
        if self.lag_gain(limits) and self.lagging(limits):
            ratios.append(max(float(self.balances), (self.skew or 0) / (limits.skew * f)))
        return max(ratios)

    def rank(self) -> tuple:
        effort = EFFORT.index(self.kind) if self.kind in EFFORT else len(EFFORT)
        return (
            0
            if self.kind == Change.STUCK_PARTITION
            else 1
            if self.kind == Change.FIX_CRASH_LOOP
            else 2,
            -(self.seconds or 0),
            -(self.messages or 0),
            -(self.rebalances or 0),
            -(self.partitions or 0),
            effort,
        )

    def saving(self) -> str:
        """`12 rebalances, 24 paused partitions, 0.1 partition-seconds, 0 messages
        delayed`: every saving known, with its unit (no message delayed is said beside
        the partition-seconds that delayed none)."""
        parts = []
        if self.rebalances:
            n = int(self.rebalances)
            parts.append(f"{n} rebalance{'s' * (n != 1)}")
        if self.partitions:
            n = int(self.partitions)
            parts.append(f"{n:,} paused partition{'s' * (n != 1)}")
        timed = _number(self.seconds) and self.seconds != 0
        if timed:
            parts.append(f"{self.seconds:,.1f} partition-seconds")
        if _number(self.messages) and (self.messages or timed):
            n = int(self.messages)
            parts.append(f"{n:,} message{'s' * (n != 1)} delayed")
        if self.balances:
            parts.append("a count spread of 1 or less")
        if self.skew:
            parts.append(f"a mean lag skew {self.skew:.2f} lower")
        if self.cross_zone_bytes is not None:
            parts.append(rack.saving_text(self.cross_zone_bytes, self.price_per_gb))
        return ", ".join(parts) or "nothing"

    def shortfall(self, limits: Limits) -> str:
        """Why the candidate is not recommended (it is not material): the words after
        `keep <assignor>: `."""
        if self.ruled_out:
            return f"{self.title} would save {self.saving()}, but {self.ruled_out}"
        if self.kind in (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION) and not self.rebalanced:
            return (
                f"the group did not rebalance today: {self.title} would save "
                f"{self.saving()} over its initial assignment only"
            )
        if self.kind == Change.RACK_AWARE:
            least = limits.cross_zone_bytes
            return (
                f"gain too small: {self.title} would save {self.saving()}, below the "
                f"threshold ({rack.gb(least)}/day, metrics.change_min_cross_zone_gb_saved: "
                f"{rack.money(cost(least, self.price_per_gb))} at zones.price_per_gb "
                f"{self.price_per_gb:g})"
            )
        why = (
            f"gain too small: {self.title} would save {self.saving()}, below the thresholds "
            f"({_thresholds(limits, self.factor)})"
        )
        if self.lag_gain(limits) and not self.lagging(limits):
            peak = "unknown" if self.max_lag is None else f"{self.max_lag:,} messages"
            why += (
                f"; balance and lag skew count only while a partition lags "
                f"{limits.min_lag:,} messages (metrics.attention_min_lag), and its "
                f"largest lag today was {peak}"
            )
        return why


def decide(
    recommended: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    stuck: Sequence[Mapping[str, Any]],
    limits: Limits,
    group: GroupFacts | None = None,
) -> dict[str, Any]:
    """The group's final change: `recommended` is recommendations.py's row (its
    assignor, protocol or static-membership choice), `events` the day's rebalances with
    the baseline replay's cost (event_seq, cause, departed, returned, away_ms,
    paused_partitions, paused_partition_seconds, messages_delayed), `stuck` its stalled
    partitions (topic, partition, offset, lag, since). Returns the row's change
    columns."""
    facts = group or GroupFacts()
    candidates = [
        *_stuck(stuck),
        *_crash_loop(events, limits),
        *_session(events, limits, facts),
        *_poll(events),
        *_recommended(recommended, limits, facts, rebalanced=bool(events)),
    ]
    declared = recommended.get("declared_assignor")
    zones = _rack_aware(facts.cross_zone, declared if isinstance(declared, str) else None)
    chosen = sorted((c for c in candidates if c.material(limits)), key=Candidate.rank)
    if chosen and (chosen[0].kind in FAULTS or zones is None or not zones.material(limits)):
        return _row(chosen[0], facts)
    if zones is not None and zones.material(limits):
        if chosen and chosen[0].clearance(limits) >= zones.clearance(limits):
            return _row(chosen[0], facts)
        return _row(zones, facts, beaten=chosen[0] if chosen else None, limits=limits)
    best = sorted(candidates, key=Candidate.rank)
    return _keep(recommended, best[0] if best else None, limits, zones, facts.cross_zone)


def consumers(value: Any) -> list[str]:
    """The consumers a `departed` or `returned` cell names: one, several (comma-separated
    or a list) or none (null)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    names = value.split(",") if isinstance(value, str) else value
    return [c.strip() for c in names if c and c.strip()]


def _row(
    change: Candidate,
    group: GroupFacts,
    beaten: Candidate | None = None,
    limits: Limits | None = None,
) -> dict[str, Any]:
    if change.kind == Change.RACK_AWARE:
        return _rack_aware_row(change, beaten, limits)
    if change.kind in (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION, Change.STATIC_MEMBERSHIP):
        row: dict[str, Any] = {
            "change_kind": change.kind,
            "changed_assignor": change.kind != Change.STATIC_MEMBERSHIP,
        }
        if change.kind == Change.PROTOCOL_MIGRATION and group.instance_ids:
            # protocol_migration_plan's caution for the group, in its words
            caution = CAUTION_TEXT["static_membership"].format(static=len(group.instance_ids))
            row["prerequisites"] = f"{change.prerequisites}; {caution}"
        return row
    saves = "" if change.kind == Change.STUCK_PARTITION else f"; it saves {change.saving()}"
    return {
        "change_kind": change.kind,
        "changed_assignor": False,
        "reason": change.reason + saves,
        "prerequisites": change.prerequisites,
        "paused_partitions_saved": change.partitions,
        "rebalances_saved": change.rebalances,
        "paused_partition_seconds_saved": change.seconds,
        "messages_delayed_saved": change.messages,
    }


def _rack_aware_row(
    change: Candidate, beaten: Candidate | None, limits: Limits | None
) -> dict[str, Any]:
    """The row of a rack_aware change: its saving in bytes and cost, none in pauses;
    the tuning change it beat (`beaten`) named with both clearances."""
    over = ""
    if beaten is not None and limits is not None:
        over = (
            f"; that is {change.clearance(limits):.1f} times its threshold, more than "
            f"{beaten.title} ({beaten.saving()}: {beaten.clearance(limits):.1f} times its own)"
        )
    bytes_saved = change.cross_zone_bytes or 0
    row: dict[str, Any] = {
        "change_kind": Change.RACK_AWARE,
        "changed_assignor": change.assignor is not None,
        "reason": f"{change.reason}; it saves {change.saving()}{over}",
        "prerequisites": change.prerequisites,
        "paused_partitions_saved": None,
        "rebalances_saved": None,
        "paused_partition_seconds_saved": None,
        "messages_delayed_saved": None,
        "cross_zone_bytes_saved": bytes_saved,
        "cross_zone_cost_saved": cost(bytes_saved, change.price_per_gb),
    }
    if change.assignor is not None:
        row["recommended_assignor"] = change.assignor
    return row


def _keep(
    recommended: Mapping[str, Any],
    best: Candidate | None,
    limits: Limits,
    zones: Candidate | None = None,
    cross_zone: CrossZoneFacts | None = None,
) -> dict[str, Any]:
    """keep, saying why the best tuning candidate and the rack_aware one (where there
    are) are not enough; no saving where the baseline's measure is known (and none in
    bytes where the group has a cross_zone_traffic row)."""
    row: dict[str, Any] = {"change_kind": Change.KEEP, "changed_assignor": False}
    if cross_zone is not None:
        row.update(cross_zone_bytes_saved=0, cross_zone_cost_saved=0.0)
    also = f"; {zones.shortfall(limits)}" if zones is not None else ""
    if best is None or best.kind == Change.KEEP:
        if also:
            current = recommended.get("declared_assignor") or "the current assignor"
            row["reason"] = f"{recommended.get('reason') or f'keep {current}'}{also}"
        return row

    def nothing(column: str, zero: float) -> float | None:
        """No saving where the baseline's measure is known (unknown stays null)."""
        return zero if _number(recommended.get(column)) else None

    row.update(
        reason=(
            f"keep {recommended.get('declared_assignor') or 'the current assignor'}: "
            f"{best.shortfall(limits)}{also}"
        ),
        prerequisites=None,
        paused_partitions_saved=nothing("paused_partitions_saved", 0),
        rebalances_saved=None,
        paused_partition_seconds_saved=nothing("paused_partition_seconds_saved", 0.0),
        messages_delayed_saved=nothing("messages_delayed_saved", 0),
    )
    return row


def _thresholds(limits: Limits, factor: float) -> str:
    f = factor
    scaled = f", x{f:g}: the brokers need upgrading first" if f != 1 else ""
    return (
        f"{limits.seconds * f:g} partition-seconds or {limits.messages * f:,.0f} messages "
        f"delayed, {limits.partitions * f:g} paused partitions where no log times the "
        f"rebalances, or a mean lag skew {limits.skew * f:g} lower{scaled}"
    )


def _recommended(
    recommended: Mapping[str, Any], limits: Limits, group: GroupFacts, rebalanced: bool
) -> list[Candidate]:
    row: dict[str, Any] = {
        k: (v if _number(v) or not isinstance(v, float) else None) for k, v in recommended.items()
    }
    kind = row.get("change_kind")
    if kind not in (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION, Change.STATIC_MEMBERSHIP):
        return []
    ruled_out = None
    if (
        kind == Change.STATIC_MEMBERSHIP and group.instance_ids
    ):  # recommendations.py never picks it so
        ruled_out = "its members already have a group.instance.id"
    blocked = (
        sorted(set(_blockers(row)) - set(UPGRADABLE)) if kind == Change.PROTOCOL_MIGRATION else []
    )
    if blocked:
        ruled_out = f"protocol_migration_plan blocks the move: {', '.join(blocked)}"
    skew_delta = row.get("mean_lag_skew_delta")
    spread_before = row.get("declared_max_count_spread")
    spread_after = row.get("recommended_max_count_spread")
    balances = (
        kind != Change.STATIC_MEMBERSHIP
        and spread_before is not None
        and spread_after is not None
        and spread_before > 1 >= spread_after
    )
    upgrade = kind == Change.PROTOCOL_MIGRATION and row.get("brokers") in (UPGRADE_BROKERS, None)
    to = row.get("recommended_assignor")
    title = {
        Change.ASSIGNOR: f"switching to {to}",
        Change.PROTOCOL_MIGRATION: f"migrating to the consumer protocol ({to})",
        Change.STATIC_MEMBERSHIP: "static membership",
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
            messages=row.get("messages_delayed_saved"),
            skew=-skew_delta
            if kind != Change.STATIC_MEMBERSHIP and _number(skew_delta) and skew_delta < 0
            else None,
            balances=balances,
            factor=limits.migration_factor if upgrade else 1.0,
            rebalanced=rebalanced,
            max_lag=group.max_lag,
            ruled_out=ruled_out,
        )
    ]


def _rack_aware(cross_zone: CrossZoneFacts | None, declared: str | None) -> Candidate | None:
    """The rack_aware candidate of the group's cross_zone_traffic row, by
    rack_aware_rules' choice of way; None where no way saves a byte."""
    if cross_zone is None:
        return None
    way = rack.option(cross_zone, declared)
    if way is None:
        return None
    return Candidate(
        Change.RACK_AWARE,
        rack.title(way, declared),
        rack.reason(way, cross_zone, declared),
        rack.prerequisites(way, cross_zone, declared),
        ruled_out=way.ruled_out,
        cross_zone_bytes=way.saving_bytes,
        price_per_gb=cross_zone.price_per_gb,
        assignor=way.assignor if way.switch else None,
    )


def _blockers(row: Mapping[str, Any]) -> tuple[str, ...]:
    """protocol_migration_plan's blockers of a group the day's replay measured (so not
    an assign()-only one)."""
    return blockers(row.get("declared_assignor"), row.get("brokers"), idle=False)


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
    return [Candidate(Change.STUCK_PARTITION, "fixing the stuck partition", reason, prerequisites)]


def _incidents(events: Sequence[Mapping[str, Any]], cause: str) -> list[Mapping[str, Any]]:
    return [e for e in events if e.get("cause") == cause]


def _named(event: Mapping[str, Any]) -> set[str]:
    return {*consumers(event.get("departed")), *consumers(event.get("returned"))}


@dataclass(frozen=True)
class EarlyReturns:
    """Returns of a consumer while its old member was still in the group: a new process
    joined before the old one's session expired (a stalled consumer can rejoin only
    once it is told its session expired)."""

    per_consumer: Counter[str]
    # The events of those incidents: each early return and the expiry of the member it
    # replaced (one event where one generation did both).
    event_seqs: frozenset[int]


def early_returns(events: Sequence[Mapping[str, Any]]) -> EarlyReturns:
    """From the order of the day's session-timeout events (by event_seq): a return
    counts a member in, an expiry one out; a consumer first named leaving was in the
    group before. One first named returning may have left the day before: its first
    return is not counted (the order cannot tell), so no crash loop is made up from it."""
    inside: dict[str, int] = {}
    awaiting: Counter[str] = Counter()  # early returns whose old member has not expired
    early: Counter[str] = Counter()
    seqs = set()
    timeouts = _incidents(events, Cause.SESSION_TIMEOUT)
    for event in sorted(timeouts, key=lambda e: e.get("event_seq") or 0):
        gone, back = consumers(event.get("departed")), consumers(event.get("returned"))
        for who in gone:
            inside.setdefault(who, 1)
        for who in back:
            if inside.get(who, 0) > 0:
                early[who] += 1
                awaiting[who] += 1
                seqs.add(event.get("event_seq"))
            inside[who] = inside.get(who, 0) + 1
        for who in gone:
            inside[who] = max(inside[who] - 1, 0)
            if awaiting[who]:
                awaiting[who] -= 1
                seqs.add(event.get("event_seq"))
    return EarlyReturns(early, frozenset(s for s in seqs if s is not None))


def crash_loops(events: Sequence[Mapping[str, Any]], limits: Limits) -> dict[str, int]:
    """Consumers back after a session expiry `crash_loop_restarts` times or more, once at
    least while the old member was still in the group: a new process (a consumer that
    only stalled can rejoin only once it is told its session expired)."""
    timeouts = _incidents(events, Cause.SESSION_TIMEOUT)
    back = Counter(c for e in timeouts for c in consumers(e.get("returned")))
    early = early_returns(events).per_consumer
    return {c: n for c, n in back.items() if n >= limits.crash_loop_restarts and early[c]}


def _crash_loop(events: Sequence[Mapping[str, Any]], limits: Limits) -> list[Candidate]:
    back = crash_loops(events, limits)
    looping = sorted(back)
    if not looping:
        return []
    timeouts = _incidents(events, Cause.SESSION_TIMEOUT)
    mine = [e for e in timeouts if _named(e) & back.keys()]
    early = sum(n for c, n in early_returns(events).per_consumer.items() if c in back)
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
    return [_saving(Change.FIX_CRASH_LOOP, "fixing the crash loop", reason, prerequisites, mine)]


def _session(
    events: Sequence[Mapping[str, Any]], limits: Limits, group: GroupFacts
) -> list[Candidate]:
    """Members silent past their session timeout that came back: expired dynamic
    members (session_timeout) and a static group's members back past their timeout
    (the replay names those deploy_restart). Not a new process that joined before its
    old member expired: a longer timeout only keeps the dead member longer."""
    looping = crash_loops(events, limits)
    early = early_returns(events).event_seqs
    static = group.instance_ids

    def silent(e: Mapping[str, Any]) -> bool:
        named = _named(e)
        if not named or named & looping.keys() or e.get("event_seq") in early:
            return False
        return e.get("cause") == Cause.SESSION_TIMEOUT or (
            e.get("cause") == Cause.DEPLOY_RESTART and bool(named & static)
        )

    incidents = [e for e in events if silent(e)]
    returns = [e for e in incidents if consumers(e.get("returned")) and _number(e.get("away_ms"))]
    if not returns:
        return []
    absence_ms = max(int(e["away_ms"]) for e in returns)
    proposed = min(
        MAX_SESSION_MS, max(MIN_PROPOSED_SESSION_MS, math.ceil(absence_ms / ROUND_MS) * ROUND_MS)
    )
    consumer_protocol = group.protocol == GroupType.CONSUMER
    setting = (
        f"the group's consumer.session.timeout.ms={proposed}"
        if consumer_protocol
        else f"session.timeout.ms={proposed}"
    )
    back = sorted({c for e in returns for c in consumers(e.get("returned"))})
    static_back = [c for c in back if c in static]
    who = (
        f"static member{'s' * (len(static_back) != 1)} {', '.join(static_back)} "
        "(group.instance.id) expired and came back"
        if static_back and len(static_back) == len(back)
        else f"{len(back)} expired member{'s' * (len(back) != 1)} came back with a new member id"
    )
    kept = " (a static member keeps its place and partitions while it lasts)"
    reason = (
        f"session timeouts: {who}, the longest away at least {absence_ms / 1000:.0f} s (from "
        "its last heartbeat, a session timeout before its expiry, to its return): silent past "
        "the session timeout (a long GC pause, CPU throttling, a blocked heartbeat thread, a "
        f"slow restart); {setting} keeps a member through an absence that long"
        f"{kept if static_back else ''}"
    )
    prerequisites = _consumer_session(proposed) if consumer_protocol else _classic_session(proposed)
    return [_saving(Change.CONSUMER_CONFIG, setting, reason, prerequisites, incidents)]


# How the proposal reads the absence (rebalance_events.away_ms), for either protocol.
ABSENCE_NOTE = (
    f"the absence counts the {DEFAULT_SESSION_MS} ms default session timeout before the "
    "expiry: add the difference if the group's is set higher. A longer timeout also finds "
    "dead members later"
)


def _classic_session(proposed: int) -> str:
    return (
        f"every consumer with session.timeout.ms={proposed} and heartbeat.interval.ms="
        f"{proposed // 3 // 1000 * 1000} (a third of it or less); the brokers' "
        f"group.max.session.timeout.ms (default {MAX_SESSION_MS}) must allow it; {ABSENCE_NOTE}"
    )


def _consumer_session(proposed: int) -> str:
    """KIP-848: the session timeout is the brokers' (group.consumer.session.timeout.ms),
    or the group's own config since Kafka 4.0 (GroupConfig consumer.session.timeout.ms,
    set with kafka-configs.sh --entity-type groups)."""
    raise_max = (
        f"; raise the brokers' group.consumer.max.session.timeout.ms (default "
        f"{MAX_CONSUMER_SESSION_MS}) to at least it first"
        if proposed > MAX_CONSUMER_SESSION_MS
        else ""
    )
    return (
        "the group's session timeout, which the consumer protocol (KIP-848) takes from the "
        "brokers, not the clients' session.timeout.ms: kafka-configs.sh --bootstrap-server "
        "<broker> --alter --entity-type groups --entity-name <group> --add-config "
        f"consumer.session.timeout.ms={proposed} (Kafka 4.0+; the brokers' "
        f"group.consumer.session.timeout.ms for every group){raise_max}; {ABSENCE_NOTE}"
    )


def _poll(events: Sequence[Mapping[str, Any]]) -> list[Candidate]:
    leaves = _incidents(events, Cause.POLL_TIMEOUT)
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
    return [
        _saving(
            Change.CONSUMER_CONFIG, "a longer max.poll.interval.ms", reason, prerequisites, leaves
        )
    ]


def _saving(
    kind: str, title: str, reason: str, prerequisites: str, saved: Sequence[Mapping]
) -> Candidate:
    def known(column: str) -> list[Any]:
        return [e[column] for e in saved if _number(e.get(column))]

    seconds, partitions, messages = (
        known("paused_partition_seconds"),
        known("paused_partitions"),
        known("messages_delayed"),
    )
    return Candidate(
        kind,
        title,
        reason,
        prerequisites,
        rebalances=len(saved),
        # Whole milliseconds, as every partition-second sum (rollups.seconds_sum).
        seconds=round(sum(round(s * 1000) for s in seconds) / 1000, 3) if seconds else None,
        partitions=int(sum(partitions)) if partitions else None,
        messages=int(sum(messages)) if messages else None,
    )


def _number(value: Any) -> TypeGuard[float]:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _count(value: Any) -> str:
    return "?" if not _number(value) else f"{int(value):,}"


def _clock(value: Any) -> str:
    return value.strftime("%H:%M") if hasattr(value, "strftime") else "?"
