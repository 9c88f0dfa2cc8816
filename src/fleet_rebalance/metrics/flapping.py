"""`partition_flapping`: how often each partition changed owner over the day, observed
and under every replayed assignor, on the same grid (the group's rebalance events).

An owner change is an event whose owner differs from the partition's owner at its
previous event of the day; an event that leaves it unowned is counted in
`unowned_events`, and an owner after a gap is compared with the last owner before it.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from fleet_rebalance.metrics.owner_changes import KEYS, SCHEMA, owner_changes


def partition_flapping(assignment_replay: DataFrame, rebalance_events: DataFrame) -> DataFrame:
    """One Arrow call per group counts its partitions' owners (metrics/owner_changes.py):
    the group's rows are shuffled as they are, not exploded and sorted by partition."""
    held = assignment_replay.select(
        "cluster",
        "group_id",
        F.col("event_date").alias("date"),
        "assignor",
        "event_seq",
        "member_id",
        "partitions",
    )
    counts = held.groupBy("cluster", "group_id").applyInArrow(
        owner_changes, from_arrow_schema(SCHEMA)
    )
    events = rebalance_events.groupBy("cluster", "group_id").agg(
        F.count(F.lit(1)).cast("int").alias("group_events")
    )
    return counts.join(events, ["cluster", "group_id"], "left").select(
        *KEYS,
        F.col("group_events").alias("events"),
        "owner_changes",
        "distinct_owners",
        (F.col("group_events") - F.col("owned_events")).alias("unowned_events"),
    )
