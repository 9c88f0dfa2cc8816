"""`cross_zone_traffic` rules: what one consumer group's reads of one day cost across
availability zones. Pure Python, no Spark: the gold step hands over the group's bronze rows
of the day (offsets, members, topic_partitions, brokers, partition_sizes) and the conf's
zones; `reads` turns them into bytes per partition and capture interval, `cross_zone`
classifies those bytes for the assignment captured or any other, `traffic` is the table's
row and `rack_aware_replay` the what-if of a rack-aware assignor (KIP-881).

Zones (DESIGN.md "Zones"), never guessed:
- consumer: its client.rack, else the zone of the longest configured CIDR holding its host.
- broker: its broker.rack as last captured; the conf's broker map only fills the brokers
  without one, since the captured rack is what the brokers' replica selector and KIP-881's
  assignors compare with client.rack.
Bytes: the group's committed-offset growth over an interval (consecutive offsets captures)
times the interval's bytes per record: the partition's size growth (the leader's replica,
else the largest in-sync one) over its log-end growth, rounded to the byte. An interval
without that measure (a size drop is retention deleting segments; a size or log end not
captured at an end; nothing produced) takes the partition's rate over the day's measured
intervals, else the topic's configured record size (`estimated`), else its bytes are
unknown, counted apart and never 0. A fetch sends record batches as stored, so a
configured record size means stored (compressed) bytes per record.
Cross-zone: an interval's reader is the partition's owner at the capture that opens it.
From the leader, a read crosses when the leader's zone is not the reader's. With follower
fetching (KIP-392's RackAwareReplicaSelector serves a caught-up in-sync replica in the
client's rack, else the leader) it crosses only when no in-sync replica is in the reader's
zone; this is what the reads would cost with the selector on and client.rack set, which
the captures cannot show. A read's zones are unknown when the reader's, the leader's or any
in-sync replica's is: a partly racked cluster is a config gap, not a fact to reason around.
"""

from __future__ import annotations

import bisect
import datetime as dt
import ipaddress
import itertools
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import NamedTuple, TypedDict

from fleet_rebalance.assignors.registry import get_assignor
from fleet_rebalance.assignors.types import (
    Assignment,
    Assignor,
    Subscription,
    TopicPartition,
    settled_assignment,
    topic_partitions,
)
from fleet_rebalance.vocabulary import GroupType, ZoneSource

GB = 10**9  # cloud bills count decimal gigabytes
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Owners = Mapping[str, Collection[tuple[str, int]]]  # member -> partitions (an Assignment)


class ZoneConfigError(ValueError):
    """A configured CIDR that is not one."""


class PartitionRef(TypedDict):
    topic: str
    partition: int


class OffsetRow(TypedDict):
    captured_at: dt.datetime
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    consumer_id: str | None
    host: str | None


class MemberRow(TypedDict):
    captured_at: dt.datetime
    consumer_id: str
    host: str | None
    rack: str | None
    assignment: list[PartitionRef] | None


class PartitionRow(TypedDict):
    captured_at: dt.datetime
    topic: str
    partition: int
    leader: int | None
    replicas: list[int]
    isr: list[int]


class BrokerRow(TypedDict):
    captured_at: dt.datetime
    broker: int
    rack: str | None


class SizeRow(TypedDict):
    captured_at: dt.datetime
    topic: str
    partition: int
    broker: int
    size_bytes: int
    is_future: bool | None


class ConsumerZone(NamedTuple):
    zone: str | None
    source: ZoneSource | None


@dataclass(frozen=True)
class Zones:
    consumers: Mapping[str, ConsumerZone]
    brokers: Mapping[int, str]


@dataclass(frozen=True)
class Read:
    """What the group read from one partition over one capture interval."""

    start: dt.datetime
    topic_partition: TopicPartition
    owner: str | None  # at the opening capture
    leader: int | None  # placement at the opening capture
    isr: tuple[int, ...]
    records: int  # 0 for an offset reset
    bytes: int | None  # None: no measured rate and no record size configured
    estimated: bool  # bytes from a configured record size
    reset: bool  # the committed offset went back


@dataclass(frozen=True)
class CrossZone:
    """Cross-zone bytes of a set of reads under one assignment (bytes not known are left out)."""

    cross_zone_leader_bytes: int
    cross_zone_follower_bytes: int
    unknown_zone_bytes: int
    unowned_bytes: int
    partitions_cross_zone_leader: int
    partitions_cross_zone_follower: int


