"""The generator's zones (issue 55): brokers with a broker.rack, consumers on per-zone
subnets, the brokers' and log dirs' views in the captures, and `<out>.cross_zone.jsonl`,
the cross-zone truth. No Spark: the views are read with the parsers ingest runs, and the
truth is recomputed from them with cross_zone_traffic's pure rules."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.generate import zones
from fleet_rebalance.generate.broker_views import record_bytes
from fleet_rebalance.generate.cross_zone_truth import CrossZoneTruth, cross_zone_path
from fleet_rebalance.generate.fleet import ZONE_PLANS, Fleet, FleetSpec, write_fleet
from fleet_rebalance.generate.render import GroupView, MemberView, TopicView
from fleet_rebalance.metrics import cross_zone_rules as rules

PROJECT = Path(__file__).resolve().parent.parent
# 22:00 to 05:20 over two dates: prod-west's failed offsets capture at 03:00, each cluster's
# partition expansion at 04:40 (its new partitions unplaced until the 05:00 topics view).
SPEC = FleetSpec(clusters=3, groups_per_cluster=5, hours=7.5)
TABLES = ("offsets", "members", "group_states", "topic_partitions", "brokers", "partition_sizes")
COLUMNS = (
    "read_records",
    "read_bytes",
    "size_unknown_records",
    "partitions_read",
    "cross_zone_leader_bytes",
    "partitions_cross_zone_leader",
    "cross_zone_follower_bytes",
    "unknown_zone_bytes",
    "unowned_bytes",
    "rack_aware_saving_bytes",
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """The raw root SPEC's fleet was written to."""
    raw = tmp_path_factory.mktemp("zones") / "raw"
    write_fleet(SPEC, raw)
    return raw


@pytest.fixture(scope="module")
def parsed(fleet: Path) -> dict[str, Any]:
    """{"files": {relative path: ParseResult}, table: [rows of every capture]}."""
    out: dict[str, Any] = {"files": {}, **{t: [] for t in TABLES}}
    for path in sorted(fleet.glob("*/captures/*/*")):
        relative = path.relative_to(fleet).as_posix()
        result = parse_capture(relative, path.read_bytes())
        out["files"][relative] = result
        for table in TABLES:
            out[table] += result.records(table)
    return out


def truth(fleet: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in cross_zone_path(fleet).read_text().splitlines()]


def test_every_brokers_and_log_dirs_view_parses_clean(fleet, parsed):
    """Given the fleet's captures, Then each holds a log-dirs view, the first of each hour
    a brokers view too, and every one parses with no quarantined line. Expected: one rack
    per broker, the cluster's zones in turn (us-east-1a, b, c, then a again)."""
    folders = sorted({p.parent for p in fleet.glob("*/captures/*/*")})
    for folder in folders:
        names = {p.name for p in folder.iterdir()}
        assert "log-dirs.txt" in names, folder
        assert ("brokers.txt" in names) == folder.name.endswith("00Z"), folder
    views = {
        name: result
        for name, result in parsed["files"].items()
        if name.endswith(("brokers.txt", "log-dirs.txt"))
    }
    assert len(views) == len(folders) + sum(f.name.endswith("00Z") for f in folders)
    for name, result in views.items():
        assert (result.status, result.quarantine) == ("ok", []), name
        assert result.kind == ("brokers" if name.endswith("brokers.txt") else "log_dirs")
    racks = {(r["cluster"], r["broker"], r["rack"]) for r in parsed["brokers"]}
    assert racks == {
        ("prod-east", 1, "us-east-1a"),
        ("prod-east", 2, "us-east-1b"),
        ("prod-east", 3, "us-east-1c"),
        ("prod-west", 1, "us-west-2a"),
        ("prod-west", 2, "us-west-2b"),
        ("prod-west", 3, "us-west-2c"),
        ("prod-west", 4, "us-west-2a"),
        ("lab", 1, "eu-west-1a"),
        ("lab", 2, "eu-west-1b"),
        ("lab", 3, "eu-west-1c"),
        ("lab", 4, "eu-west-1a"),
        ("lab", 5, "eu-west-1b"),
    }


def test_replica_sizes_only_grow_by_their_topics_bytes_per_record(parsed):
    """Given every replica's size at every capture, Then no size ever shrinks (the
    generator models no retention), the replicas of a partition are the same size, and a
    size is the partition's log end (offsets view) times its topic's bytes per record."""
    series: dict[tuple[str, str, int, int], list[tuple[dt.datetime, int]]] = defaultdict(list)
    at_capture: dict[tuple[str, str, int, dt.datetime], set[int]] = defaultdict(set)
    for r in parsed["partition_sizes"]:
        series[(r["cluster"], r["topic"], r["partition"], r["broker"])].append(
            (r["captured_at"], r["size_bytes"])
        )
        at_capture[(r["cluster"], r["topic"], r["partition"], r["captured_at"])].add(
            r["size_bytes"]
        )
    for key, points in series.items():
        sizes = [size for _, size in sorted(points)]
        assert sizes == sorted(sizes), key
    assert all(len(sizes) == 1 for sizes in at_capture.values())
    checked = 0
    for o in parsed["offsets"]:
        (size,) = at_capture[(o["cluster"], o["topic"], o["partition"], o["captured_at"])]
        assert size == o["log_end_offset"] * record_bytes(SPEC.seed, o["cluster"], o["topic"])
        checked += 1
    assert checked > 1000


