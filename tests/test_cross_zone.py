"""cross_zone_traffic's Spark glue (metrics/cross_zone.py) on tiny bronze frames: the
rows Spark returns are the rules applied in plain Python to the same rows (an oracle,
every column), a share group has none, and the figures are the expected ones."""

from __future__ import annotations

import datetime as dt

import pytest

from fleet_rebalance.config import ZonesConfig
from fleet_rebalance.metrics import cross_zone_rules as rules
from fleet_rebalance.metrics.cross_zone import (
    cross_zone_traffic,
    measured_sizes,
    placement_changes,
    traffic_row,
)
from fleet_rebalance.metrics.offset_samples import offset_samples
from fleet_rebalance.metrics.protocols import group_context
from fleet_rebalance.pipeline import gold
from fleet_rebalance.pipeline.bronze import TABLES as BRONZE

pytestmark = pytest.mark.spark

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 8)
ZONES = ZonesConfig(consumer_cidrs={"10.0.1.0/24": "b"}, record_bytes={"clicks": 100})
# Brokers 1 and 2 in zones a and b (captured racks); orders-0 led by 1, orders-1 by 2,
# each with the other in sync; clicks-0 led by 1 alone.
PLACEMENT = {("orders", 0): (1, [1, 2]), ("orders", 1): (2, [2, 1]), ("clicks", 0): (1, [1])}


def frame(spark, table: str, rows: list[dict]):
    schema = BRONZE[table]
    return spark.createDataFrame(
        [tuple(r.get(f.name) for f in schema.fields) for r in rows], schema
    )


def at(i: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=10 * i)


def offset(cluster: str, group: str, tp: tuple[str, int], end: int, owner: str, i: int) -> dict:
    """An offsets row of capture i, caught up (committed = log end)."""
    return {
        "cluster": cluster, "group_id": group, "topic": tp[0], "partition": tp[1],
        "current_offset": end, "log_end_offset": end, "lag": 0, "consumer_id": owner,
        "captured_at": at(i), "capture_date": DAY,
        "source_file": f"{cluster}/captures/{i}/offsets.txt",
    }  # fmt: skip


def bronze(spark):
    """g1: m-a (client.rack a) owns orders-0 and -1; m-b (host in b's CIDR) clicks-0.
    Over two intervals orders-0 and -1 each grow 1,000 records and 100,000 bytes and g1
    reads all of it; clicks-0 (no sizes: 100 bytes a record, estimated) 50 records.
    share: a share group reading orders-0, and cluster d, whose brokers have no zone
    (both left out)."""
    offsets, members, placements, sizes, states = [], [], [], [], []
    for i in range(3):
        for (topic, p), (leader, isr) in PLACEMENT.items():
            placements.append(
                {"cluster": "c", "topic": topic, "partition": p, "leader": leader,
                 "replicas": isr, "isr": isr, "captured_at": at(i), "capture_date": DAY}
            )  # fmt: skip
        for (topic, p), owner in (
            (("orders", 0), "m-a"),
            (("orders", 1), "m-a"),
            (("clicks", 0), "m-b"),
        ):
            end = 1000 + 500 * i if topic == "orders" else 10 + 25 * i
            offsets.append(offset("c", "g1", (topic, p), end, owner, i))
            if topic == "orders":
                for broker in (1, 2):
                    sizes.append(
                        {"cluster": "c", "topic": topic, "partition": p, "broker": broker,
                         "log_dir": "/d", "size_bytes": 100 * end, "offset_lag": 0,
                         "is_future": False, "captured_at": at(i), "capture_date": DAY}
                    )  # fmt: skip
        offsets.append(offset("d", "g1", ("orders", 0), 5 * i, "d-1", i))
        offsets.append(offset("c", "share", ("orders", 0), 5 * i, "s-1", i))
        members += [
            {"cluster": "c", "group_id": "g1", "consumer_id": "m-a", "host": "/10.0.0.5",
             "rack": "a", "assignment": [("orders", 0), ("orders", 1)], "captured_at": at(i),
             "capture_date": DAY},
            {"cluster": "c", "group_id": "g1", "consumer_id": "m-b", "host": "/10.0.1.7",
             "assignment": [("clicks", 0)], "captured_at": at(i), "capture_date": DAY},
        ]  # fmt: skip
        states += [
            {"cluster": "c", "group_id": "share", "group_type": "share", "state": "Stable",
             "captured_at": at(i), "capture_date": DAY},
            {"cluster": "c", "group_id": "g1", "group_type": "classic", "state": "Stable",
             "assignment_strategy": "range", "captured_at": at(i), "capture_date": DAY},
        ]  # fmt: skip
    brokers = [
        {"cluster": "c", "broker": b, "rack": z, "captured_at": at(0), "capture_date": DAY}
        for b, z in ((1, "a"), (2, "b"))
    ]
    return {
        "offsets": frame(spark, "offsets", offsets),
        "members": frame(spark, "members", members),
        "group_states": frame(spark, "group_states", states),
        "topic_partitions": frame(spark, "topic_partitions", placements),
        "partition_sizes": frame(spark, "partition_sizes", sizes),
        "brokers": frame(spark, "brokers", brokers),
        "coordinator_events": frame(spark, "coordinator_events", []),
    }


