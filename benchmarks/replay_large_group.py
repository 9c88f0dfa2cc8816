"""One large group through replay_group, as one Spark task would see it: peak memory
and time for the bound stated in fleet_rebalance.replay.group.

A day of `--interval-minutes` captures of `--members` members on one topic of
`--partitions` partitions (round-robin observed assignment), with a member replaced
every `--churn-every` captures; every capture carries every partition's lag.

    python benchmarks/replay_large_group.py --members 5000 --partitions 50000
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import time

import numpy as np
import pandas as pd

from fleet_rebalance.pipeline import silver
from fleet_rebalance.replay.assignor_runs import default_assignors
from fleet_rebalance.replay.group import replay_group

DAY = dt.date(2026, 11, 20)


def frames(members: int, partitions: int, captures: int, churn_every: int):
    times = pd.Timestamp(DAY) + pd.to_timedelta(np.arange(captures) * 10, unit="min")
    topics = np.array(["orders"] * partitions, dtype=object)
    rows = []
    for i, at in enumerate(times):
        ids = [f"consumer-{m + i // churn_every}" for m in range(members)]
        for m, member in enumerate(ids):
            owned = np.arange(m, partitions, members, dtype=np.int32)
            rows.append((at, member, topics[: len(owned)], owned))
    captures_frame = pd.DataFrame(
        rows, columns=["captured_at", "consumer_id", "assigned_topics", "assigned_partitions"]
    )
    captures_frame["state"] = "Stable"
    captures_frame["assignment_strategy"] = "roundrobin"
    captures_frame["group_instance_id"] = None
    captures_frame["subscription"] = [np.array(["orders"], dtype=object)] * len(rows)
    lags = pd.DataFrame(
        {
            "captured_at": np.repeat(times.to_numpy(), partitions),
            "topic": np.tile(topics, captures),
            "partition": np.tile(np.arange(partitions, dtype=np.int32), captures),
            "lag": np.random.default_rng(0).integers(0, 1000, partitions * captures),
        }
    )
    return captures_frame, lags


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=5000)
    parser.add_argument("--partitions", type=int, default=50000)
    parser.add_argument("--interval-minutes", type=int, default=10)
    parser.add_argument("--churn-every", type=int, default=48, help="captures per event")
    parser.add_argument("--assignors", default=",".join(default_assignors()))
    args = parser.parse_args()
    captures = 24 * 60 // args.interval_minutes
    members, lags = frames(args.members, args.partitions, captures, args.churn_every)
    inputs_mb = (
        members.memory_usage(deep=False).sum() + lags.memory_usage(deep=False).sum()
    ) / 2**20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    out = replay_group(
        ("bench", "large"),
        members,
        lags,
        run_date=DAY,
        assignors=args.assignors.split(","),
        topic_history={},
        columns=silver.union_schema().fieldNames(),
    )
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    counts = out["_table"].value_counts().to_dict()
    print(
        f"{args.members} members x {args.partitions} partitions x {captures} captures: "
        f"{len(members)} member rows, {len(lags)} lag rows ({inputs_mb:.0f} MiB of frames)"
    )
    print(f"output rows: {counts}")
    print(
        f"replay_group: {seconds:.1f} s; peak RSS {peak:.0f} MiB (after building inputs "
        f"{before:.0f} MiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