@dataclass(frozen=True)
class Traffic:
    """One group's day: a `cross_zone_traffic` row beside cluster, group_id and date.
    read_bytes = known-zone + unknown_zone_bytes + unowned_bytes; a partition counts where
    any interval read records, bytes known or not; cost is in the price's currency."""

    read_bytes: int
    estimated_bytes: int
    read_records: int
    size_unknown_records: int
    cross_zone_leader_bytes: int
    cross_zone_follower_bytes: int
    unknown_zone_bytes: int
    unowned_bytes: int
    partitions_read: int
    partitions_cross_zone_leader: int
    partitions_cross_zone_follower: int
    members: int
    members_unknown_zone: int
    offset_resets: int
    price_per_gb: float
    cross_zone_leader_cost: float
    cross_zone_follower_cost: float


def parse_cidrs(consumer_cidrs: Mapping[str, str]) -> list[tuple[Network, str]]:
    """CIDR -> zone, as networks in configured order."""
    parsed = []
    for cidr, zone in consumer_cidrs.items():
        try:
            parsed.append((ipaddress.ip_network(cidr), zone))
        except ValueError as e:
            raise ZoneConfigError(
                f"expected a CIDR such as 10.0.0.0/16, found {cidr!r}: {e}"
            ) from e
    return parsed


def host_zone(host: str | None, networks: Iterable[tuple[Network, str]]) -> str | None:
    """The zone of the longest configured prefix holding `host` (first configured on a tie).
    Kafka's tools print a client's host as InetAddress.toString(): "/10.0.0.1", or
    "name/10.0.0.1"; a bare hostname is not resolved (a lookup here would guess)."""
    try:
        address = ipaddress.ip_address((host or "").rsplit("/", 1)[-1])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped  # a dual-stack listener's IPv4 client
    matches = [(net, zone) for net, zone in networks if address in net]
    return max(matches, key=lambda m: m[0].prefixlen)[1] if matches else None


def consumer_zone(
    rack: str | None, host: str | None, networks: Iterable[tuple[Network, str]]
) -> ConsumerZone:
    if rack:
        return ConsumerZone(rack, ZoneSource.CLIENT_RACK)
    zone = host_zone(host, networks)
    return ConsumerZone(zone, ZoneSource.CIDR if zone else None)


def group_zones(
    members: Iterable[MemberRow],
    offsets: Iterable[OffsetRow],
    brokers: Iterable[BrokerRow],
    consumer_cidrs: Mapping[str, str],
    broker_zones: Mapping[int, str],
) -> Zones:
    """Every member's zone (members rows, and owners only the offsets view names) from its
    last captured rack and host; every broker's from its last captured rack, else the map.
    A capture without a rack erases no earlier one: client.rack is fixed for a member id
    and broker.rack changes only with a restart, so a missing one is a capture's gap."""
    rack: dict[str, str | None] = {}
    host: dict[str, str | None] = {}
    for m in sorted(members, key=lambda m: m["captured_at"]):
        rack[m["consumer_id"]] = m["rack"] or rack.get(m["consumer_id"])
        host[m["consumer_id"]] = m["host"] or host.get(m["consumer_id"])
    for o in offsets:
        if o["consumer_id"] and not host.get(o["consumer_id"]):
            host[o["consumer_id"]] = o["host"]
    networks = parse_cidrs(consumer_cidrs)
    consumers = {c: consumer_zone(rack.get(c), host[c], networks) for c in sorted(host)}
    zones = dict(broker_zones)
    for b in sorted(brokers, key=lambda b: b["captured_at"]):
        if b["rack"]:
            zones[b["broker"]] = b["rack"]
    return Zones(consumers, zones)