def test_every_consumer_host_is_in_its_zones_subnet(parsed):
    """Given every member host the members views print, Then each is in one of the
    subnets of its cluster's region, and prod-east's one_zone group's all in its first
    zone; conf/local.yaml maps exactly those subnets, so a nightly with it places them."""
    networks = {ipaddress.ip_network(cidr): zone for cidr, zone in zones.CONSUMER_CIDRS.items()}
    regions = {"prod-east": "us-east-1", "prod-west": "us-west-2", "lab": "eu-west-1"}
    clusters = Fleet(SPEC).clusters
    one_zone = {
        (clusters[c].name, clusters[c].groups[g].name)
        for (c, g), plan in ZONE_PLANS.items()
        if plan == "one_zone"
    }
    hosts = {(r["cluster"], r["group_id"], r["host"]) for r in parsed["members"]}
    assert len(hosts) > 50
    one_zone_hosts = 0
    for cluster, group, host in hosts:
        address = ipaddress.ip_address(host.removeprefix("/"))
        (zone,) = [z for net, z in networks.items() if address in net]
        assert zone.startswith(regions[cluster]), (cluster, host)
        if (cluster, group) in one_zone:
            assert zone == regions[cluster] + "a", (group, host)
            one_zone_hosts += 1
    assert one_zone_hosts >= 2
    conf = yaml.safe_load((PROJECT / "conf" / "local.yaml").read_text())
    assert conf["zones"]["consumer_cidrs"] == zones.CONSUMER_CIDRS


def test_a_host_moved_to_another_zone_keeps_its_place_in_the_subnet():
    """Given the lowest and highest draws of a host, Then each zone's host is in that
    zone's /18, and moving it to another zone lands where that zone's would be."""
    for cluster in range(4):
        for zone in range(len(zones.ZONE_SUFFIXES)):
            subnet = ipaddress.ip_network(zones.consumer_subnet(cluster, zone))
            for third, fourth in ((0, 1), (255, 254), (64, 7)):
                host = zones.consumer_host(cluster, zone, third, fourth)
                assert ipaddress.ip_address(host[1:]) in subnet
                assert zones.host_zone(host) == zones.cluster_zones(cluster)[zone]
                assert zones.moved_to_zone(host, 2) == zones.consumer_host(
                    cluster, 2, third, fourth
                )


def test_the_rack_aware_group_reads_in_zone_and_the_one_zone_group_across(fleet):
    """Given prod-east's two designated groups' truth, Then the rack-aware one (its
    members placed as KIP-881 places them by their partitions' leaders) reads nothing
    across zones and has nothing to save; the one-zone group reads more than half of
    what it read from owned, placed partitions across zones, which rack-aware assignment
    with follower fetching saves. Expected: one row of each per date."""
    east = Fleet(SPEC).clusters[0].groups
    plans = {east[g].name: plan for (c, g), plan in ZONE_PLANS.items() if c == 0}
    rows = [r for r in truth(fleet) if r["cluster"] == "prod-east" and r["group_id"] in plans]
    assert sorted((plans[r["group_id"]], r["date"]) for r in rows) == [
        ("one_zone", "2026-11-19"),
        ("one_zone", "2026-11-20"),
        ("rack_aware", "2026-11-19"),
        ("rack_aware", "2026-11-20"),
    ]
    for r in rows:
        assert r["read_bytes"] > 0 and r["partitions_read"] > 0
        if plans[r["group_id"]] == "rack_aware":
            assert (r["partitions_cross_zone_leader"], r["cross_zone_leader_bytes"]) == (0, 0)
            assert r["rack_aware_saving_bytes"] == 0
        else:
            placed = r["read_bytes"] - r["unowned_bytes"] - r["unknown_zone_bytes"]
            assert r["partitions_cross_zone_leader"] > 0
            assert r["cross_zone_leader_bytes"] > placed / 2
            assert r["rack_aware_saving_bytes"] > 0


