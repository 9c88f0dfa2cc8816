"""Cross-zone traffic rules (metrics/cross_zone_rules.py) on hand-made bronze rows.

The shared cluster: brokers 1, 2, 3 in zones a, b, c; topic `orders` with p0 (leader 1,
ISR 1 2), p1 (leader 2, ISR 2 3), p2 (leader 3, ISR 3 1); members m-a (client.rack a),
m-b (no rack, host in b's CIDR), m-x (host in no CIDR). Captures every 10 minutes.
"""

from __future__ import annotations

import datetime as dt
import random

import pytest

from fleet_rebalance.assignors.types import TopicPartition
from fleet_rebalance.metrics.cross_zone_rules import (
    CrossZone,
    RackAware,
    Read,
    Traffic,
    ZoneConfigError,
    consumer_zone,
    cross_zone,
    group_zones,
    parse_cidrs,
    rack_aware_replay,
    reads,
    traffic,
)
from fleet_rebalance.vocabulary import ZoneSource

DAY = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
GIB = 10**9  # one decimal GB, as the bills count
CIDRS = {"10.0.0.0/16": "a", "10.0.1.0/24": "b"}
RACKS = {1: "a", 2: "b", 3: "c"}
PLACEMENT = {0: (1, [1, 2]), 1: (2, [2, 3]), 2: (3, [3, 1])}
OWNERS = {"m-a": [1], "m-b": [0], "m-x": [2]}
P0, P1, P2 = (TopicPartition("orders", p) for p in range(3))


def at(i: int) -> dt.datetime:
    return DAY + dt.timedelta(minutes=10 * i)


def offset_rows(partition, points, owner=None, topic="orders"):
    """One row per capture i: (committed offset, log end)."""
    return [
        {"captured_at": at(i), "topic": topic, "partition": partition, "current_offset": c,
         "log_end_offset": e, "consumer_id": owner, "host": None}
        for i, (c, e) in enumerate(points)
    ]  # fmt: skip


def size_rows(partition, broker, sizes, topic="orders", future=False):
    return [
        {"captured_at": at(i), "topic": topic, "partition": partition, "broker": broker,
         "size_bytes": s, "is_future": future}
        for i, s in enumerate(sizes) if s is not None
    ]  # fmt: skip


def placement_rows(captures=3, placement=PLACEMENT, topic="orders"):
    """Replicas as the ISR: every replica in sync."""
    return [
        {"captured_at": at(i), "topic": topic, "partition": p, "leader": leader,
         "replicas": isr, "isr": isr}
        for i in range(captures)
        for p, (leader, isr) in placement.items()
    ]  # fmt: skip


def member_rows(captures=3, owners=OWNERS):
    who = {"m-a": ("a", "/10.0.9.9"), "m-b": (None, "/10.0.1.7"), "m-x": ("", "/192.168.5.5")}
    return [
        {"captured_at": at(i), "consumer_id": m, "rack": who[m][0], "host": who[m][1],
         "assignment": [{"topic": "orders", "partition": p} for p in parts]}
        for i in range(captures)
        for m, parts in owners.items()
    ]  # fmt: skip


def broker_rows(racks=RACKS):
    return [{"captured_at": at(0), "broker": b, "rack": r} for b, r in racks.items()]


def zones_of(members=None, brokers=None, broker_zones=None):
    return group_zones(
        member_rows() if members is None else members,
        [],
        broker_rows() if brokers is None else brokers,
        CIDRS,
        broker_zones or {},
    )


def steady_day(placement=PLACEMENT):
    """Each partition: log end 0, 1000, 2000; leader's size 0, 1 GB, 2 GB (10^6 bytes a
    record); the group keeps up."""
    offsets, sizes = [], []
    for p, (leader, _) in placement.items():
        offsets += offset_rows(p, [(0, 0), (1000, 1000), (2000, 2000)])
        sizes += size_rows(p, leader, [0, GIB, 2 * GIB])
    return offsets, sizes


def only(tp: TopicPartition, rows: list[Read]) -> list[Read]:
    return [r for r in rows if r.topic_partition == tp]