def reads(
    offsets: Iterable[OffsetRow],
    members: Iterable[MemberRow],
    partitions: Iterable[PartitionRow],
    sizes: Iterable[SizeRow],
    record_bytes: Mapping[str, int],
    default_record_bytes: int | None = None,
) -> list[Read]:
    """One Read per partition and pair of consecutive offsets captures, sorted (module
    docstring). `record_bytes`: a topic's configured stored bytes per record."""
    placement = _placements(partitions)
    size = _sizes(sizes, placement)
    owner = _owners(members, offsets)
    series: dict[TopicPartition, dict[dt.datetime, OffsetRow]] = defaultdict(dict)
    for o in offsets:
        series[TopicPartition(o["topic"], o["partition"])][o["captured_at"]] = o
    out = []
    for tp in sorted(series):
        rows = [series[tp][at] for at in sorted(series[tp])]
        rates = [_rate(tp, a, b, size) for a, b in itertools.pairwise(rows)]
        day = _day_rate([r for r in rates if r is not None])
        configured = record_bytes.get(tp.topic, default_record_bytes)
        for (a, b), rate in zip(itertools.pairwise(rows), rates, strict=True):
            if a["current_offset"] is None or b["current_offset"] is None:
                continue  # no commit at an end (`-`): where the group started is unknown
            records = b["current_offset"] - a["current_offset"]
            per_record, estimated = _per_record(rate, day, configured)
            if records <= 0:
                read_bytes: int | None = 0  # an offset reset reads nothing
            elif per_record is None:
                read_bytes = None
            else:
                read_bytes = _bytes_read(records, per_record)
            leader, isr = _placement_at(placement, tp, a["captured_at"])
            out.append(
                Read(
                    start=a["captured_at"],
                    topic_partition=tp,
                    owner=owner.get((a["captured_at"], tp)),
                    leader=leader,
                    isr=isr,
                    records=max(records, 0),
                    bytes=read_bytes,
                    estimated=estimated and records > 0,
                    reset=records < 0,
                )
            )
    return out


def _per_record(
    rate: _Growth | None, day: _Growth | None, configured: int | None
) -> tuple[tuple[int, int] | None, bool]:
    """An interval's bytes per record as (bytes, records), and whether it is a configured
    estimate."""
    if rate is not None:
        return (rate.size, rate.log_end), False
    if day is not None:
        return (day.size, day.log_end), False
    return (None, False) if configured is None else ((configured, 1), True)


def _bytes_read(records: int, per_record: tuple[int, int]) -> int:
    """records x bytes / records, rounded half to even (as round() rounds a Fraction), in
    integers: a day's reads are hundreds of thousands of intervals."""
    size, count = per_record
    whole, rest = divmod(records * size, count)
    return whole + (2 * rest > count or (2 * rest == count and whole % 2 == 1))


class _Growth(NamedTuple):
    """An interval's size and log-end growth, kept apart so the day's rate is total bytes
    over total records, not a mean of ratios."""

    size: int
    log_end: int


def _day_rate(measured: list[_Growth]) -> _Growth | None:
    if not measured:
        return None
    return _Growth(sum(g.size for g in measured), sum(g.log_end for g in measured))


def _rate(
    tp: TopicPartition,
    a: OffsetRow,
    b: OffsetRow,
    size: Mapping[tuple[TopicPartition, dt.datetime], int],
) -> _Growth | None:
    """The interval's growth, from the sizes with each offsets capture's captured_at (one
    capture directory holds both)."""
    s0, s1 = size.get((tp, a["captured_at"])), size.get((tp, b["captured_at"]))
    e0, e1 = a["log_end_offset"], b["log_end_offset"]
    if s0 is None or s1 is None or e0 is None or e1 is None or s1 < s0 or e1 <= e0:
        return None
    return _Growth(s1 - s0, e1 - e0)


class _Placement(NamedTuple):
    captured_at: dt.datetime
    leader: int | None
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


class _Series(NamedTuple):
    """A partition's placements in time order, each kept only where it changed (a day's
    topics captures repeat one placement dozens of times), with their times to bisect."""

    times: list[dt.datetime]
    rows: list[_Placement]


_Placements = dict[TopicPartition, _Series]
_UNPLACED = _Placement(dt.datetime.min, None, (), ())


def _placements(partitions: Iterable[PartitionRow]) -> _Placements:
    captured: dict[TopicPartition, list[_Placement]] = defaultdict(list)
    for p in partitions:
        tp = TopicPartition(p["topic"], p["partition"])
        captured[tp].append(
            _Placement(p["captured_at"], p["leader"], tuple(p["isr"]), tuple(p["replicas"]))
        )
    out: _Placements = {}
    for tp, rows in captured.items():
        rows.sort(key=lambda r: r.captured_at)
        kept = [r for i, r in enumerate(rows) if i == 0 or r[1:] != rows[i - 1][1:]]
        out[tp] = _Series([r.captured_at for r in kept], kept)
    return out