def test_spark_gives_the_rules_rows_and_the_expected_figures(spark):
    t = bronze(spark)
    samples = offset_samples(t["offsets"])
    schema = gold.TABLES["cross_zone_traffic"]
    context = group_context(t["group_states"], t["members"], t["coordinator_events"])
    got = cross_zone_traffic(
        samples,
        t["members"],
        t["group_states"],
        t["topic_partitions"],
        t["partition_sizes"],
        t["brokers"],
        context,
        ZONES,
        DAY,
        schema,
    ).collect()
    assert [(r.cluster, r.group_id) for r in got] == [("c", "g1")]
    row, want = got[0], oracle(t, samples, "g1")
    assert row.asDict().keys() == want.keys()
    assert {k: (v, want[k]) for k, v in row.asDict().items() if v != want[k]} == {}
    # m-a in a reads orders-1 from its leader in b: 1,000 records x 100 bytes; with
    # follower fetching broker 1 (a, in sync) serves it. m-b (b) reads clicks-0 from 1 (a),
    # its only replica: 50 records x 100 configured bytes, estimated, crossing either way.
    assert (row.read_bytes, row.estimated_bytes, row.read_records) == (205_000, 5_000, 2_050)
    assert (row.cross_zone_leader_bytes, row.cross_zone_follower_bytes) == (105_000, 5_000)
    assert (row.partitions_cross_zone_leader, row.partitions_cross_zone_follower) == (2, 1)
    assert (row.members, row.members_unknown_zone, row.unknown_zone_bytes) == (2, 0, 0)
    assert row.members_client_rack == 1  # m-a's client.rack; m-b's zone is its CIDR's
    assert row.cross_zone_leader_cost == pytest.approx(105_000 * 0.02 / 1e9)
    # Range, rack-aware (KIP-881) for clicks, whose one replica is in a: clicks-0 to m-a;
    # orders (replicas in both zones everywhere) as plain range: orders-1 to m-b, whose
    # zone holds its leader. Nothing crosses: the whole 105,000 bytes saved.
    assert (row.protocol, row.rack_aware_assignor) == ("classic", "range")
    assert (row.rack_aware_cross_zone_bytes, row.rack_aware_saving_bytes) == (0, 105_000)


def oracle(t, samples, group: str) -> dict:
    """The rules applied in plain Python to the group's rows of the date, every
    partition's sizes of every replica among them (traffic_row, which the glue's
    group_row feeds)."""

    def rows(frame, where=None):
        out = [r.asDict(recursive=True) for r in frame.collect()]
        return [r for r in out if r["cluster"] == "c" and (where is None or where(r))]

    mine = rows(samples, lambda r: r["group_id"] == group)
    read = {(r["topic"], r["partition"]) for r in mine}
    members = rows(t["members"], lambda r: r["group_id"] == group)
    placements = rows(t["topic_partitions"], lambda r: r["topic"] in {t for t, _ in read})
    sizes = rows(t["partition_sizes"], lambda r: (r["topic"], r["partition"]) in read)
    racks = [
        {"captured_at": r["captured_at"], "broker": r["broker"], "rack": r["rack"]}
        for r in rows(t["brokers"])
    ]
    facts = {"cluster": "c", "group_id": group, "protocol": "classic", "declared_assignor": "range"}
    return traffic_row(facts, mine, members, placements, sizes, racks, ZONES, DAY)


def test_the_placements_and_sizes_spark_cuts_are_what_the_rules_take(spark):
    """placement_changes and measured_sizes keep exactly what cross_zone_rules reads of a
    day's placements and sizes: on a partition whose leader moves (1 -> 2 -> 1), whose ISR
    shrinks, with a future replica larger than any, a size captured before any placement,
    and a capture where only an out-of-sync replica is sized."""
    tp = rules.TopicPartition("orders", 0)
    placed = [(0, 1, [1, 2, 3]), (1, 1, [1, 2, 3]), (2, 2, [2, 3]), (3, 2, [2, 3])]
    placed += [(4, 1, [1, 2, 3]), (5, 1, [1, 2, 3])]
    placements = [
        {"cluster": "c", "topic": "orders", "partition": 0, "leader": leader,
         "replicas": [1, 2, 3], "isr": isr, "captured_at": at(i + 1), "capture_date": DAY}
        for i, leader, isr in placed
    ]  # fmt: skip
    sized = {0: {1: 10, 2: 11}, 1: {1: 20, 2: 21, 3: 22}, 2: {1: 30, 3: 35}, 3: {1: 44}}
    sized |= {4: {2: 50, 3: 51}, 5: {1: 60, 3: 62}, 6: {2: 71, 3: 70}}
    sizes = [
        {"cluster": "c", "topic": "orders", "partition": 0, "broker": broker,
         "log_dir": "/d", "size_bytes": size, "offset_lag": 0, "is_future": False,
         "captured_at": at(i), "capture_date": DAY}
        for i, by_broker in sized.items() for broker, size in by_broker.items()
    ]  # fmt: skip
    sizes.append({**sizes[-1], "broker": 1, "size_bytes": 999, "is_future": True})
    changes = placement_changes(frame(spark, "topic_partitions", placements))
    cut = measured_sizes(frame(spark, "partition_sizes", sizes), changes)
    kept = [r.asDict() for r in changes.collect()]
    assert sorted(r["captured_at"] for r in kept) == [at(1), at(3), at(5)]
    assert rules._placements(kept) == rules._placements(placements)
    whole = rules._sizes(sizes, rules._placements(placements))
    assert rules._sizes([r.asDict() for r in cut.collect()], rules._placements(kept)) == whole
    # The leader's size, even where a follower's is larger (2); at 0 nothing is placed
    # yet; at 3 (leader 2, ISR 2 and 3) only broker 1 is sized; at 6 the leader has only
    # a future replica: the largest in-sync one.
    taken = {1: 20, 2: 30, 4: 50, 5: 60, 6: 71}
    assert whole == {(tp, at(i)): size for i, size in taken.items()}