def check(t: Traffic, rows: list[Read]) -> None:
    """What every day's row must satisfy, whatever the input."""
    known_zone = t.read_bytes - t.unknown_zone_bytes - t.unowned_bytes
    assert 0 <= t.cross_zone_follower_bytes <= t.cross_zone_leader_bytes <= known_zone
    assert 0 <= t.estimated_bytes <= t.read_bytes
    assert t.read_bytes == sum(r.bytes or 0 for r in rows)
    assert t.size_unknown_records <= t.read_records
    assert (
        0 <= t.partitions_cross_zone_follower <= t.partitions_cross_zone_leader <= t.partitions_read
    )
    assert 0 <= t.members_unknown_zone <= t.members
    assert t.offset_resets == sum(r.reset for r in rows)
    assert all(r.bytes == 0 and r.records == 0 for r in rows if r.reset)
    assert 0 <= t.cross_zone_follower_cost <= t.cross_zone_leader_cost


def test_a_rack_beats_a_cidr_and_an_unmatched_host_stays_unknown():
    """Given m-a with client.rack a and a host in b's CIDR, a member with an empty rack in
    b's CIDR, one on 192.168/16 and one whose host is a name, Then the rack wins, the CIDR
    fills an empty rack and nothing else is guessed, Expected: a by client.rack, b by cidr,
    unknown twice (no source)."""
    networks = parse_cidrs(CIDRS)
    assert consumer_zone("a", "/10.0.1.7", networks) == ("a", ZoneSource.CLIENT_RACK)
    assert consumer_zone("", "/10.0.1.7", networks) == ("b", ZoneSource.CIDR)
    assert consumer_zone(None, "consumer-7/10.0.1.7", networks) == ("b", ZoneSource.CIDR)
    assert consumer_zone(None, "/192.168.5.5", networks) == (None, None)
    assert consumer_zone(None, "consumer-7.internal", networks) == (None, None)
    assert consumer_zone(None, None, networks) == (None, None)


def test_the_longest_prefix_wins_in_ipv4_and_ipv6():
    """Given nested CIDRs /8 a, /24 b, /25 c and IPv6 /32 a, /48 b, Then a host takes the
    longest prefix holding it, an IPv4-mapped IPv6 host its IPv4 address, Expected: as
    listed."""
    networks = parse_cidrs(
        {"10.0.0.0/8": "a", "10.0.1.0/24": "b", "10.0.1.128/25": "c",
         "2001:db8::/32": "a", "2001:db8:1::/48": "b"}
    )  # fmt: skip
    zone = {h: consumer_zone(None, h, networks).zone for h in (
        "/10.9.9.9", "/10.0.1.5", "/10.0.1.200", "/2001:db8:2::7", "/2001:db8:1::7",
        "/::ffff:10.0.1.200", "/fd00::1",
    )}  # fmt: skip
    assert zone == {
        "/10.9.9.9": "a", "/10.0.1.5": "b", "/10.0.1.200": "c", "/2001:db8:2::7": "a",
        "/2001:db8:1::7": "b", "/::ffff:10.0.1.200": "c", "/fd00::1": None,
    }  # fmt: skip


def test_a_cidr_that_is_not_one_fails_naming_it():
    """Given a CIDR with an octet of 300, Expected: ZoneConfigError naming it."""
    with pytest.raises(ZoneConfigError, match=r"expected a CIDR .* found '10.0.0.300/8'"):
        parse_cidrs({"10.0.0.300/8": "a"})


def test_the_captured_rack_wins_and_the_map_fills_the_gaps():
    """Given broker 1 captured with rack old then a, broker 2 with none, broker 3 not
    captured, and the map 1 z, 2 b, 3 c, Then the latest captured rack wins and the map
    fills only the brokers without one, Expected: 1 a, 2 b, 3 c."""
    rows = [
        {"captured_at": at(0), "broker": 1, "rack": "old"},
        {"captured_at": at(1), "broker": 1, "rack": "a"},
        {"captured_at": at(1), "broker": 2, "rack": None},
    ]
    zones = zones_of(brokers=rows, broker_zones={1: "z", 2: "b", 3: "c"})
    assert zones.brokers == {1: "a", 2: "b", 3: "c"}


