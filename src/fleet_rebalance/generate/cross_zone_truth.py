"""The cross-zone ground truth of a generated fleet (`<out>.cross_zone.jsonl`): per
consumer group and date, what it read, how much crossed zones and what a rack-aware
assignment would save, as `cross_zone_traffic` should find it. Computed from the
simulation's own state at each capture, never from the written files nor by the
metrics code, so a nightly over the fleet can be checked against it.

The definitions are cross_zone_traffic's (metrics/cross_zone_rules.py), applied to what
each capture holds, since that is all a nightly can know:
- An interval is two consecutive offsets captures of the group on one date (a failed
  offsets capture is none). Its records are the committed offset's growth; its bytes
  those records times the topic's bytes per record (generate/broker_views.py), known
  where some interval of the date saw the partition's log end grow with its size
  captured at both ends (sizes are taken from the leader the topics view names), else
  counted in size_unknown_records.
- The reader is the partition's owner at the interval's opening capture as the views
  show it: none while a 3.x coordinator shows the group mid-rebalance (unowned_bytes).
- The leader and in-sync replicas are those of the date's last topics view at or before
  that capture (hourly): none yet for a partition added since (unknown_zone_bytes).
  From the leader, a read crosses when the leader's zone is not the reader's; with
  follower fetching (KIP-392), when no in-sync replica is in the reader's zone.
- The saving is the reads' cross-zone leader bytes minus what would still cross with
  follower fetching had each member set client.rack to its zone under a rack-aware
  assignor (KIP-881: range, sticky and cooperative-sticky as declared, cooperative-sticky
  for any other classic assignor) rebalancing at every interval's opening capture,
  racked by all replicas and owning what it was captured owning. The consumer protocol's
  assignors ignore racks: its saving is follower fetching's alone.
Share and streams groups are not in it (generate/share_streams.py writes them apart).

Each interval is tallied as it closes, in records per partition (a partition's bytes are
its records times one number), so the truth of a 20k-group day holds a few counters per
partition, not every interval's reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypedDict

from fleet_rebalance.assignors import Subscription, TopicPartition, get_assignor
from fleet_rebalance.assignors.types import Assignor, settled_assignment
from fleet_rebalance.generate.broker_views import record_bytes
from fleet_rebalance.generate.render import GroupView, TopicView
from fleet_rebalance.generate.zones import host_zone

CROSS_ZONE_SUFFIX = ".cross_zone.jsonl"
RACK_AWARE_ASSIGNORS = frozenset({"range", "sticky", "cooperative-sticky"})
# Kafka's own advice ("Users should prefer this assignor for newer clusters").
RECOMMENDED_ASSIGNOR = "cooperative-sticky"


class CrossZoneRecord(TypedDict):
    """One line of cross_zone_path: one group's reads of one date."""

    cluster: str
    group_id: str
    date: str  # ISO-8601
    read_records: int
    read_bytes: int
    size_unknown_records: int  # records read whose bytes no size measured
    partitions_read: int
    cross_zone_leader_bytes: int
    partitions_cross_zone_leader: int
    cross_zone_follower_bytes: int
    unknown_zone_bytes: int
    unowned_bytes: int
    # What rack-aware assignment with follower fetching saves; None where a member's
    # zone is unknown (never, with the generator's hosts).
    rack_aware_saving_bytes: int | None


def cross_zone_path(out: Path) -> Path:
    """Beside the captures, like truth_path: data/sample -> data/sample.cross_zone.jsonl."""
    return out.with_name(out.name + CROSS_ZONE_SUFFIX)


class Placement(NamedTuple):
    leader: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


Placements = Mapping[TopicPartition, Placement]


@dataclass(frozen=True)
class GroupCapture:
    """What one capture shows of a group: committed offset and log end per partition,
    each partition's owner, each member's zone, and the placement known then."""

    at: dt.datetime
    offsets: Mapping[TopicPartition, tuple[int, int]]
    owners: Mapping[TopicPartition, str]
    zones: Mapping[str, str | None]
    placement: Placements


class Read(NamedTuple):
    """One partition over one interval: its placement and owner at the opening capture."""

    tp: TopicPartition
    owner: str | None
    placement: Placement | None
    records: int


@dataclass
class _Tally:
    """One partition's records of one group's date, by where they were read."""

    records: int = 0
    unowned: int = 0
    unknown_zone: int = 0
    leader: int = 0  # across zones from the leader
    follower: int = 0  # across zones with follower fetching
    rack_aware: int = 0  # across zones with follower fetching, under the replay


