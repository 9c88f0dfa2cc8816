"""One large group through the replay job on local[2] with Spark's default memory: the
bound stated in fleet_rebalance.replay.group, end to end.

Writes synthetic bronze tables (one group, `--members` members on one topic of
`--partitions` partitions, 144 ten-minute captures, one member replaced every 48
captures, every partition's lag at every capture) and runs the replay job on them.
Watch the Python worker's RSS with `ps` meanwhile; the job's own time is printed.

    python benchmarks/replay_large_group_spark.py --members 5000 --partitions 50000
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import replay
from fleet_rebalance.pipeline.bronze import TABLES
from fleet_rebalance.spark.session import build_session
from fleet_rebalance.storage import write_table

DAY = dt.date(2026, 11, 20)
CAPTURES = 144


def bronze(spark, config: Config, members: int, partitions: int) -> None:
    start = int(dt.datetime.combine(DAY, dt.time(), dt.UTC).timestamp())
    at = F.timestamp_seconds(F.lit(start) + F.col("i") * 600)
    captures = (
        spark.range(CAPTURES)
        .withColumnRenamed("id", "i")
        .select(
            "i",
            F.lit("big").alias("cluster"),
            F.lit("large").alias("group_id"),
            at.alias("captured_at"),
            F.to_date(at).alias("capture_date"),
        )
    )
    ids = spark.range(members).withColumnRenamed("id", "m")
    member_rows = captures.crossJoin(ids).select(
        "*",
        F.concat(F.lit("consumer-"), (F.col("m") + F.floor(F.col("i") / 48)).cast("string")).alias(
            "consumer_id"
        ),
        F.transform(
            F.sequence(F.col("m").cast("int"), F.lit(partitions - 1), F.lit(members)),
            lambda p: F.struct(F.lit("orders").alias("topic"), p.alias("partition")),
        ).alias("assignment"),
        F.array(F.lit("orders")).alias("subscription"),
    )
    offsets = captures.crossJoin(spark.range(partitions).withColumnRenamed("id", "partition"))
    offsets = offsets.select(
        "*", F.lit("orders").alias("topic"), (F.rand(0) * 1000).cast("long").alias("lag")
    )
    states = captures.select(
        "*", F.lit("Stable").alias("state"), F.lit("roundrobin").alias("assignment_strategy")
    )
    files = captures.select(
        "*",
        F.lit("members").alias("kind"),
        F.lit("ok").alias("status"),
        F.concat(F.lit("capture-"), F.col("i").cast("string")).alias("path"),
    )
    for name, frame in [
        ("members", member_rows),
        ("offsets", offsets),
        ("group_states", states),
        ("ingested_files", files),
    ]:
        partition_by = () if name == "ingested_files" else ("capture_date",)
        write_table(_typed(frame, name), config.table_path(name), partition_by=partition_by)


def _typed(frame: DataFrame, name: str) -> DataFrame:
    return frame.select(
        *[
            (F.col(f.name) if f.name in frame.columns else F.lit(None))
            .cast(f.dataType)
            .alias(f.name)
            for f in TABLES[name].fields
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=5000)
    parser.add_argument("--partitions", type=int, default=50000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fleet-large-group-"))
    try:
        config = Config(
            raw_root=str(root / "raw"),
            warehouse=str(root / "wh"),
            spark={"spark.ui.showConsoleProgress": "false"},
        )
        spark = build_session(config, job="bench-large-group", master="local[2]")
        spark.sparkContext.setLogLevel("ERROR")
        t0 = time.perf_counter()
        bronze(spark, config, args.members, args.partitions)
        print(f"bronze written in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        counts = replay.run(spark, config, DAY)
        print(
            f"replay of one {args.members} x {args.partitions} group: "
            f"{time.perf_counter() - t0:.1f} s, {counts}"
        )
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
