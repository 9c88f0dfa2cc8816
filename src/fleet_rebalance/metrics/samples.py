"""One offsets row per (cluster, group, topic, partition, capture): the unit every lag
metric counts. Two captures of the same group at the same instant (text and jsonl) would
otherwise count twice; the later file and line wins, deterministically."""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

SAMPLE_KEY = ["cluster", "group_id", "topic", "partition", "captured_at"]
VALUES = ["current_offset", "log_end_offset", "lag", "consumer_id", "capture_date"]


def offset_samples(offsets: DataFrame) -> DataFrame:
    picked = F.max_by(F.struct(*VALUES), F.struct("source_file", "line_number"))
    return (
        offsets.where(F.col("partition").isNotNull() & F.col("topic").isNotNull())
        .groupBy(*SAMPLE_KEY)
        .agg(picked.alias("v"))
        .select(*SAMPLE_KEY, *[F.col(f"v.{c}").alias(c) for c in VALUES])
    )