def _latest(placement: _Placements, tp: TopicPartition, at: dt.datetime) -> _Placement:
    """The latest topics capture at or before `at`; nothing known before any."""
    series = placement.get(tp)
    if series is None:
        return _UNPLACED
    i = bisect.bisect_right(series.times, at)
    return series.rows[i - 1] if i else _UNPLACED


def _placement_at(
    placement: _Placements, tp: TopicPartition, at: dt.datetime
) -> tuple[int | None, tuple[int, ...]]:
    """Leader and ISR at `at` (_latest)."""
    p = _latest(placement, tp, at)
    return p.leader, p.isr


def _sizes(
    sizes: Iterable[SizeRow], placement: _Placements
) -> dict[tuple[TopicPartition, dt.datetime], int]:
    """A partition's size at a capture: its leader's replica, else the largest in-sync one
    (within replica.lag.time.max.ms of the leader). A future replica is a copy."""
    by_broker: dict[tuple[TopicPartition, dt.datetime], dict[int, int]] = defaultdict(dict)
    for s in sizes:
        if not s["is_future"]:
            key = (TopicPartition(s["topic"], s["partition"]), s["captured_at"])
            by_broker[key][s["broker"]] = s["size_bytes"]
    out = {}
    for (tp, at), replicas in by_broker.items():
        leader, isr = _placement_at(placement, tp, at)
        in_sync = [replicas[b] for b in isr if b in replicas]
        if leader in replicas:
            out[(tp, at)] = replicas[leader]
        elif in_sync:
            out[(tp, at)] = max(in_sync)
    return out


def _owners(
    members: Iterable[MemberRow], offsets: Iterable[OffsetRow]
) -> dict[tuple[dt.datetime, TopicPartition], str]:
    """Each captured partition's owner: from the members' assignments, else the offsets
    view's CONSUMER-ID. Two owners (ownership_audit's double ownership) count the bytes
    once, to the smallest member id, so the figure never doubles a read it cannot see."""
    out: dict[tuple[dt.datetime, TopicPartition], str] = {}
    for m in sorted(members, key=lambda m: m["consumer_id"], reverse=True):
        for ref in m["assignment"] or ():
            tp = TopicPartition(ref["topic"], ref["partition"])
            out[(m["captured_at"], tp)] = m["consumer_id"]
    for o in offsets:
        if o["consumer_id"]:
            tp = TopicPartition(o["topic"], o["partition"])
            out.setdefault((o["captured_at"], tp), o["consumer_id"])
    return out


def crossing(
    zone: str | None, leader: int | None, isr: Collection[int], brokers: Mapping[int, str]
) -> tuple[bool, bool] | None:
    """(crosses from the leader, crosses with follower fetching); None when a zone is unknown."""
    if zone is None or leader is None:
        return None
    replica_zones = {brokers.get(b) for b in (leader, *isr)}
    if None in replica_zones:
        return None
    return brokers[leader] != zone, zone not in replica_zones


def cross_zone(
    reads: Iterable[Read],
    zones: Zones,
    assignment: Owners | Callable[[dt.datetime], Owners] | None = None,
) -> CrossZone:
    """The reads' cross-zone bytes with the owners captured (assignment None) or under
    another assignment, fixed or as of each interval's start (a callable): the rack-aware
    what-if, whose saving is the captured figure minus this one."""
    by_start: dict[dt.datetime, dict[TopicPartition, str]] = {}
    leader_bytes = follower_bytes = unknown = unowned = 0
    leader_parts: set[TopicPartition] = set()
    follower_parts: set[TopicPartition] = set()
    crossings: dict[tuple[str | None, int | None, tuple[int, ...]], tuple[bool, bool] | None] = {}
    for r in reads:
        owner = r.owner
        if assignment is not None:
            if r.start not in by_start:
                owners = assignment(r.start) if callable(assignment) else assignment
                by_start[r.start] = {
                    TopicPartition(*tp): m for m, tps in owners.items() for tp in tps
                }
            owner = by_start[r.start].get(r.topic_partition)
        if owner is None:
            unowned += r.bytes or 0
            continue
        member = zones.consumers.get(owner)
        where = (member.zone if member else None, r.leader, r.isr)
        if where not in crossings:  # a day's reads repeat a few placements
            crossings[where] = crossing(*where, zones.brokers)
        crosses = crossings[where]
        if crosses is None:
            unknown += r.bytes or 0
            continue
        if crosses[0] and r.records:
            leader_bytes += r.bytes or 0
            leader_parts.add(r.topic_partition)
        if crosses[1] and r.records:
            follower_bytes += r.bytes or 0
            follower_parts.add(r.topic_partition)
    return CrossZone(
        leader_bytes, follower_bytes, unknown, unowned, len(leader_parts), len(follower_parts)
    )