def test_the_shared_day_as_a_row():
    """Given the steady day (2 GB read from each partition), p0 read from b (leader in a,
    follower in b), p1 from a (replicas in b and c), p2 by m-x (zone unknown), Then p0 and
    p1 cross from the leader, only p1 with follower fetching, p2 is unknown, Expected: the
    literal row, $0.02 per GB."""
    offsets, sizes = steady_day()
    rows = reads(offsets, member_rows(), placement_rows(), sizes, {})
    t = traffic(rows, zones_of(), price_per_gb=0.02)
    assert t == Traffic(
        read_bytes=6 * GIB, estimated_bytes=0, read_records=6000, size_unknown_records=0,
        cross_zone_leader_bytes=4 * GIB, cross_zone_follower_bytes=2 * GIB,
        unknown_zone_bytes=2 * GIB, unowned_bytes=0, partitions_read=3,
        partitions_cross_zone_leader=2, partitions_cross_zone_follower=1,
        members=3, members_unknown_zone=1, offset_resets=0, price_per_gb=0.02,
        cross_zone_leader_cost=0.08, cross_zone_follower_cost=0.04,
    )  # fmt: skip
    check(t, rows)


def test_a_lagging_group_reads_its_committed_growth_at_each_interval_rate():
    """Given p0 growing 2 MB over 100 records then 6 MB over 200 (20 kB then 30 kB a
    record, as the leader's replica measures it), the leader's replica missing at the
    second capture (the ISR follower 2 has it; broker 3 out of ISR and a future replica
    are bigger), the follower 100 kB bigger at the third (each replica deletes segments on
    its own schedule), and the group committing 50 then 150, Then each interval takes its
    own rate, from the leader's replica where captured, Expected: 50 x 20 kB, then 150 x
    30 kB."""
    offsets = offset_rows(0, [(0, 0), (50, 100), (200, 300)], owner="m-b")
    sizes = (
        size_rows(0, 1, [0, None, 8_000_000])
        + size_rows(0, 2, [0, 2_000_000, 8_100_000])
        + size_rows(0, 3, [0, 9_000_000, 9_000_000])
        + size_rows(0, 1, [0, 9_000_000, 9_000_000], future=True)
    )
    rows = reads(offsets, [], placement_rows(), sizes, {"orders": 1})
    assert [(r.records, r.bytes, r.estimated) for r in rows] == [
        (50, 1_000_000, False),
        (150, 4_500_000, False),
    ]


def test_a_retention_drop_takes_the_days_measured_rate():
    """Given p0's size 1000 -> 3000 -> 1500 -> 4500 over log ends 0, 100, 200, 300 (the
    drop: retention deleted a segment) and the group keeping up, Then the dropped interval
    takes the day's measured rate, 5000 bytes over 200 records, Expected: 2000, 2500, 3000
    bytes, none estimated."""
    offsets = offset_rows(0, [(0, 0), (100, 100), (200, 200), (300, 300)], owner="m-b")
    sizes = size_rows(0, 1, [1000, 3000, 1500, 4500])
    rows = reads(offsets, [], placement_rows(4), sizes, {"orders": 7})
    assert [(r.bytes, r.estimated) for r in rows] == [(2000, False), (2500, False), (3000, False)]


def test_without_sizes_the_configured_record_size_is_an_estimate():
    """Given no partition_sizes, 100 records read from orders (configured 200 bytes) and
    40 from audit (the default 50), Then committed growth x the topic's record size,
    Expected: 20000 + 2000 bytes read, all of it estimated."""
    offsets = offset_rows(0, [(0, 100), (100, 200)], owner="m-b") + offset_rows(
        0, [(10, 50), (50, 90)], owner="m-b", topic="audit"
    )
    rows = reads(offsets, [], placement_rows(2), [], {"orders": 200}, default_record_bytes=50)
    t = traffic(rows, zones_of(), price_per_gb=0.02)
    assert (t.read_bytes, t.estimated_bytes, t.read_records) == (22000, 22000, 140)
    check(t, rows)


