"""`cross_zone_traffic`: what each group's reads of the date cost across availability
zones, and what rack-aware assignment would save (rules in cross_zone_rules.py). One
Arrow call per group: its protocol and declared assignor, its offsets samples of the
date, its members and the placements of the topics it reads, as rows of one frame told
apart by `_kind`; each offsets row carries its partition's log-dir size of the same
capture. Placements and sizes are cut in Spark, once per partition, to the rows the
rules read: a partition's placements where they change, and one size a capture (the
replica the rules would take); a day's topics and log-dirs captures otherwise repeat
them for every group that reads the partition, and they were most of the rows each call
built. The brokers' zones (a row per broker and cluster) are read once on the driver and
go to every call. Share groups are left out: their members fetch the same partitions
together (KIP-932), so a partition has no one reader to place in a zone; so is a cluster
with no broker zone (neither a captured broker.rack nor zones.brokers), where nothing
can be placed and the pass would cost a night's shuffle of the offsets for no answer.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import asdict
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from fleet_rebalance.arrow_values import python_rows
from fleet_rebalance.config import ZonesConfig
from fleet_rebalance.metrics import cross_zone_rules as rules
from fleet_rebalance.metrics.arrow_rows import Rows
from fleet_rebalance.metrics.recommendations import declared_strategies
from fleet_rebalance.metrics.share_groups import without_share_groups
from fleet_rebalance.vocabulary import ZoneSource

GROUP = ["cluster", "group_id"]
PARTITION = ["cluster", "topic", "partition"]
KIND = "_kind"
GROUP_FACTS, OFFSETS, MEMBERS, PLACEMENT = "group", "offsets", "members", "placement"
SIZE_BROKER = "size_broker"  # whose replica's size_bytes an offsets row carries
# The columns of each kind's rows: the frame's other columns are null in them, and the
# rules never read them.
COLUMNS = {
    GROUP_FACTS: ("protocol", "declared_assignor"),
    OFFSETS: (
        "captured_at",
        "topic",
        "partition",
        "current_offset",
        "log_end_offset",
        "consumer_id",
        SIZE_BROKER,
        "size_bytes",
    ),
    MEMBERS: ("captured_at", "consumer_id", "host", "rack", "assignment"),
    PLACEMENT: ("captured_at", "topic", "partition", "leader", "replicas", "isr"),
}


def cross_zone_traffic(
    samples: DataFrame,
    members: DataFrame,
    group_states: DataFrame,
    topic_partitions: DataFrame,
    partition_sizes: DataFrame,
    brokers: DataFrame,
    context: DataFrame,
    zones: ZonesConfig,
    run_date: dt.date,
    schema: StructType,
) -> DataFrame:
    """One row per group with offsets samples on `run_date` (samples: offset_history's;
    context: protocols.group_context's; the other frames: the date's bronze rows)."""
    racks = _broker_racks(brokers)
    zoned = sorted(set(racks) | {c for c, m in zones.brokers.items() if m})
    if not zoned:
        return samples.sparkSession.createDataFrame([], schema)
    day = (F.col("capture_date") == F.lit(run_date)) & F.col("cluster").isin(zoned)
    day_offsets = without_share_groups(samples.where(day), group_states)
    # The partitions each group read, settled once (a local checkpoint, one row per
    # group and partition): its groups and topics are cut from it, where each would
    # otherwise scan the day's offsets and find its share groups again.
    read = day_offsets.select(*GROUP, "topic", "partition").distinct().localCheckpoint(eager=True)
    groups = read.select(*GROUP).distinct()
    facts = (
        groups.join(context.where(F.col("date") == F.lit(run_date)), GROUP, "left")
        .join(declared_strategies(group_states).drop("date"), GROUP, "left")
        .select(*GROUP, F.lit(GROUP_FACTS).alias(KIND), *COLUMNS[GROUP_FACTS])
    )
    if "rack" not in members.columns:
        members = members.withColumn("rack", F.lit(None).cast("string"))
    member_rows = members.join(groups, GROUP, "left_semi").select(
        *GROUP, F.lit(MEMBERS).alias(KIND), *COLUMNS[MEMBERS]
    )
    # Every partition of the topics read: the rack-aware replay assigns them all.
    topics = read.select(*GROUP, "topic").distinct()
    changes = placement_changes(topic_partitions)
    placements = topics.join(changes, ["cluster", "topic"], "inner").select(
        *GROUP, F.lit(PLACEMENT).alias(KIND), *COLUMNS[PLACEMENT]
    )
    # The rules read a size only at an offsets capture: on the offsets row it belongs to,
    # not as a row of its own (half of a call's rows were sizes).
    sizes = measured_sizes(partition_sizes, changes).select(
        *PARTITION, "captured_at", F.col("broker").alias(SIZE_BROKER), "size_bytes"
    )
    offsets = day_offsets.join(sizes, [*PARTITION, "captured_at"], "left").select(
        *GROUP, F.lit(OFFSETS).alias(KIND), *COLUMNS[OFFSETS]
    )
    frame = (
        facts.unionByName(offsets, allowMissingColumns=True)
        .unionByName(member_rows, allowMissingColumns=True)
        .unionByName(placements, allowMissingColumns=True)
    )
    arrow_schema = to_arrow_schema(schema)

    def per_group(table: pa.Table) -> pa.Table:
        kinds = {
            kind: python_rows(table.filter(pc.equal(table[KIND], kind)).select(columns))
            for kind, columns in COLUMNS.items()
        }
        cluster, group_id = table["cluster"][0].as_py(), table["group_id"][0].as_py()
        row = group_row(cluster, group_id, kinds, racks.get(cluster, []), zones, run_date)
        return pa.Table.from_pylist([row], schema=arrow_schema)

    return frame.groupBy(*GROUP).applyInArrow(per_group, schema)


def placement_changes(topic_partitions: DataFrame) -> DataFrame:
    """Each partition's first placement of the date and every later one that differs from
    the one before (leader, ISR and replicas, in order): all the rules keep
    (cross_zone_rules._placements)."""
    in_time = Window.partitionBy(*PARTITION).orderBy("captured_at")
    placed = ("leader", "isr", "replicas")
    same = [F.col(c).eqNullSafe(F.lag(c).over(in_time)) for c in placed]
    unchanged = F.row_number().over(in_time) > 1
    for column in same:
        unchanged = unchanged & column
    return (
        topic_partitions.select(*PARTITION, "captured_at", *placed)
        .withColumn("_unchanged", unchanged)
        .where(~F.col("_unchanged"))
        .drop("_unchanged")
    )


def measured_sizes(partition_sizes: DataFrame, changes: DataFrame) -> DataFrame:
    """One size row per partition and capture, the replica cross_zone_rules._sizes takes:
    the leader's, else the largest in-sync one, by the latest placement at or before the
    capture (`changes`: placement_changes'); a future replica is a copy, and a capture
    with neither (or no placement yet) gives none."""
    capture = [*PARTITION, "captured_at"]
    placed = changes.select(*PARTITION, F.col("captured_at").alias("_placed_at"), "leader", "isr")
    sized = partition_sizes.where(~F.coalesce(F.col("is_future"), F.lit(False))).join(
        placed, PARTITION, "inner"
    )
    sized = sized.where(F.col("_placed_at") <= F.col("captured_at"))
    latest = Window.partitionBy(*capture, "broker").orderBy(F.col("_placed_at").desc())
    leads = F.col("broker") == F.col("leader")
    taken = Window.partitionBy(*capture).orderBy(leads.desc(), F.col("size_bytes").desc())
    return (
        sized.withColumn("_latest", F.row_number().over(latest))
        .where(F.col("_latest") == 1)
        .where(leads | F.array_contains("isr", F.col("broker")))
        .withColumn("_taken", F.row_number().over(taken))
        .where(F.col("_taken") == 1)
        .select(*capture, "broker", "size_bytes", "is_future")
    )


def _broker_racks(brokers: DataFrame) -> dict[str, list[rules.BrokerRow]]:
    """cluster -> each broker's last captured rack of the date (a few rows a cluster)."""
    last = (
        brokers.where(F.col("rack").isNotNull())
        .groupBy("cluster", "broker")
        .agg(
            F.max("captured_at").alias("captured_at"), F.max_by("rack", "captured_at").alias("rack")
        )
        .collect()
    )
    out: dict[str, list[rules.BrokerRow]] = defaultdict(list)
    for r in last:
        out[r["cluster"]].append(
            {"captured_at": r["captured_at"], "broker": r["broker"], "rack": r["rack"]}
        )
    return out


def group_row(
    cluster: str,
    group_id: str,
    kinds: dict[str, Rows],
    racks: list[rules.BrokerRow],
    zones: ZonesConfig,
    run_date: dt.date,
) -> dict[str, Any]:
    """The table's row for one group from its rows of each kind (COLUMNS), each offsets
    row with its partition's size at that capture (SIZE_BROKER's replica) where one was
    taken."""
    sizes: list[rules.SizeRow] = [
        {
            "topic": r["topic"],
            "partition": r["partition"],
            "captured_at": r["captured_at"],
            "broker": r[SIZE_BROKER],
            "size_bytes": r["size_bytes"],
            "is_future": False,
        }
        for r in kinds[OFFSETS]
        if r["size_bytes"] is not None
    ]
    (facts,) = kinds[GROUP_FACTS]
    group = {"cluster": cluster, "group_id": group_id, **facts}
    return traffic_row(
        group, kinds[OFFSETS], kinds[MEMBERS], kinds[PLACEMENT], sizes, racks, zones, run_date
    )


def traffic_row(
    group: dict[str, Any],
    offsets: list[Any],
    members: list[Any],
    placements: list[Any],
    sizes: list[rules.SizeRow],
    racks: list[rules.BrokerRow],
    zones: ZonesConfig,
    run_date: dt.date,
) -> dict[str, Any]:
    """The table's row for one group (`group`: its cluster, id, protocol and declared
    assignor) from the rules' inputs: its offsets samples, members, placements and
    log-dir sizes of the date."""
    offsets = [{**r, "host": None} for r in offsets]
    reads = rules.reads(
        offsets,
        members,
        placements,
        sizes,
        zones.record_bytes,
        zones.default_record_bytes,
    )
    group_zones = rules.group_zones(
        members, offsets, racks, zones.consumer_cidrs, zones.brokers.get(group["cluster"], {})
    )
    traffic = rules.traffic(reads, group_zones, zones.price_per_gb)
    protocol = group["protocol"]  # null: no state or members capture names it, no replay
    row = {
        "cluster": group["cluster"],
        "group_id": group["group_id"],
        "date": run_date,
        **asdict(traffic),
        "protocol": protocol,
        # The consumers that set client.rack: where all do, the rack_aware change does not
        # tell them to (metrics/rack_aware_rules.py).
        "members_client_rack": sum(
            c.source == ZoneSource.CLIENT_RACK for c in group_zones.consumers.values()
        ),
    }
    if not all(zone for zone, _ in group_zones.consumers.values()):
        # The replay could hand reads to a member of no known zone, and its saving would
        # be a guess: the what-if's columns stay null.
        return row
    replay = rules.rack_aware_replay(
        reads, group_zones, members, placements, protocol or "", group["declared_assignor"]
    )
    # KIP-881 places a member where any replica of its partitions is in its zone: its
    # saving comes with follower fetching, against the reads as they cross now.
    saving = traffic.cross_zone_leader_bytes - replay.cross_zone_follower_bytes
    return row | {
        "rack_aware_assignor": replay.assignor,
        "rack_aware_cross_zone_bytes": replay.cross_zone_follower_bytes,
        "rack_aware_saving_bytes": saving,
        "rack_aware_saving_cost": rules.cost(saving, zones.price_per_gb),
    }
