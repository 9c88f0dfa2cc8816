"""End-to-end scale benchmark: the nightly on generated fleets of growing size.

For each fleet size it generates one day of captures (3 clusters, `--interval-minutes`
captures from 2026-11-20 00:00 UTC), then runs `./spark-submit.sh nightly` for that date
on a fresh warehouse under every `--masters` entry, as a user would. It prints, per
stage: rows written, wall time and the run's peak resident memory (driver JVM, Python
driver and Python workers together, sampled every 0.2 s), then the scaling ratios
(time per group of each size over the previous size: 1.00 is linear) and
local[1] / local[2] speed-ups. The fleet's shape (members and partitions per group,
membership changes per group-day, assignor mix) is printed from the tables themselves.

A run also has costs that do not grow with the fleet (JVM and Python worker start-up,
two dozen Delta commits, each table's small jobs). `--baseline-groups` (default 30)
measures them with a nightly on a fleet that small, and the ratios are printed a second
time on the time above that baseline: the part of the run that the fleet's size drives.
`--pin` runs `local[N]` on N CPUs (sched_setaffinity, inherited by the JVM and its
Python workers): unpinned, `local[1]` keeps more than one core busy, its Python workers
running beside the JVM's task thread.

    python benchmarks/end_to_end.py --groups 1000,5000 --masters local[1],local[2]
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import itertools
import os
import re
import resource
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.compute as pc
from deltalake import DeltaTable

from fleet_rebalance.generate.fleet import FleetSpec, write_fleet

PROJECT = Path(__file__).resolve().parent.parent
DAY = "2026-11-20"
STEP = re.compile(r"step \d/\d (\w+) done in ([\d.]+)s: (\{.*\})")


def peak_rss_mib(pid: int, stop: threading.Event, result: list[float]) -> None:
    """Highest sum of RSS over the process and all its descendants until stop is set."""
    peak = 0.0
    while not stop.is_set():
        total = 0
        for proc in _tree(pid):
            try:
                fields = Path(f"/proc/{proc}/statm").read_text().split()
                total += int(fields[1]) * 4096
            except (OSError, IndexError):
                continue
        peak = max(peak, total / 2**20)
        stop.wait(0.2)
    result.append(peak)


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parts = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(parts[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def run_nightly(raw: Path, warehouse: Path, master: str, pin: bool = False) -> dict:
    conf = warehouse.parent / f"{warehouse.name}.yaml"
    conf.write_text(
        f"raw_root: {raw}\nwarehouse: {warehouse}\nspark:\n"
        # 64 shuffle partitions: 8 leave 5M-row sorts per task at 20k groups (the heap
        # runs out); adaptive execution coalesces the small ones at 1k.
        "  spark.sql.shuffle.partitions: 64\n  spark.driver.memory: 4g\n"
    )
    started = time.monotonic()
    cpu_before = _busy_cpu()
    process = subprocess.Popen(
        [
            str(PROJECT / "spark-submit.sh"),
            "nightly",
            "--date",
            DAY,
            "--conf",
            str(conf),
            "--master",
            master,
        ],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, _cpus(master))) if pin else None,
    )
    stop, peak = threading.Event(), []
    sampler = threading.Thread(target=peak_rss_mib, args=(process.pid, stop, peak))
    sampler.start()
    steps: dict[str, tuple[float, dict]] = {}
    lines = []
    for line in process.stdout:
        lines.append(line)
        if match := STEP.search(line):
            steps[match.group(1)] = (float(match.group(2)), ast.literal_eval(match.group(3)))
    status = process.wait()
    stop.set()
    sampler.join()
    if status != 0:
        raise RuntimeError(f"nightly on {master} failed:\n{''.join(lines[-40:])}")
    return {
        "wall": time.monotonic() - started,
        "steps": steps,
        "peak_mib": peak[0],
        "cpu": _busy_cpu() - cpu_before,
    }


def _cpus(master: str) -> set[int]:
    """The first N CPUs for local[N] (all of them for local[*] or a cluster)."""
    cpus = sorted(os.sched_getaffinity(0))
    match = re.fullmatch(r"local\[(\d+)\]", master)
    return set(cpus[: int(match.group(1))] if match else cpus)


def _busy_cpu() -> float:
    """Busy CPU seconds of the whole machine (run it on an idle one). RUSAGE_CHILDREN
    counts only descendants that were waited for, which Spark's Python workers need not
    be: it reported 1.1 cores busy for runs whose two task slots were mostly full."""
    stat = Path("/proc/stat")
    if not stat.exists():
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime
    ticks = [int(x) for x in stat.read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def fleet_shape(warehouse: Path, groups: int) -> str:
    members = DeltaTable(str(warehouse / "members")).to_pyarrow_table(
        columns=["cluster", "group_id", "captured_at", "partition_count"]
    )
    per_capture = members.group_by(["cluster", "group_id", "captured_at"]).aggregate(
        [("partition_count", "count"), ("partition_count", "sum")]
    )
    events = DeltaTable(str(warehouse / "rebalance_events")).to_pyarrow_table(columns=["trigger"])
    changes = pc.sum(pc.not_equal(events["trigger"], "initial")).as_py() or 0
    states = DeltaTable(str(warehouse / "group_states")).to_pyarrow_table(
        columns=["cluster", "group_id", "assignment_strategy"]
    )
    mix = (
        states.group_by(["cluster", "group_id"])
        .aggregate([("assignment_strategy", "max")])
        .group_by(["assignment_strategy_max"])
        .aggregate([("cluster", "count")])
        .to_pylist()
    )
    mix_text = ", ".join(
        f"{r['assignment_strategy_max'] or 'unknown'} {r['cluster_count']}"
        for r in sorted(mix, key=lambda r: -r["cluster_count"])
    )
    return (
        f"shape: {pc.mean(per_capture['partition_count_count']).as_py():.1f} members and "
        f"{pc.mean(per_capture['partition_count_sum']).as_py():.1f} assigned partitions per "
        f"group capture; {changes / groups:.1f} rebalance events per group-day "
        f"(initial excluded); assignors: {mix_text}"
    )


def generate(raw: Path, size: int, interval_minutes: int) -> None:
    started = time.monotonic()
    spec = FleetSpec(
        groups_per_cluster=-(-size // 3),
        start=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
        hours=24,
        interval_minutes=interval_minutes,
        # The shape: ~12 partitions per group, each topic read by a few groups
        # (so work per group does not grow with the fleet).
        topics_per_group=(1, 1, 1, 2),
        groups_per_topic=3,
    )
    written = write_fleet(spec, raw)
    print(f"{size} groups: generated {written} in {time.monotonic() - started:.0f}s")


def print_run(size: int, master: str, result: dict) -> None:
    print(
        f"\n{size} groups on {master}: {result['wall']:.1f}s wall, "
        f"peak RSS {result['peak_mib']:.0f} MiB, CPU {result['cpu']:.0f}s "
        f"({result['cpu'] / result['wall']:.2f} cores of the machine busy on average)"
    )
    for step, (seconds, counts) in result["steps"].items():
        print(f"  {step:8s} {seconds:7.1f}s  {counts}")


def print_scaling(sizes: list[int], runs: dict[int, dict], base: dict | None) -> None:
    """Time per group of each size over the previous size's; with `base`, of the time
    above the baseline run's (the same step's, for steps)."""

    def net(run: dict, step: str | None) -> float:
        seconds = run["wall"] if step is None else run["steps"][step][0]
        if base is None:
            return seconds
        return seconds - (base["wall"] if step is None else base["steps"][step][0])

    for small, big in itertools.pairwise(sizes):
        a, b = runs[small], runs[big]
        ratios = {
            step or "total": (net(b, step) / big) / (net(a, step) / small)
            for step in [None, *a["steps"]]
        }
        print(f"    {big}/{small}: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", default="1000,5000,20000", help="fleet sizes (groups)")
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--interval-minutes", type=int, default=10)
    parser.add_argument(
        "--baseline-groups",
        type=int,
        default=30,
        help="a fleet this small measures the per-run costs (0: no baseline run)",
    )
    parser.add_argument("--pin", action="store_true", help="run local[N] on N CPUs")
    parser.add_argument("--workdir", help="keep generated data here (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.groups.split(",")]
    masters = args.masters.split(",")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="fleet-e2e-"))
    runs: dict[str, dict[int, dict]] = {master: {} for master in masters}
    baseline = [args.baseline_groups] if args.baseline_groups else []
    try:
        for size in baseline + sizes:
            raw = root / f"raw-{size}"
            if not raw.exists():
                generate(raw, size, args.interval_minutes)
            for master in masters:
                tag = re.sub(r"\W", "", master)
                warehouse = root / f"wh-{size}-{tag}"
                shutil.rmtree(warehouse, ignore_errors=True)
                result = runs[master][size] = run_nightly(raw, warehouse, master, args.pin)
                print_run(size, master, result)
                if master == masters[0] and size not in baseline:
                    print("  " + fleet_shape(warehouse, size))
        print("\nscaling (time per group vs the previous size; 1.00 = linear):")
        for master in masters:
            print(f"  {master}{' pinned' if args.pin else ''}:")
            print_scaling(sizes, runs[master], None)
            if baseline:
                print(f"   above the {baseline[0]}-group run's time:")
                print_scaling(sizes, runs[master], runs[master][baseline[0]])
        if "local[1]" in masters and "local[2]" in masters:
            print("speed-up local[1] / local[2]:")
            for size in baseline + sizes:
                one, two = runs["local[1]"][size], runs["local[2]"][size]
                per_step = ", ".join(
                    f"{s} {one['steps'][s][0] / two['steps'][s][0]:.2f}" for s in one["steps"]
                )
                print(f"  {size}: total {one['wall'] / two['wall']:.2f}; {per_step}")
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