def cost(cross_zone_bytes: int, price_per_gb: float) -> float:
    """Cross-zone bytes at `price_per_gb` per GB (10^9 bytes). AWS bills inter-AZ traffic
    $0.01/GB out and $0.01/GB in, so one cross-zone read costs $0.02/GB there; the price is
    the conf's, as clouds and contracts differ. Rounded to 10^-9 of the currency."""
    return round(cross_zone_bytes * price_per_gb / GB, 9)


def traffic(reads: Iterable[Read], zones: Zones, price_per_gb: float) -> Traffic:
    """The group's day (Traffic) from its reads as captured."""
    rows = list(reads)
    z = cross_zone(rows, zones)
    return Traffic(
        read_bytes=sum(r.bytes or 0 for r in rows),
        estimated_bytes=sum(r.bytes or 0 for r in rows if r.estimated),
        read_records=sum(r.records for r in rows),
        size_unknown_records=sum(r.records for r in rows if r.bytes is None),
        partitions_read=len({r.topic_partition for r in rows if r.records}),
        **asdict(z),
        members=len(zones.consumers),
        members_unknown_zone=sum(c.zone is None for c in zones.consumers.values()),
        offset_resets=sum(r.reset for r in rows),
        price_per_gb=price_per_gb,
        cross_zone_leader_cost=cost(z.cross_zone_leader_bytes, price_per_gb),
        cross_zone_follower_cost=cost(z.cross_zone_follower_bytes, price_per_gb),
    )


# KIP-881 (Kafka 3.5+): the classic protocol's client-side assignors that match
# client.rack with the partitions' replica racks. roundrobin never does, nor do plug-ins
# as far as we can know; the what-if runs cooperative-sticky for them, the assignor Kafka
# recommends ("Users should prefer this assignor for newer clusters": its javadoc).
RACK_AWARE_ASSIGNORS = frozenset({"range", "sticky", "cooperative-sticky"})
RECOMMENDED_ASSIGNOR = "cooperative-sticky"


@dataclass(frozen=True)
class RackAware:
    """The group's reads had every member set client.rack to its zone under a rack-aware
    assignor. KIP-881 matches any replica's rack, not the leader's: it is meant with
    follower fetching, so the follower figure is where most of its gain shows.
    saving_bytes = captured minus replayed cross-zone leader bytes, negative
    when the replay crosses more: KIP-881's assignors put balance before rack locality, so
    an unbalanced but local captured assignment can beat them; the caller keeps a group's
    assignor unless the saving is > 0. Reads unowned at a capture stay unowned (both
    figures count the same reads); unknown_zone_bytes can still shift between members, so
    a saving where it grew is an upper bound. assignor None: no rack-aware assignor can
    run (the consumer protocol's brokers ignore racks), figures as captured."""

    assignor: str | None
    cross_zone_leader_bytes: int
    cross_zone_follower_bytes: int
    unknown_zone_bytes: int
    partitions_cross_zone_leader: int
    saving_bytes: int


def rack_aware_assignor(protocol: str, declared_assignor: str | None) -> str | None:
    """The assignor the what-if runs. Only classic groups run client-side assignors: the
    consumer protocol's uniform and range (KIP-848, Kafka 4.x) ignore the member's rack,
    so follower fetching is all it can gain (research55.md §1)."""
    if protocol != GroupType.CLASSIC:
        return None
    if declared_assignor in RACK_AWARE_ASSIGNORS:
        return declared_assignor
    return RECOMMENDED_ASSIGNOR


def rack_aware_replay(
    reads: Iterable[Read],
    zones: Zones,
    members: Iterable[MemberRow],
    partitions: Iterable[PartitionRow],
    protocol: str,
    declared_assignor: str | None,
) -> RackAware:
    """The rack-aware what-if (RackAware) over the same reads `traffic` counts;
    `members` and `partitions`: the rows `reads` took."""
    rows = list(reads)
    captured = cross_zone(rows, zones)
    name = rack_aware_assignor(protocol, declared_assignor)
    if name is None:
        return RackAware(
            None,
            captured.cross_zone_leader_bytes,
            captured.cross_zone_follower_bytes,
            captured.unknown_zone_bytes,
            captured.partitions_cross_zone_leader,
            saving_bytes=0,
        )
    owned = [r for r in rows if r.owner is not None]
    plans = _rack_aware_plans(owned, zones, members, partitions, get_assignor(name))
    replay = cross_zone(owned, zones, plans.__getitem__)
    return RackAware(
        name,
        replay.cross_zone_leader_bytes,
        replay.cross_zone_follower_bytes,
        replay.unknown_zone_bytes,
        replay.partitions_cross_zone_leader,
        captured.cross_zone_leader_bytes - replay.cross_zone_leader_bytes,
    )


