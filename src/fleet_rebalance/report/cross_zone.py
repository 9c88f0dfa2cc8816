"""What the report's "Cross-zone reads" section shows: cross_zone_traffic of the day
summed per cluster (what its groups read, across zones from the partitions' leaders and
with follower fetching, at what cost, and what rack-aware assignment would save), and
the groups whose cross-zone reads cost most (cross_zone_html.py renders it)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd
import pyspark.sql.functions as F

from fleet_rebalance.storage.warehouse import Reads

TABLE = "cross_zone_traffic"
SUMMED = (
    "read_bytes",
    "estimated_bytes",
    "cross_zone_leader_bytes",
    "cross_zone_follower_bytes",
    "unknown_zone_bytes",
    "cross_zone_leader_cost",
    "cross_zone_follower_cost",
    "rack_aware_saving_cost",
)
TOP_COLUMNS = (
    "cluster",
    "group_id",
    "read_bytes",
    "cross_zone_leader_bytes",
    "partitions_cross_zone_leader",
    "partitions_read",
    "cross_zone_leader_cost",
    "cross_zone_follower_cost",
    "rack_aware_saving_cost",
)


@dataclass(frozen=True)
class CrossZoneFacts:
    # cluster, groups, price_per_gb and the SUMMED columns' sums (null where every
    # group's is: a rack-aware saving needs every member's zone)
    clusters: pd.DataFrame
    top: pd.DataFrame  # TOP_COLUMNS: the groups whose cross-zone reads cost most


def gather(reads: Reads, run_date: dt.date, top: int) -> CrossZoneFacts | None:
    """None where the warehouse has no cross_zone_traffic (written before the table
    existed)."""
    if not reads.warehouse.exists(TABLE):
        return None
    traffic = reads(TABLE, "date", run_date)
    clusters = (
        traffic.groupBy("cluster")
        .agg(
            F.count("*").alias("groups"),
            F.max("price_per_gb").alias("price_per_gb"),
            *[F.sum(column).alias(column) for column in SUMMED],
        )
        .orderBy("cluster")
        .toPandas()
    )
    costly = (
        traffic.where(F.col("cross_zone_leader_bytes") > 0)
        .orderBy(
            F.col("cross_zone_leader_cost").desc_nulls_last(),
            F.col("cross_zone_leader_bytes").desc(),
            "cluster",
            "group_id",
        )
        .select(*TOP_COLUMNS)
        .limit(top)
        .toPandas()
    )
    return CrossZoneFacts(clusters, costly)