def _recomputed(parsed: dict[str, Any], cluster: str, group: str, date: str) -> dict[str, int]:
    """cross_zone_traffic's figures for one group's date from the parsed captures, as the
    metrics step computes them (metrics/cross_zone.py group_row), with the protocol and
    declared assignor read from the state views."""

    def of_day(row: dict[str, Any]) -> bool:
        return row["cluster"] == cluster and row["capture_date"].isoformat() == date

    offsets = [
        {**r, "host": None} for r in parsed["offsets"] if of_day(r) and r["group_id"] == group
    ]
    members = [
        {**r, "rack": None} for r in parsed["members"] if of_day(r) and r["group_id"] == group
    ]
    states = [
        r
        for r in parsed["group_states"]
        if of_day(r) and r["group_id"] == group and r["assignment_strategy"]
    ]
    declared = max(states, key=lambda r: r["captured_at"])["assignment_strategy"]
    read = {r["topic"] for r in offsets}
    placement = [r for r in parsed["topic_partitions"] if of_day(r) and r["topic"] in read]
    sizes = [r for r in parsed["partition_sizes"] if of_day(r) and r["topic"] in read]
    brokers = [r for r in parsed["brokers"] if of_day(r)]
    reads = rules.reads(offsets, members, placement, sizes, {}, None)
    group_zones = rules.group_zones(members, offsets, brokers, zones.CONSUMER_CIDRS, {})
    traffic = rules.traffic(reads, group_zones, price_per_gb=0.02)
    protocol = "consumer" if declared == "uniform" else "classic"
    replay = rules.rack_aware_replay(reads, group_zones, members, placement, protocol, declared)
    figures = {c: getattr(traffic, c) for c in COLUMNS if hasattr(traffic, c)}
    saving = traffic.cross_zone_leader_bytes - replay.cross_zone_follower_bytes
    return figures | {"rack_aware_saving_bytes": saving}


def test_the_truth_is_what_the_written_captures_give(fleet, parsed):
    """Given the truth the simulation wrote and the fleet's written views (offsets,
    members, state, topics, brokers, log dirs), When each group's date is recomputed
    from the views with cross_zone_traffic's rules, Then every group with offsets on a
    date has its row and the figures agree: bytes within 1%, counts exactly. The fleet
    holds every case the rules single out: reads unowned (a 3.x group shown
    mid-rebalance), of unplaced partitions (added since the last topics view), across
    zones from the leader and with follower fetching."""
    rows = truth(fleet)
    groups = {
        (r["cluster"], r["group_id"], r["capture_date"].isoformat()) for r in parsed["offsets"]
    }
    assert {(r["cluster"], r["group_id"], r["date"]) for r in rows} == groups
    for row in rows:
        expected = _recomputed(parsed, row["cluster"], row["group_id"], row["date"])
        for column in COLUMNS:
            if column.endswith("_bytes"):
                assert row[column] == pytest.approx(expected[column], rel=0.01), (row, column)
            else:
                assert row[column] == expected[column], (row, column)
    for column in ("unowned_bytes", "unknown_zone_bytes", "cross_zone_follower_bytes"):
        assert any(r[column] > 0 for r in rows), column


def test_the_truth_tallies_each_read_where_the_captures_place_it():
    """Given two captures of a range group 20 minutes apart, its members in us-east-1a
    and 1b, topic t's p0-p2 led from 1a, 1b and 1c with a replica in every zone, p3 not
    yet in the topics view: p0 read in zone, p1 from 1b's leader by the 1a member, p2
    owned by nobody (the 3.x view of a rebalance), p3 by the 1b member. Then p3's records
    have no size (unknown bytes: never 0) and no zone; p2's bytes are unowned; only p1
    crosses, and with follower fetching nothing would. Expected: the literal tallies,
    bytes as records times t's bytes per record."""
    brokers = {1: "us-east-1a", 2: "us-east-1b", 3: "us-east-1c"}
    placed = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
    topics = {"t": TopicView("id", placed, placed)}
    members = [
        MemberView("m1", None, "/10.0.0.5", "c1", [("t", 0), ("t", 1)]),
        MemberView("m2", None, "/10.0.64.5", "c2", [("t", 3)]),
    ]
    # (committed, log end) of p0-p3 at 10:00 (with the topics view) and at 10:20.
    captures = (
        (0, topics, {0: (200, 1000), 1: (150, 1000), 2: (100, 1000), 3: (0, 1000)}),
        (20, None, {0: (300, 2000), 1: (200, 2000), 2: (120, 2000), 3: (30, 2000)}),
    )
    truth = CrossZoneTruth(seed=7)
    for minutes, shown, offsets in captures:
        at = dt.datetime(2026, 11, 20, 10, minutes, tzinfo=dt.UTC)
        by_partition = {("t", p): offset for p, offset in offsets.items()}
        view = GroupView("g", "Stable", "range", ("kafka-1:9092", 1), members, by_partition)
        truth.capture(at, "prod-east", brokers, [view], shown, offsets_captured=True)
    per_record = record_bytes(7, "prod-east", "t")
    (row,) = truth.records()
    assert row == {
        "cluster": "prod-east",
        "group_id": "g",
        "date": "2026-11-20",
        "read_records": 100 + 50 + 20 + 30,
        "read_bytes": (100 + 50 + 20) * per_record,
        "size_unknown_records": 30,
        "partitions_read": 4,
        "cross_zone_leader_bytes": 50 * per_record,
        "partitions_cross_zone_leader": 1,
        "cross_zone_follower_bytes": 0,
        "unknown_zone_bytes": 0,
        "unowned_bytes": 20 * per_record,
        "rack_aware_saving_bytes": 50 * per_record,
    }
