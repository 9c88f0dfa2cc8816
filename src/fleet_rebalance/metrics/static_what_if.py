"""The static-membership what-if per group and date: what `group.instance.id` with a
session timeout of `metrics.static_session_timeout_s` would have saved.

The events it would have avoided are rebalance_events' `static_avoidable` ones
(replay/rebalance_events.py: every member the event changed left and came back, as the same
consumer, within that timeout; a capture event when its capture window shows that).
Their cost is measured with the assignor the group runs: the declared assignor's replay
(its latest state capture's strategy, as recommendations.py compares), or `observed`
when that assignor was not replayed for the group (a plug-in, KIP-848's server-side
range, no state capture). One row per group with a non-initial event that day:
- `assignor`: the replay the savings are measured on;
- `events`, `deploy_restarts`: the day's non-initial events, and those caused by a
  deploy or restart;
- `rebalances_avoided`: avoidable events the assignor has a row for (`observed` has none
  at generations no capture shows);
- `paused_partitions_avoided`: their paused partitions (0 when none is avoided);
- `paused_partition_seconds_avoided`: their paused partition-seconds, over the avoided
  events a coordinator log times; null when avoided events exist but no log times any;
- `messages_delayed_avoided`: the messages those pauses delayed, likewise.
Whether the group already has static membership is recommendations.py's to say.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

from fleet_rebalance.metrics.rollups import seconds_sum
from fleet_rebalance.replay.assignor_runs import OBSERVED
from fleet_rebalance.vocabulary import Cause

GROUP = ["cluster", "group_id", "date"]


def static_what_if(causes: DataFrame, replay_metrics: DataFrame, declared: DataFrame) -> DataFrame:
    """`causes`: the date's non-initial rebalance_events (rebalance_causes.rebalances);
    `replay_metrics`: the date's silver rows; `declared`:
    recommendations.declared_strategies (cluster, group_id, date, declared_assignor)."""
    metrics = replay_metrics.withColumnRenamed("event_date", "date")
    declared_replayed = declared.join(
        metrics.select(*GROUP, F.col("assignor").alias("declared_assignor")).distinct(),
        [*GROUP, "declared_assignor"],
        how="inner",
    )
    paused = metrics.select(
        *GROUP,
        "assignor",
        "event_seq",
        "paused_partitions",
        "paused_partition_seconds",
        "messages_delayed",
    )
    per_event = (
        causes.join(declared_replayed, GROUP, how="left")
        .withColumn("assignor", F.coalesce("declared_assignor", F.lit(OBSERVED)))
        .join(paused, [*GROUP, "assignor", "event_seq"], how="left")
    )
    saved = F.col("static_avoidable") & F.col("paused_partitions").isNotNull()
    avoided = F.count_if(saved)
    return per_event.groupBy(*GROUP, "assignor").agg(
        F.count(F.lit(1)).cast("int").alias("events"),
        F.count_if(F.col("cause") == Cause.DEPLOY_RESTART).cast("int").alias("deploy_restarts"),
        avoided.cast("int").alias("rebalances_avoided"),
        F.coalesce(F.sum(F.when(saved, F.col("paused_partitions"))), F.lit(0))
        .cast("long")
        .alias("paused_partitions_avoided"),
        F.when(avoided == 0, F.lit(0.0))
        .otherwise(seconds_sum(F.when(saved, F.col("paused_partition_seconds"))))
        .alias("paused_partition_seconds_avoided"),
        F.when(avoided == 0, F.lit(0))
        .otherwise(F.sum(F.when(saved, F.col("messages_delayed"))))
        .cast("long")
        .alias("messages_delayed_avoided"),
    )
