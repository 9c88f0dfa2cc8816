"""One offsets row per (cluster, group, topic, partition, capture): the unit every lag
metric counts. Two files of one capture that both describe a group (a text view and a
jsonl export) would otherwise count it twice; the file whose path sorts last wins,
deterministically, for the whole group. Only the group captures with rival files
(normally none) are broadcast, so the offsets themselves are filtered without a
shuffle."""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

SAMPLE_KEY = ["cluster", "group_id", "topic", "partition", "captured_at"]
VALUES = ["current_offset", "log_end_offset", "lag", "consumer_id", "capture_date"]
GROUP_CAPTURE = ["cluster", "group_id", "captured_at"]


def offset_samples(offsets: DataFrame) -> DataFrame:
    valid = offsets.where(F.col("partition").isNotNull() & F.col("topic").isNotNull())
    # Two files for one group capture show up as two different file hashes: a hash
    # aggregate over longs, no sort of the offsets. Only those (rare) captures go on to
    # pick the winning file by name. The winners are settled here, once, and kept on
    # the executors (a local checkpoint, nothing on the driver): the metrics step reads
    # the samples three times, and each would otherwise scan the offsets twice more to
    # find them again.
    file_hash = F.xxhash64("source_file")
    contested = (
        valid.groupBy(*GROUP_CAPTURE)
        .agg(F.min(file_hash).alias("_lo"), F.max(file_hash).alias("_hi"))
        .where(F.col("_lo") != F.col("_hi"))
        .select(*GROUP_CAPTURE)
    )
    winners = (
        valid.join(F.broadcast(contested), GROUP_CAPTURE, "left_semi")
        .groupBy(*GROUP_CAPTURE)
        .agg(F.max("source_file").alias("_winner"))
        .localCheckpoint(eager=True)
    )
    return (
        valid.join(F.broadcast(winners), GROUP_CAPTURE, "left")
        .where(F.col("_winner").isNull() | (F.col("source_file") == F.col("_winner")))
        .select(*SAMPLE_KEY, *VALUES)
    )
