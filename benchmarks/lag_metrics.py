"""Lag metrics benchmark: lag_distribution and consumer_status, Spark job against its
numpy core.

Generates and ingests one day of a `--groups`-group fleet (10-minute captures), then
times, on local[2], each table's Spark job (offset samples read, shuffled by cluster
and topic or by group, one Arrow call per key, the noop sink) and the same numpy core
called in-process on the same samples, one key at a time. Prints medians of `--repeat`
runs and the ratio job / core: what the shuffle and the Arrow hand-off add.

    python benchmarks/lag_metrics.py --groups 600
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from pyspark import StorageLevel

from fleet_rebalance.config import Config
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.metrics import consumer_status as status
from fleet_rebalance.metrics import lag_distribution as lags
from fleet_rebalance.pipeline import ingest
from fleet_rebalance.pipeline.metrics import consumer_status, lag_distribution, offset_history
from fleet_rebalance.spark.session import build_session

DAY = dt.date(2026, 11, 20)


def per_key(table: pa.Table, keys: list[str]) -> list[pa.Table]:
    """The table split by keys, as Spark's grouping hands it over."""
    ordered = table.sort_by([(k, "ascending") for k in keys])
    counts = ordered.group_by(keys, use_threads=False).aggregate([([], "count_all")])
    starts = [0, *itertools.accumulate(counts["count_all"].to_pylist())]
    return [ordered.slice(a, b - a) for a, b in itertools.pairwise(starts)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fleet-lag-bench-"))
    try:
        spec = FleetSpec(
            groups_per_cluster=-(-args.groups // 3),
            start=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
            hours=24,
            interval_minutes=10,
        )
        write_fleet(spec, root / "raw")
        config = Config(
            raw_root=str(root / "raw"),
            warehouse=str(root / "wh"),
            spark={
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": "8",
                # The samples also come to the driver whole, for the in-process core.
                "spark.driver.memory": "4g",
            },
        )
        spark = build_session(config, job="bench-lag-metrics", master="local[2]")
        spark.sparkContext.setLogLevel("ERROR")
        ingest.run(spark, config, DAY)
        samples = offset_history(spark, config, DAY).persist(StorageLevel.DISK_ONLY)
        rows = samples.count()
        local = samples.toArrow()
        by_topic = per_key(local.select(lags.INPUT_COLUMNS), ["cluster", "topic"])
        by_group = per_key(local.select(status.INPUT_COLUMNS), ["cluster", "group_id"])
        cases = {
            "lag_distribution": (
                lambda: lag_distribution(samples, DAY),
                lambda: [lags.topic_lag_distribution(t, DAY) for t in by_topic],
                len(by_topic),
            ),
            "consumer_status": (
                lambda: consumer_status(samples, DAY, 10),
                lambda: [status.group_consumer_status(t, DAY, 10) for t in by_group],
                len(by_group),
            ),
        }
        print(f"{args.groups} groups, {rows:,} offsets samples, local[2]")
        for name, (job, core, keys) in cases.items():
            spark_s, core_s = [], []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                job().write.format("noop").mode("overwrite").save()
                spark_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                core()
                core_s.append(time.perf_counter() - t0)
            job_m, core_m = statistics.median(spark_s), statistics.median(core_s)
            print(
                f"{name:17s} Spark job median {job_m:6.2f} s | numpy core ({keys} calls, one "
                f"core) median {core_m:6.2f} s | ratio {job_m / core_m:.2f}"
            )
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
