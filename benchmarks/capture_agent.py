"""Capture agent benchmark: one cycle of a 10,000-group / 200,000-partition cluster.

Runs fleet-capture's cycle (runner.run_cycle: list, describe in batches, committed
offsets with bounded requests in flight, topics, log end and start offsets, groups.jsonl
and topics.txt written atomically) against the fake admin API (tests/fake_admin.py),
first with replies at once (the agent's own cost), then with `--latency-ms` per reply
(requests overlap as librdkafka's do: the cost of the agent's batching against a real
network), and measures peak Python memory of a cycle with tracemalloc (a separate run:
tracemalloc slows it). The issue's target: a cycle well inside a 60 s interval.

    PYTHONPATH=src .venv/bin/python benchmarks/capture_agent.py
    PYTHONPATH=src .venv/bin/python benchmarks/capture_agent.py --groups 1000 --partitions 20000
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from fleet_rebalance.agent.cli import tune_garbage_collector
from fleet_rebalance.agent.config import AgentConfig, Batching, ClusterConfig, Timeouts
from fleet_rebalance.agent.runner import CycleResult, run_cycle

sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))
from fake_admin import FakeAdmin, FakeCluster, synthetic_cluster

MB = 1 << 20


def cycle(raw: Path, fake: FakeCluster) -> tuple[CycleResult, int]:
    """One cycle of `fake` into `raw`; returns its result and the snapshot's size."""
    config = AgentConfig(
        raw_root=raw,
        clusters=(ClusterConfig(name="bench", bootstrap_servers="bench:9092"),),
        interval_s=60,
        timeouts=Timeouts(request_s=30, cycle_s=600),
        batching=Batching(),
    )
    result = run_cycle(config.clusters[0], FakeAdmin(fake), config)
    if not result.ok:
        raise SystemExit(f"cycle failed: {result.error}")
    size = sum(p.stat().st_size for p in (raw / result.path).iterdir())
    return result, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=200_000)
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="keep Python's GC thresholds (fleet-capture's not)",
    )
    args = parser.parse_args()
    if not args.default_gc:
        tune_garbage_collector()  # as fleet-capture's main does
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp)
        print(f"{args.groups} groups, {args.partitions} partitions (fake admin API)")
        for latency in (0.0, args.latency_ms / 1000):
            times = []
            fake = synthetic_cluster(args.groups, args.partitions)
            fake.latency_s = latency
            for _ in range(args.repeat):
                result, size = cycle(raw, fake)
                times.append(result.took_s)
                time.sleep(1.0)  # a new second: a new capture directory
            print(
                f"  reply latency {latency * 1000:.0f} ms: cycle median "
                f"{statistics.median(times):.2f}s"
                f" (min {min(times):.2f}s, max {max(times):.2f}s) over {args.repeat}: "
                f"{result.groups} groups, {result.partitions} partitions, "
                f"{result.topics} topics, snapshot {size / MB:.1f} MiB"
            )
        fake = synthetic_cluster(args.groups, args.partitions)
        tracemalloc.start()
        cycle(raw, fake)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"  peak Python memory allocated during a cycle (tracemalloc; the fake's replies"
            f" included, its cluster data not): {peak / MB:.0f} MiB; process max RSS "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
        )


if __name__ == "__main__":
    main()