def test_without_a_record_size_the_bytes_are_unknown_not_zero():
    """Given no sizes and no record size, 100 records read by m-b, Then the read is
    counted in records and in size_unknown_records, Expected: bytes None, 0 bytes read,
    one partition read, nothing cross-zone."""
    offsets = offset_rows(0, [(0, 100), (100, 200)], owner="m-b")
    rows = reads(offsets, [], placement_rows(2), [], {})
    assert [(r.records, r.bytes) for r in rows] == [(100, None)]
    t = traffic(rows, zones_of(), price_per_gb=0.02)
    assert (t.read_bytes, t.read_records, t.size_unknown_records, t.partitions_read) == (
        0, 100, 100, 1,
    )  # fmt: skip
    assert (t.partitions_cross_zone_leader, t.cross_zone_leader_bytes) == (1, 0)
    check(t, rows)


def test_an_offset_reset_reads_nothing_and_is_counted():
    """Given committed offsets 100 -> 40 -> 90 at 10 bytes a record, Then the reset reads 0
    bytes and counts once, Expected: 0 then 500 bytes, one reset."""
    offsets = offset_rows(0, [(100, 100), (40, 200), (90, 300)], owner="m-b")
    sizes = size_rows(0, 1, [1000, 2000, 3000])
    rows = reads(offsets, [], placement_rows(), sizes, {})
    assert [(r.records, r.bytes, r.reset) for r in rows] == [(0, 0, True), (50, 500, False)]
    t = traffic(rows, zones_of(), price_per_gb=0.02)
    assert (t.offset_resets, t.read_bytes, t.cross_zone_leader_bytes) == (1, 500, 500)
    check(t, rows)


def test_an_unowned_interval_is_counted_apart():
    """Given p1 owned by nobody at the first capture and by m-a from the second, Then the
    first interval's bytes are unowned and the second's cross zones (a reads from b and c),
    Expected: 1 GB unowned, 1 GB cross-zone both ways."""
    offsets, sizes = steady_day()
    members = [m for m in member_rows() if m["captured_at"] != at(0)]
    rows = only(P1, reads(offsets, members, placement_rows(), sizes, {}))
    assert [r.owner for r in rows] == [None, "m-a"]
    assert cross_zone(rows, zones_of()) == CrossZone(GIB, GIB, 0, GIB, 1, 1)


def test_follower_fetching_saves_an_in_sync_follower_in_zone_only():
    """Given p0 read by m-b (zone b) from leader 1 (a), its follower 2 (b) in the ISR at the
    first capture and out of it at the second, Then follower fetching keeps the first
    interval in zone and not the second, Expected: 2 GB cross from the leader, 1 GB with
    follower fetching."""
    offsets, sizes = steady_day()
    shrunk = {"captured_at": at(1), "topic": "orders", "partition": 0, "leader": 1,
              "replicas": [1, 2], "isr": [1]}  # fmt: skip
    placement = [*placement_rows(1), shrunk]
    rows = only(P0, reads(offsets, member_rows(), placement, sizes, {}))
    assert [r.isr for r in rows] == [(1, 2), (1,)]
    assert cross_zone(rows, zones_of()) == CrossZone(2 * GIB, GIB, 0, 0, 1, 1)


def test_an_unzoned_broker_in_sync_makes_the_read_unknown():
    """Given broker 3 with no rack and no map entry, Then p1 (ISR 2 3) read by m-a cannot be
    placed though its leader's zone is known, Expected: p1's 2 GB unknown, p0 still cross."""
    offsets, sizes = steady_day()
    rows = reads(offsets, member_rows(), placement_rows(), sizes, {})
    zones = zones_of(brokers=broker_rows({1: "a", 2: "b", 3: None}))
    assert cross_zone(rows, zones) == CrossZone(2 * GIB, 0, 4 * GIB, 0, 1, 0)