@dataclass
class _Day:
    """One group's date so far."""

    kip848: bool
    tallies: dict[TopicPartition, _Tally] = field(default_factory=dict)
    measured: set[TopicPartition] = field(default_factory=set)
    zones: dict[str, str | None] = field(default_factory=dict)
    # Intervals whose replay waits for the date's declared assignor (a state view shows
    # it only while the group is Stable), and the last replay's facts and plan.
    waiting: list[tuple[GroupCapture, list[Read]]] = field(default_factory=list)
    last_plan: tuple[tuple[object, ...], dict[TopicPartition, str]] | None = None


class CrossZoneTruth:
    """Fed every capture of the fleet in time order (capture), then read (records)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._placement: dict[str, tuple[dt.date, dict[TopicPartition, Placement]]] = {}
        self._brokers: dict[str, Mapping[int, str]] = {}
        self._last: dict[tuple[str, str], GroupCapture] = {}
        self._days: dict[tuple[str, str, dt.date], _Day] = {}
        self._declared: dict[tuple[str, str, dt.date], str] = {}

    def capture(
        self,
        at: dt.datetime,
        cluster: str,
        brokers: Mapping[int, str],
        views: Iterable[GroupView],
        topics: Mapping[str, TopicView] | None,
        offsets_captured: bool,
    ) -> None:
        """One capture of `cluster`: its brokers' zones, the groups as the views show
        them, the topics view when one was written, and whether the offsets view was."""
        self._brokers[cluster] = brokers
        placement = self._placed(cluster, at, topics)
        for view in views:
            if view.state == "Stable" or view.kip848:  # the state view shows the assignor
                self._declared[(cluster, view.group, at.date())] = view.strategy
            if offsets_captured:
                self._group(cluster, at, view, placement)

    def _placed(
        self, cluster: str, at: dt.datetime, topics: Mapping[str, TopicView] | None
    ) -> dict[TopicPartition, Placement]:
        """The placement of the date's last topics view at or before `at`."""
        if topics is not None:
            placed = {
                TopicPartition(name, p): Placement(topic.isr[p][0], tuple(topic.isr[p]), tuple(r))
                for name, topic in topics.items()
                for p, r in topic.replicas.items()
            }
            self._placement[cluster] = (at.date(), placed)
        date, placed = self._placement.get(cluster, (at.date(), {}))
        return placed if date == at.date() else {}

    def _group(self, cluster: str, at: dt.datetime, view: GroupView, placement: Placements) -> None:
        """The group's capture at `at`, and the interval it closes."""
        offsets = {
            TopicPartition(*tp): (current, end)
            for tp, (current, end) in view.offsets.items()
            if current is not None
        }
        if not offsets:
            return
        now = GroupCapture(
            at,
            offsets,
            {TopicPartition(*tp): m.member_id for m in view.members for tp in m.partitions},
            {m.member_id: host_zone(m.host) for m in view.members},
            placement,
        )
        key = (cluster, view.group, at.date())
        day = self._days.setdefault(key, _Day(view.kip848))
        day.zones.update(now.zones)
        before = self._last.get((cluster, view.group))
        self._last[(cluster, view.group)] = now
        if before is None or before.at.date() != at.date():
            return
        reads = []
        for tp, (committed, end) in now.offsets.items():
            if tp not in before.offsets:
                continue
            was, ended = before.offsets[tp]
            if end > ended and tp in before.placement and tp in now.placement:
                day.measured.add(tp)
            reads.append(Read(tp, before.owners.get(tp), before.placement.get(tp), committed - was))
        brokers = self._brokers[cluster]
        for r in reads:
            tally = day.tallies.setdefault(r.tp, _Tally())
            records = max(r.records, 0)
            tally.records += records
            crossing = _crossing(day.zones.get(r.owner) if r.owner else None, r.placement, brokers)
            if r.owner is None:
                tally.unowned += records
            elif crossing is None:
                tally.unknown_zone += records
            else:
                tally.leader += records * crossing[0]
                tally.follower += records * crossing[1]
        if not day.kip848:
            day.waiting.append((before, reads))
            declared = self._declared.get(key)
            if declared is not None:
                self._replay(day, brokers, declared)

    def _replay(self, day: _Day, brokers: Mapping[int, str], declared: str | None) -> None:
        """The waiting intervals' reads under the rack-aware assignor `declared` gives."""
        name = declared if declared in RACK_AWARE_ASSIGNORS else RECOMMENDED_ASSIGNOR
        assignor = get_assignor(name)
        for opening, reads in day.waiting:
            plan = _rack_aware_plan(day, opening, reads, brokers, assignor)
            for r in reads:
                owner = plan.get(r.tp) if r.owner is not None else None
                if owner is None:
                    continue
                crossing = _crossing(day.zones.get(owner), r.placement, brokers)
                if crossing is not None and crossing[1]:
                    day.tallies[r.tp].rack_aware += max(r.records, 0)
        day.waiting.clear()

    def records(self) -> list[CrossZoneRecord]:
        """Every group's row of every date it had offsets on, sorted."""
        rows = []
        for (cluster, group, date), day in sorted(self._days.items()):
            if day.waiting:  # no capture of the date declared an assignor
                self._replay(
                    day, self._brokers[cluster], self._declared.get((cluster, group, date))
                )
            rows.append(self._record(cluster, group, date, day))
        return rows

    def _record(self, cluster: str, group: str, date: dt.date, day: _Day) -> CrossZoneRecord:
        def total(column: str) -> int:
            """Bytes: the partitions' records times their bytes per record, where known."""
            return sum(
                getattr(t, column) * record_bytes(self.seed, cluster, tp.topic)
                for tp, t in day.tallies.items()
                if tp in day.measured
            )

        leader = total("leader")
        follower = total("follower")
        replayed = follower if day.kip848 else total("rack_aware")
        return {
            "cluster": cluster,
            "group_id": group,
            "date": date.isoformat(),
            "read_records": sum(t.records for t in day.tallies.values()),
            "read_bytes": total("records"),
            "size_unknown_records": sum(
                t.records for tp, t in day.tallies.items() if tp not in day.measured
            ),
            "partitions_read": sum(t.records > 0 for t in day.tallies.values()),
            "cross_zone_leader_bytes": leader,
            "partitions_cross_zone_leader": sum(t.leader > 0 for t in day.tallies.values()),
            "cross_zone_follower_bytes": follower,
            "unknown_zone_bytes": total("unknown_zone"),
            "unowned_bytes": total("unowned"),
            "rack_aware_saving_bytes": leader - replayed if all(day.zones.values()) else None,
        }