def _rack_aware_plans(
    owned: list[Read],
    zones: Zones,
    members: Iterable[MemberRow],
    partitions: Iterable[PartitionRow],
    assignor: Assignor,
) -> dict[dt.datetime, Assignment]:
    """The assignor's assignment at each capture that opens an interval, as if the group
    rebalanced there: its members (the owners, and the members captured without
    partitions, who take part in a rebalance too), each subscribed to every topic read
    (captures hold no subscriptions), racked in its zone and owning what it was captured
    owning, so sticky keeps what it may, as the real group's members would."""
    placement = _placements(partitions)
    at_start: dict[dt.datetime, list[Read]] = defaultdict(list)
    for r in owned:
        at_start[r.start].append(r)
    present: dict[dt.datetime, set[str]] = defaultdict(set)
    for m in members:
        present[m["captured_at"]].add(m["consumer_id"])
    plans: dict[dt.datetime, Assignment] = {}
    done: dict[tuple[object, ...], Assignment] = {}  # captures repeat the same group
    replica_zones: dict[tuple[int, ...], frozenset[str]] = {}
    for start, rows in at_start.items():
        topics = {r.topic_partition.topic for r in rows}
        counts = _partition_counts(placement, topics, start, rows)
        racks = _replica_zones(placement, zones, counts, start, replica_zones)
        mine: dict[str, list[TopicPartition]] = defaultdict(list)
        for r in rows:
            if r.owner is not None:  # always: `owned`
                mine[r.owner].append(r.topic_partition)
        # The key is the subscriptions' facts, so a capture like one before builds none.
        group = tuple(
            (m, tuple(sorted(mine.get(m, ()))), _zone(zones, m))
            for m in sorted(present[start] | mine.keys())
        )
        key = (
            tuple(sorted(topics)),
            group,
            tuple(sorted(counts.items())),
            tuple(sorted(racks.items())),
        )
        if key not in done:
            subscriptions = {m: Subscription(key[0], owned, rack=rack) for m, owned, rack in group}
            done[key] = settled_assignment(assignor, counts, subscriptions, racks)
        plans[start] = done[key]
    return plans


def _zone(zones: Zones, member: str) -> str | None:
    """client.rack set to the member's zone; none when unknown, which KIP-881's range
    matches with every rack."""
    found = zones.consumers.get(member)
    return found.zone if found else None


def _replica_zones(
    placement: _Placements,
    zones: Zones,
    counts: Mapping[str, int],
    at: dt.datetime,
    seen: dict[tuple[int, ...], frozenset[str]],
) -> dict[TopicPartition, frozenset[str]]:
    """KIP-881 compares client.rack with the racks of all replicas, in sync or not
    (AbstractPartitionAssignor); a broker without a zone adds none."""
    out: dict[TopicPartition, frozenset[str]] = {}
    for topic, count in counts.items():
        for tp in topic_partitions(topic, count):
            replicas = _latest(placement, tp, at).replicas
            if replicas not in seen:  # a day's placements repeat a few replica sets
                seen[replicas] = frozenset(zones.brokers[b] for b in replicas if b in zones.brokers)
            out[tp] = seen[replicas]
    return out


def _partition_counts(
    placement: _Placements, topics: Collection[str], at: dt.datetime, rows: Iterable[Read]
) -> dict[str, int]:
    """Each topic's partitions as the topics captures at or before `at` show them; a
    partition read but not yet captured counts too, so every read has an owner."""
    counts = {t: 0 for t in topics}
    for tp, captured in placement.items():
        if tp.topic in counts and captured.times[0] <= at:
            counts[tp.topic] = max(counts[tp.topic], tp.partition + 1)
    for r in rows:
        tp = r.topic_partition
        counts[tp.topic] = max(counts[tp.topic], tp.partition + 1)
    return counts
