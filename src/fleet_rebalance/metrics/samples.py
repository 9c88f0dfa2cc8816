"""One offsets row per (cluster, group, topic, partition, capture): the unit every lag
metric counts. Two files of one capture that both describe a group (a text view and a
jsonl export) would otherwise count it twice; the file whose path sorts last wins,
deterministically, for the whole group. Only such rival files are collected (normally
none), so the offsets themselves are filtered without a shuffle."""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

SAMPLE_KEY = ["cluster", "group_id", "topic", "partition", "captured_at"]
VALUES = ["current_offset", "log_end_offset", "lag", "consumer_id", "capture_date"]
GROUP_CAPTURE = ["cluster", "group_id", "captured_at"]


def offset_samples(offsets: DataFrame) -> DataFrame:
    valid = offsets.where(F.col("partition").isNotNull() & F.col("topic").isNotNull())
    rivals = (
        valid.groupBy(*GROUP_CAPTURE)
        .agg(F.max("source_file").alias("_winner"), F.collect_set("source_file").alias("_files"))
        .where(F.size("_files") > 1)
        .select(
            *GROUP_CAPTURE,
            F.explode(F.array_remove("_files", F.col("_winner"))).alias("source_file"),
        )
    )
    return valid.join(rivals, [*GROUP_CAPTURE, "source_file"], "left_anti").select(
        *SAMPLE_KEY, *VALUES
    )