def test_the_rack_aware_what_if_and_its_saving():
    """Given the shared day and an alternative assignment m-a p0 p2, m-b p1 (what a
    rack-aware assignor could give), Then p0 and p1 read in zone and p2 (leader c, follower
    a) crosses only from the leader; as a callable switching at the second capture, the
    first interval keeps the captured owners, Expected: saving 2 GB from the leader and 2 GB
    with follower fetching; the callable's figures as listed."""
    offsets, sizes = steady_day()
    rows = reads(offsets, member_rows(), placement_rows(), sizes, {})
    zones = zones_of()
    now = cross_zone(rows, zones)
    alternative = {"m-a": [P0, P2], "m-b": [P1], "m-x": []}
    then = cross_zone(rows, zones, alternative)
    assert then == CrossZone(2 * GIB, 0, 0, 0, 1, 0)
    assert now.cross_zone_leader_bytes - then.cross_zone_leader_bytes == 2 * GIB
    assert now.cross_zone_follower_bytes - then.cross_zone_follower_bytes == 2 * GIB
    captured = {m: [TopicPartition("orders", p) for p in ps] for m, ps in OWNERS.items()}
    switching = cross_zone(rows, zones, lambda t: captured if t == at(0) else alternative)
    assert switching == CrossZone(3 * GIB, GIB, GIB, 0, 3, 1)


def rack_aware_day(replicas, owners, protocol="classic", assignor="range"):
    """The steady day on `replicas` (partition -> replicas, the first the leader, all in
    sync; brokers 1, 2, 3 in a, b, c) read by `owners` at every capture: the captured
    figure and the rack-aware what-if."""
    placed = {p: (brokers[0], brokers) for p, brokers in replicas.items()}
    offsets, sizes = steady_day(placed)
    members, partitions = member_rows(owners=owners), placement_rows(placement=placed)
    rows = reads(offsets, members, partitions, sizes, {})
    zones = zones_of(members)
    what_if = rack_aware_replay(rows, zones, members, partitions, protocol, assignor)
    return cross_zone(rows, zones), what_if


def test_rack_aware_range_reads_in_zone_where_the_replicas_allow():
    """Given a range group, m-a (a) owning p0 p1 and m-b (b) p2 p3 (plain ranges), p0 on
    broker 1 (a), p1 on 2 3 (b c), p2 on 1 3 (a c), p3 on 2 (b), Then KIP-881's range gives
    m-a p0 p2 and m-b p1 p3, all in zone, Expected: 4 GB captured cross-zone (p1, p2) both
    ways, 0 under the what-if, saving the captured 4 GB."""
    replicas = {0: [1], 1: [2, 3], 2: [1, 3], 3: [2]}
    now, then = rack_aware_day(replicas, {"m-a": [0, 1], "m-b": [2, 3]})
    assert now == CrossZone(4 * GIB, 4 * GIB, 0, 0, 2, 2)
    assert then == RackAware("range", 0, 0, 0, 0, saving_bytes=4 * GIB)


def test_rack_aware_range_puts_balance_first_and_the_saving_can_be_negative():
    """Given p0 p1 p2 on broker 1 (a) and p3 on 2 (b), captured unbalanced but in zone
    (m-a p0 p1 p2, m-b p3), Then range keeps two partitions each and m-b reads one of a's,
    Expected: 2 GB cross-zone under the what-if, a saving of -2 GB, reported as it is."""
    replicas = {0: [1], 1: [1], 2: [1], 3: [2]}
    now, then = rack_aware_day(replicas, {"m-a": [0, 1, 2], "m-b": [3]})
    assert now.cross_zone_leader_bytes == 0
    assert then == RackAware("range", 2 * GIB, 2 * GIB, 0, 1, saving_bytes=-2 * GIB)


