"""Replay benchmark: events per second per core through every assignor, and the Spark
job's wall time against the same replay calls in one plain Python process.

Generates a fleet (`--groups` per cluster, 3 clusters, a day of `--interval-minutes`
captures), ingests it, then times on local[1]: the replay job (snapshots, one cogrouped
Arrow UDF call per group, silver writes) and, in-process, replay_group on the same snapshot rows
(collected once beforehand), with what the job gives every group (topic counts and
ids, the clusters' logged hours: every logged generation is replayed). Prints medians
of `--repeat` runs. Target ratio <= 1.5x (issue 54). `--profile N` also profiles the plain
Python replay and prints its N most expensive functions (cumulative) and the time per
module of the package: where the replay's time goes.
It also times the job's floor: the same reads, shuffle and cogrouped Arrow hand-off
with a function that replays nothing, i.e. what any grouped Python UDF job pays before
the first replay call.

    python benchmarks/replay.py --groups 30
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import pstats
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from fleet_rebalance.config import Config
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.pipeline import ingest, replay, silver
from fleet_rebalance.replay.assignor_runs import default_assignors
from fleet_rebalance.replay.group import replay_group
from fleet_rebalance.spark.session import build_session

DAY = dt.date(2026, 11, 20)


def floor(spark, config: Config) -> None:
    """The replay job's plan up to the group function, which returns no rows."""
    plan = replay.per_group(spark, config, DAY, lambda key, left, right: {})
    plan.write.format("noop").mode("overwrite").save()


def profile(groups, columns, shared, top: int) -> None:
    """The plain Python replay under cProfile: top functions, then seconds per module."""
    profiler = cProfile.Profile()
    profiler.enable()
    for group, frame, group_lags in groups:
        replay_group(group, frame, group_lags, columns=columns, **shared)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    per_module: dict[str, float] = {}
    for (path, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        inside = "fleet_rebalance" in path
        name = path.split("/src/")[-1] if inside else "(other: pandas, numpy, builtins)"
        per_module[name] = per_module.get(name, 0.0) + own
    total = sum(per_module.values())
    print("own time per module:")
    for name, seconds in sorted(per_module.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {seconds:7.2f} s {seconds / total:6.1%}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=30, help="groups per cluster")
    parser.add_argument("--interval-minutes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fleet-replay-bench-"))
    try:
        spec = FleetSpec(
            groups_per_cluster=args.groups,
            hours=26,
            start=dt.datetime(2026, 11, 19, 22, tzinfo=dt.UTC),
            interval_minutes=args.interval_minutes,
            topics_per_group=(1, 1, 1, 2),  # the fleet shape of benchmarks/end_to_end.py
            groups_per_topic=3,
        )
        write_fleet(spec, root / "raw")
        config = Config(
            raw_root=str(root / "raw"),
            warehouse=str(root / "wh"),
            spark={"spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "4"},
        )
        spark = build_session(config, job="bench-replay", master="local[1]")
        spark.sparkContext.setLogLevel("ERROR")
        ingest.run(spark, config, None)
        keys = replay.capture_keys(spark, config, DAY)
        captures = replay.capture_rows(spark, config, DAY, keys).unionByName(
            replay.log_rows(spark, config, DAY, keys), allowMissingColumns=True
        )
        lags = replay.lag_rows(spark, config, DAY, keys).toPandas()
        captures = captures.toPandas()
        columns = silver.union_schema().fieldNames()
        assignors = default_assignors()
        shared = dict(replay.group_function(spark, config, DAY, assignors).keywords)
        del shared["tables"]
        key = ["cluster", "group_id"]
        lag_groups = dict(list(lags.groupby(key)))
        groups = [(k, f, lag_groups.get(k, lags.iloc[:0])) for k, f in captures.groupby(key)]
        spark_times, local_times, floor_times = [], [], []
        events = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            counts = replay.run(spark, config, DAY)
            spark_times.append(time.perf_counter() - t0)
            events = counts.get("rebalance_events", 0)
            t0 = time.perf_counter()
            for group, frame, group_lags in groups:
                replay_group(group, frame, group_lags, columns=columns, **shared)
            local_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            floor(spark, config)
            floor_times.append(time.perf_counter() - t0)
        spark_s, local_s = statistics.median(spark_times), statistics.median(local_times)
        print(
            f"{len(groups)} groups, {len(captures)} member rows, {len(lags)} lag rows, "
            f"{events} events x "
            f"{len(assignors)} assignors, local[1]"
        )
        print(f"spark job   : median {spark_s:6.2f} s  {events / spark_s:8.1f} events/s/core")
        print(f"plain python: median {local_s:6.2f} s  {events / local_s:8.1f} events/s/core")
        floor_s = statistics.median(floor_times)
        print(f"floor (no-op UDF): median {floor_s:6.2f} s")
        print(f"ratio spark/python: {spark_s / local_s:.2f} (target <= 1.5)")
        print(f"ratio floor/python: {floor_s / local_s:.2f}")
        if args.profile:
            profile(groups, columns, shared, args.profile)
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
