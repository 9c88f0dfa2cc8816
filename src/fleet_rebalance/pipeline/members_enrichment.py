"""Members rows completed from the offsets view of the same capture."""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

CAPTURE_KEY = ["cluster", "group_id", "captured_at"]


def enrich_members(members: DataFrame, offsets: DataFrame) -> DataFrame:
    """Both completions below. The per-capture topics come from distinct (capture,
    topic) pairs, a hash aggregate, before any list is built; only owned partitions are
    collected per consumer."""
    owned = (
        offsets.where(F.col("consumer_id").isNotNull())
        .groupBy(*CAPTURE_KEY, "consumer_id")
        .agg(F.array_sort(F.collect_list(F.struct("topic", "partition"))).alias("_owned"))
    )
    topics = (
        offsets.select(*CAPTURE_KEY, "topic")
        .distinct()
        .groupBy(*CAPTURE_KEY)
        .agg(F.array_sort(F.collect_list("topic")).alias("_topics"))
    )
    return with_inferred_subscriptions(with_resolved_topicless_assignments(members, owned), topics)


def with_resolved_topicless_assignments(members: DataFrame, owned: DataFrame) -> DataFrame:
    """3.8/3.9 print ASSIGNMENT without topic names ("(0,1,10), (2)"): take the member's
    partitions from the offsets view when their partition numbers are exactly the ones
    listed; otherwise the assignment stays null (unknown), never guessed. owned: per
    capture and consumer_id, its sorted (topic, partition) structs as `_owned`."""
    listed = F.array_sort(F.flatten(F.col("assignment_groups")))
    from_offsets = F.array_sort(F.transform(F.col("_owned"), lambda tp: tp["partition"]))
    resolved = F.when(
        F.col("assignment_groups").isNotNull() & (listed == from_offsets), F.col("_owned")
    )
    return (
        members.join(owned, on=[*CAPTURE_KEY, "consumer_id"], how="left")
        .withColumn("assignment", F.coalesce(F.col("assignment"), resolved))
        .drop("_owned", "assignment_groups")
    )


def with_inferred_subscriptions(members: DataFrame, topics: DataFrame) -> DataFrame:
    """Where a member's subscription was not captured, it is the set of topics the group
    has offsets for at that capture (homogeneous subscription), flagged as inferred.
    Without offsets at that capture (a failed offsets capture) it stays null: unknown,
    never "subscribed to nothing". topics: per capture, its sorted topics as `_topics`."""
    inferred = F.col("subscription").isNull() & F.col("_topics").isNotNull()
    return (
        members.join(topics, on=CAPTURE_KEY, how="left")
        .withColumn(
            "subscription_inferred",
            F.when(inferred, F.lit(True)).when(
                F.col("subscription").isNotNull(),
                F.coalesce(F.col("subscription_inferred"), F.lit(False)),
            ),
        )
        .withColumn("subscription", F.coalesce(F.col("subscription"), F.col("_topics")))
        .drop("_topics")
    )