def test_a_roundrobin_group_is_replayed_with_cooperative_sticky_settled():
    """Given a roundrobin group (m-a p0 p2, m-b p1 p3), p0 and p2 only in c, p1 in a, p3 in
    b, Then the what-if runs cooperative-sticky (roundrobin is not rack-aware) to where it
    settles after the follow-up rebalance: m-a p1 and a c partition, m-b p3 and the other,
    Expected: 6 GB captured, 4 GB under the what-if (its first round alone, with the
    moving partitions unowned, would show 2), as sticky's."""
    replicas = {0: [3], 1: [1], 2: [3], 3: [2]}
    owners = {"m-a": [0, 2], "m-b": [1, 3]}
    now, then = rack_aware_day(replicas, owners, assignor="roundrobin")
    assert now.cross_zone_leader_bytes == 6 * GIB
    assert then == RackAware("cooperative-sticky", 4 * GIB, 4 * GIB, 0, 2, 2 * GIB)
    _, sticky = rack_aware_day(replicas, owners, assignor="sticky")
    assert sticky == RackAware("sticky", 4 * GIB, 4 * GIB, 0, 2, 2 * GIB)


@pytest.mark.parametrize("declared", [None, "com.example.assignors:Custom", "uniform"])
def test_an_unknown_or_plug_in_assignor_is_replayed_with_cooperative_sticky(declared):
    """Given the in-zone-able day of the range test with no, a plug-in or the consumer
    protocol's assignor declared on a classic group, Expected: cooperative-sticky, all in
    zone."""
    replicas = {0: [1], 1: [2, 3], 2: [1, 3], 3: [2]}
    _, then = rack_aware_day(replicas, {"m-a": [0, 1], "m-b": [2, 3]}, assignor=declared)
    assert then == RackAware("cooperative-sticky", 0, 0, 0, 0, saving_bytes=4 * GIB)


def test_a_consumer_protocol_group_gains_follower_fetching_only():
    """Given the range test's day on the consumer protocol (KIP-848: the brokers' uniform
    and range ignore racks), Expected: no assignor, the captured figures, saving 0."""
    replicas = {0: [1], 1: [2, 3], 2: [1, 3], 3: [2]}
    now, then = rack_aware_day(replicas, {"m-a": [0, 1], "m-b": [2, 3]}, "consumer", "uniform")
    assert now == CrossZone(4 * GIB, 4 * GIB, 0, 0, 2, 2)
    assert then == RackAware(None, 4 * GIB, 4 * GIB, 0, 2, saving_bytes=0)


def test_a_member_without_a_zone_has_no_rack_and_matches_any():
    """Given m-a (a) owning p0 (b) p1 (a) and m-x (zone unknown) p2 (c) p3 (a), Then range
    gives m-a its rack's p1 p3 and m-x, whose missing rack matches any, p0 p2, Expected:
    2 GB saved (p0), m-x's 4 GB unknown either way."""
    replicas = {0: [2], 1: [1], 2: [3], 3: [1]}
    now, then = rack_aware_day(replicas, {"m-a": [0, 1], "m-x": [2, 3]})
    assert now == CrossZone(2 * GIB, 2 * GIB, 4 * GIB, 0, 1, 1)
    assert then == RackAware("range", 0, 0, 4 * GIB, 0, saving_bytes=2 * GIB)


@pytest.mark.parametrize("declared", ["range", "sticky", "cooperative-sticky"])
def test_replicas_in_every_zone_leave_the_assignment_as_it_is(declared):
    """Given every partition on brokers 1 2 3 (leaders 1 2 3 1) and the plain ranges, Then
    Kafka does not use rack-aware assignment (no partition's racks differ from the rest),
    every member has an in-sync replica in zone, Expected: the captured figures (6 GB from
    the leader: p1, p2, p3), 0 with follower fetching either way, saving 0."""
    replicas = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 2, 3]}
    now, then = rack_aware_day(replicas, {"m-a": [0, 1], "m-b": [2, 3]}, assignor=declared)
    assert now == CrossZone(6 * GIB, 0, 0, 0, 3, 0)
    assert then == RackAware(declared, 6 * GIB, 0, 0, 3, saving_bytes=0)


