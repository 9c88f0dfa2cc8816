"""`partition_flapping`: how often each partition changed owner over the day, observed
and under every replayed assignor, on the same grid (the group's rebalance events).

An owner change is an event whose owner differs from the partition's owner at its
previous event of the day; an event that leaves it unowned is counted in
`unowned_events`, and an owner after a gap is compared with the last owner before it.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, Window

KEY = ["cluster", "group_id", "topic", "partition", "date", "assignor"]


def partition_flapping(assignment_replay: DataFrame, rebalance_events: DataFrame) -> DataFrame:
    owned = assignment_replay.select(
        "cluster",
        "group_id",
        "event_seq",
        "assignor",
        "member_id",
        F.col("event_date").alias("date"),
        F.explode("partitions").alias("tp"),
    ).select("*", F.col("tp.topic").alias("topic"), F.col("tp.partition").alias("partition"))
    owned = owned.drop("tp")
    by_event = Window.partitionBy(*KEY).orderBy("event_seq")
    changed = F.col("member_id") != F.lag("member_id").over(by_event)
    events = rebalance_events.groupBy("cluster", "group_id").agg(
        F.count(F.lit(1)).cast("int").alias("group_events")
    )
    return (
        owned.withColumn("changed", F.coalesce(changed, F.lit(False)))
        .groupBy(*KEY)
        .agg(
            F.count(F.lit(1)).cast("int").alias("owned_events"),
            F.count_if("changed").cast("int").alias("owner_changes"),
            # size(collect_set): count_distinct beside other aggregates expands every
            # exploded row once per distinct aggregate before a second aggregation.
            F.size(F.collect_set("member_id")).cast("int").alias("distinct_owners"),
        )
        .join(events, ["cluster", "group_id"], "left")
        .select(
            *KEY,
            F.col("group_events").alias("events"),
            "owner_changes",
            "distinct_owners",
            (F.col("group_events") - F.col("owned_events")).alias("unowned_events"),
        )
    )
