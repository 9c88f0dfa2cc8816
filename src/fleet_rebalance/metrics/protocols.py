"""Which rebalance protocol each group runs, and what the captures say of its brokers.

Where a capture of the day names the group's type (Kafka 4.x tools' lists, share and
streams views, fleet-capture), the latest one decides: `classic`, `consumer`, `share`
(KIP-932) or `streams` (KIP-1071). Otherwise a group is `consumer` (KIP-848) when its
latest state capture of the day names `uniform` (only KIP-848's server-side assignor has
that name) or its latest members capture holds a KIP-848 member: the consumer protocol's
member ids are a bare 22-character base64url Uuid, where classic ids are `<client.id or
group.instance.id>-<36-character UUID>` (FORMATS 1.1). Every other group is `classic`. A
consumer group whose assignor is KIP-848's server-side `range` is told apart by its
member ids only.

The brokers' release is not in the captures: the tools' output layouts date the tool,
not the brokers. Two facts bear on a move to the consumer protocol, per cluster and date:
`consumer_groups` (the cluster already serves consumer-protocol groups) and
`classic_coordinator` (its latest coordinator log line is the pre-4.0 GroupCoordinator's,
`[GroupCoordinator <id>]: `, which Kafka 4.0 removed: its brokers are older than 4.0).
Otherwise `brokers` is null: nothing known.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import Column, DataFrame

from fleet_rebalance.vocabulary import GroupType

SERVER_SIDE_ASSIGNORS = ("uniform",)  # the replay's KIP-848 assignors (not its range)
KIP848_MEMBER_ID = r"^[A-Za-z0-9_-]{22}$"
CLASSIC_COORDINATOR_LINE = (
    r"\[GroupCoordinator \d+\]: |\(kafka\.coordinator\.group\.GroupCoordinator\)"
)
CONSUMER_GROUPS, CLASSIC_COORDINATOR = "consumer_groups", "classic_coordinator"
GROUP = ["cluster", "group_id", "date"]


def declared_protocol(declared_assignor: Column) -> Column:
    """consumer for a server-side assignor name, else classic (null: classic)."""
    return F.when(declared_assignor.isin(*SERVER_SIDE_ASSIGNORS), GroupType.CONSUMER).otherwise(
        GroupType.CLASSIC
    )


def group_protocols(group_states: DataFrame, members: DataFrame) -> DataFrame:
    """cluster, group_id, date, protocol, instance_ids: the protocol from the group's
    latest state and members captures of each day (either one naming KIP-848 makes it
    `consumer`); the group.instance.ids its members captures show that day (sorted, empty
    for a group of dynamic members, null without a members capture), in the same pass
    over the members."""
    by_state = (
        group_states.where(F.col("assignment_strategy").isNotNull())
        .groupBy("cluster", "group_id", F.col("capture_date").alias("date"))
        .agg(F.max_by("assignment_strategy", "captured_at").alias("_strategy"))
        .select(
            *GROUP, (declared_protocol(F.col("_strategy")) == GroupType.CONSUMER).alias("_by_state")
        )
    )
    # The latest capture's answer, true if any of its members is KIP-848's: the largest
    # (captured_at, is KIP-848) pair, in one aggregate (a null id orders below both).
    kip848 = F.col("consumer_id").rlike(KIP848_MEMBER_ID)
    by_members = members.groupBy("cluster", "group_id", F.col("capture_date").alias("date")).agg(
        F.max(F.struct("captured_at", kip848.alias("k")))["k"].alias("_by_members"),
        F.array_sort(F.collect_set("group_instance_id")).alias("instance_ids"),
    )
    either = F.coalesce(F.col("_by_state"), F.lit(False)) | F.coalesce(
        F.col("_by_members"), F.lit(False)
    )
    heuristic = F.when(either, GroupType.CONSUMER).otherwise(GroupType.CLASSIC)
    joined = by_state.join(by_members, GROUP, how="full")
    types = _group_types(group_states, members)
    if types is None:
        return joined.select(*GROUP, heuristic.alias("protocol"), "instance_ids")
    return joined.join(types, GROUP, how="left").select(
        *GROUP, F.coalesce(F.col("_type"), heuristic).alias("protocol"), "instance_ids"
    )


def _group_types(group_states: DataFrame, members: DataFrame) -> DataFrame | None:
    """cluster, group_id, date, _type: the latest group type a capture of the day names;
    None when neither table has the column (frames built before it existed)."""
    typed = [
        frame.select(
            "cluster", "group_id", "capture_date", "captured_at", F.col("group_type").alias("t")
        )
        for frame in (group_states, members)
        if "group_type" in frame.columns
    ]
    if not typed:
        return None
    union = typed[0] if len(typed) == 1 else typed[0].unionByName(typed[1])
    return (
        union.where(F.col("t").isNotNull())
        .groupBy("cluster", "group_id", F.col("capture_date").alias("date"))
        .agg(F.max_by("t", "captured_at").alias("_type"))
    )


def cluster_brokers(protocols: DataFrame, coordinator_events: DataFrame) -> DataFrame:
    """cluster, date, brokers (consumer_groups | classic_coordinator): what a day's
    captures tell of a cluster's brokers; clusters with neither fact are absent."""
    serving = (
        protocols.where(F.col("protocol") == GroupType.CONSUMER)
        .select("cluster", "date")
        .distinct()
        .withColumn("_serving", F.lit(True))
    )
    latest = coordinator_events.groupBy("cluster", F.col("log_date").alias("date")).agg(
        F.max_by(F.col("line").rlike(CLASSIC_COORDINATOR_LINE), "logged_at").alias("_old")
    )
    brokers = (
        F.when(F.col("_serving"), CONSUMER_GROUPS)
        .when(F.col("_old"), CLASSIC_COORDINATOR)
        .otherwise(F.lit(None).cast("string"))
    )
    return (
        serving.join(latest, ["cluster", "date"], how="full")
        .select("cluster", "date", brokers.alias("brokers"))
        .where(F.col("brokers").isNotNull())
    )


def group_context(
    group_states: DataFrame, members: DataFrame, coordinator_events: DataFrame
) -> DataFrame:
    """cluster, group_id, date, protocol, brokers, instance_ids: what recommendations
    and the migration plan need to know of a group beyond its replay."""
    protocols = group_protocols(group_states, members)
    return protocols.join(
        cluster_brokers(protocols, coordinator_events), ["cluster", "date"], how="left"
    ).select(*GROUP, "protocol", "brokers", "instance_ids")