def _random_day(rng: random.Random):
    topics = {f"t{i}": rng.randint(1, 3) for i in range(rng.randint(1, 3))}
    tps = [(t, p) for t, count in topics.items() for p in range(count)]
    captures = rng.randint(2, 6)
    racks = {b: rng.choice(["a", "b", "c", None]) for b in (1, 2, 3)}
    members = [f"m{i}" for i in range(rng.randint(1, 3))]
    rack = {m: rng.choice(["a", "b", "", None]) for m in members}
    host = {m: rng.choice(["/10.0.9.9", "/10.0.1.7", "/192.168.0.1", "name"]) for m in members}
    offsets, sizes, placements, member_rows_ = [], [], [], []
    for topic, p in tps:
        end = committed = size = 0
        for i in range(captures):
            replicas = rng.sample([1, 2, 3], rng.randint(1, 3))
            isr = replicas[: rng.randint(1, len(replicas))]
            placements.append({"captured_at": at(i), "topic": topic, "partition": p,
                               "leader": rng.choice([*isr, None]), "replicas": replicas,
                               "isr": isr})  # fmt: skip
            end += rng.randint(0, 500)
            committed = rng.choice([max(committed - 30, 0), rng.randint(committed, end)])
            offsets.append({"captured_at": at(i), "topic": topic, "partition": p,
                            "current_offset": None if rng.random() < 0.1 else committed,
                            "log_end_offset": None if rng.random() < 0.1 else end,
                            "consumer_id": rng.choice([*members, None]), "host": None})  # fmt: skip
            size = max(0, size + rng.randint(-5000, 20000))
            for b in rng.sample([1, 2, 3], rng.randint(0, 3)):
                sizes.append({"captured_at": at(i), "topic": topic, "partition": p,
                              "broker": b, "size_bytes": size + rng.randint(0, 99),
                              "is_future": rng.random() < 0.1})  # fmt: skip
    for i in range(captures):
        for m in members:
            held = rng.sample(tps, rng.randint(0, len(tps)))
            assignment = [{"topic": t, "partition": p} for t, p in held]
            member_rows_.append({"captured_at": at(i), "consumer_id": m, "rack": rack[m],
                                 "host": host[m],
                                 "assignment": rng.choice([assignment, None])})  # fmt: skip
    record = {t: 100 for t in topics if rng.random() < 0.5}
    return offsets, member_rows_, placements, sizes, racks, record


@pytest.mark.parametrize("seed", range(200))
def test_random_days_keep_the_invariants(seed):
    """Given seeded random days (resets, missing offsets and sizes, size drops, future
    replicas, unzoned brokers and members, unowned partitions), Then the invariants hold,
    replaying the captured owners as an assignment gives the captured figures, and the
    rack-aware what-if reads no more than the owned bytes and saves captured - replayed."""
    offsets, members, placements, sizes, racks, record = _random_day(random.Random(seed))
    rows = reads(offsets, members, placements, sizes, record)
    zones = group_zones(members, offsets, broker_rows(racks), CIDRS, {})
    check(traffic(rows, zones, price_per_gb=0.02), rows)

    def captured(start):
        owned: dict[str, list[TopicPartition]] = {}
        for r in rows:
            if r.start == start and r.owner:
                owned.setdefault(r.owner, []).append(r.topic_partition)
        return owned

    now = cross_zone(rows, zones, captured)
    assert now == cross_zone(rows, zones)

    rng = random.Random(f"rack-aware {seed}")
    protocol = rng.choice(["classic", "classic", "consumer"])
    declared = rng.choice(["range", "roundrobin", "sticky", "cooperative-sticky", None, "x:Y"])
    then = rack_aware_replay(rows, zones, members, placements, protocol, declared)
    owned_bytes = sum(r.bytes or 0 for r in rows if r.owner)
    assert 0 <= then.cross_zone_follower_bytes <= then.cross_zone_leader_bytes <= owned_bytes
    assert then.cross_zone_leader_bytes + then.unknown_zone_bytes <= owned_bytes
    assert then.saving_bytes == now.cross_zone_leader_bytes - then.cross_zone_leader_bytes
    if protocol == "consumer":
        assert then.assignor is None and then.saving_bytes == 0
    else:
        assert then.assignor in (declared, "cooperative-sticky")