def _crossing(
    zone: str | None, placed: Placement | None, brokers: Mapping[int, str]
) -> tuple[bool, bool] | None:
    """(crosses from the leader, crosses with follower fetching); None when a zone is
    unknown: the reader's, the leader's or an in-sync replica's."""
    if zone is None or placed is None:
        return None
    replica_zones = {brokers.get(b) for b in (placed.leader, *placed.isr)}
    if None in replica_zones:
        return None
    return brokers[placed.leader] != zone, zone not in replica_zones


def _rack_aware_plan(
    day: _Day,
    opening: GroupCapture,
    reads: list[Read],
    brokers: Mapping[int, str],
    assignor: Assignor,
) -> dict[TopicPartition, str]:
    """Partition -> member as `assignor` would have it at the interval's opening capture:
    its members (those captured, with partitions or without) each subscribed to every
    topic read, racked in its zone, owning what it was captured owning; the partitions
    racked by every replica's zone, as of the capture's placement. The same facts as the
    last interval's give the same plan, built once."""
    owned = [r for r in reads if r.owner is not None]
    if not owned:
        return {}
    topics = tuple(sorted({r.tp.topic for r in owned}))
    counts = dict.fromkeys(topics, 0)
    for tp in [*opening.placement, *(r.tp for r in owned)]:
        if tp.topic in counts:
            counts[tp.topic] = max(counts[tp.topic], tp.partition + 1)
    racks: dict[TopicPartition, frozenset[str]] = {}
    for topic, count in counts.items():
        for p in range(count):
            placed = opening.placement.get(TopicPartition(topic, p))
            replicas = placed.replicas if placed else ()
            racks[TopicPartition(topic, p)] = frozenset(
                brokers[b] for b in replicas if b in brokers
            )
    mine: dict[str, list[TopicPartition]] = {}
    for r in owned:
        if r.owner is not None:
            mine.setdefault(r.owner, []).append(r.tp)
    members = tuple(
        (m, tuple(sorted(mine.get(m, ()))), day.zones.get(m))
        for m in sorted(set(opening.zones) | mine.keys())
    )
    key = (
        assignor.name,
        topics,
        members,
        tuple(sorted(counts.items())),
        tuple(sorted(racks.items())),
    )
    if day.last_plan is None or day.last_plan[0] != key:
        subscriptions = {m: Subscription(topics, tps, rack=zone) for m, tps, zone in members}
        settled = settled_assignment(assignor, counts, subscriptions, racks)
        day.last_plan = (key, {tp: m for m, tps in settled.items() for tp in tps})
    return day.last_plan[1]
