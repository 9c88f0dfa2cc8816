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

`--storage s3` puts raw_root and the warehouse on S3 instead: moto's S3 server
(tests/s3_support.py) on 127.0.0.1, the generated captures uploaded to a bucket, the
conf with `s3://` paths and `storage.options`, the credentials only in the nightly's
environment (the tables go through Hadoop's S3A, the captures through pyarrow).
`--storage local,s3` runs both and prints each stage's local time beside the S3 one,
with the ratio s3/local. moto runs on the same machine: its CPU is in the run's CPU
figure, its memory is not in the peak RSS.

    python benchmarks/end_to_end.py --groups 1000,5000 --masters local[1],local[2]
    python benchmarks/end_to_end.py --groups 1000 --masters 'local[2]' \
        --storage local,s3 --baseline-groups 0
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime as dt
import itertools
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.fs as pafs
from deltalake import DeltaTable

from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.generate.zones import CONSUMER_CIDRS

PROJECT = Path(__file__).resolve().parent.parent
DAY = "2026-11-20"
STEP = re.compile(r"step \d/\d (\w+) done in ([\d.]+)s: (\{.*\})")
STORAGES = ("local", "s3")
# --zones: the conf's zones section, the generator's subnets (conf/local.yaml's).
ZONES = "zones:\n  consumer_cidrs:\n" + "".join(
    f"    {cidr}: {zone}\n" for cidr, zone in CONSUMER_CIDRS.items()
)
BUCKET = "fleet-e2e"


class S3Store:
    """raw_root and warehouse on a moto S3 server: where to upload, what to put in the
    conf and in the nightly's environment."""

    def __init__(self, server) -> None:
        self.server = server
        self.fs = server.filesystem()
        server.create_bucket(BUCKET)

    def upload(self, raw: Path) -> str:
        """The generated captures under s3://BUCKET/<raw's name>, once."""
        key = f"{BUCKET}/{raw.name}"
        if self.fs.get_file_info(key).type == pafs.FileType.NotFound:
            started = time.monotonic()
            pafs.copy_files(
                str(raw),
                key,
                source_filesystem=pafs.LocalFileSystem(),
                destination_filesystem=self.fs,
                use_threads=True,
            )
            count = sum(1 for _ in raw.rglob("*") if _.is_file())
            print(f"uploaded {count} files to s3://{key} in {time.monotonic() - started:.0f}s")
        return f"s3://{key}"

    def fresh_warehouse(self, name: str) -> str:
        self.fs.delete_dir_contents(f"{BUCKET}/{name}", missing_dir_ok=True)
        return f"s3://{BUCKET}/{name}"

    @property
    def env(self) -> dict[str, str]:
        """The environment of the nightly: ours, without host AWS settings that could
        override the fake credentials, plus the server's."""
        from s3_support import HOST_AWS_VARS

        env = {k: v for k, v in os.environ.items() if k not in HOST_AWS_VARS}
        return {**env, **self.server.env}

    @property
    def read_options(self) -> dict[str, str]:
        """deltalake storage options for reading the tables from this process."""
        return {k: v for k, v in self.server.env.items() if k.startswith("AWS_")} | (
            self.server.storage_options
        )


@contextlib.contextmanager
def s3_store() -> Iterator[S3Store]:
    sys.path.append(str(PROJECT / "tests"))
    from s3_support import moto_s3

    with moto_s3() as server:
        print(f"moto S3 server at {server.endpoint}, bucket {BUCKET}")
        yield S3Store(server)


def peak_rss_mib(
    pid: int,
    stop: threading.Event,
    result: list[float],
    counted: Callable[[int], bool] = lambda _: True,
) -> None:
    """Highest sum of RSS over the process and all its descendants (those `counted`)
    until stop is set."""
    peak = 0.0
    while not stop.is_set():
        total = 0
        for proc in _tree(pid):
            try:
                if not counted(proc):
                    continue
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


def run_nightly(
    raw: Path | str,
    warehouse: Path | str,
    master: str,
    pin: bool = False,
    *,
    conf: Path | None = None,
    storage_options: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    zones: bool = False,
) -> dict:
    """One nightly. Local paths by default; with `storage_options`, raw and warehouse
    are URIs (s3://...), the options go to `storage:` and `env` (the credentials) to the
    nightly's environment. `conf` is where the YAML goes (default: beside a local
    warehouse), and the nightly's output beside it (.log: each table's time). `zones`:
    the conf places the generated consumers by their subnets (as conf/local.yaml does)."""
    if conf is None:
        conf = Path(warehouse).parent / f"{Path(warehouse).name}.yaml"
    storage = ""
    if storage_options is not None:
        options = "".join(f"    {k}: '{v}'\n" for k, v in storage_options.items())
        storage = f"storage:\n  options:\n{options}"
    conf.write_text(
        f"raw_root: {raw}\nwarehouse: {warehouse}\n{storage}spark:\n"
        # 64 shuffle partitions: 8 leave 5M-row sorts per task at 20k groups (the heap
        # runs out); adaptive execution coalesces the small ones at 1k.
        "  spark.sql.shuffle.partitions: 64\n  spark.driver.memory: 4g\n" + (ZONES if zones else "")
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
        env=env,
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
    conf.with_suffix(".log").write_text("".join(lines))
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


def fleet_shape(warehouse: Path | str, groups: int, options: dict | None = None) -> str:
    def table(name: str) -> DeltaTable:
        return DeltaTable(f"{str(warehouse).rstrip('/')}/{name}", storage_options=options)

    members = table("members").to_pyarrow_table(
        columns=["cluster", "group_id", "captured_at", "partition_count"]
    )
    per_capture = members.group_by(["cluster", "group_id", "captured_at"]).aggregate(
        [("partition_count", "count"), ("partition_count", "sum")]
    )
    events = table("rebalance_events").to_pyarrow_table(columns=["trigger"])
    changes = pc.sum(pc.not_equal(events["trigger"], "initial")).as_py() or 0
    states = table("group_states").to_pyarrow_table(
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


def generate(raw: Path, size: int, interval_minutes: int, zones: bool = False) -> None:
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
        broker_views=zones,
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


def print_storage_comparison(
    sizes: list[int],
    masters: list[str],
    runs: dict[tuple[str, str], dict[int, dict]],
    base: str,
    other: str,
) -> None:
    """Per stage, the `base` storage's time beside the `other` one's and other/base;
    rows written that differ between the two are flagged (they should be equal)."""
    ratio = f"{other}/{base}"
    print(f"\n{base} vs {other} (moto on 127.0.0.1), seconds:")
    for master in masters:
        for size in sizes:
            one, two = runs[(master, base)][size], runs[(master, other)][size]
            print(f"  {size} groups on {master}:")
            print(f"    {'stage':8s} {base:>8s} {other:>8s} {ratio:>9s}")
            stages = [
                (s, one["steps"][s][0], two["steps"].get(s, (float("nan"),))[0])
                for s in one["steps"]
            ]
            stages.append(("total", one["wall"], two["wall"]))
            for stage, a, b in stages:
                print(f"    {stage:8s} {a:8.1f} {b:8.1f} {b / a:9.2f}")
            print(
                f"    {'peak RSS':8s} {one['peak_mib']:7.0f}M {two['peak_mib']:7.0f}M "
                f"{two['peak_mib'] / one['peak_mib']:9.2f}  (moto's own not counted)"
            )
            print(
                f"    {'CPU':8s} {one['cpu']:7.0f}s {two['cpu']:7.0f}s "
                f"{two['cpu'] / one['cpu']:9.2f}  (machine-wide, moto's included)"
            )
            for step, (_, counts) in one["steps"].items():
                theirs = two["steps"].get(step, (None, None))[1]
                if theirs != counts:
                    print(f"    ROWS DIFFER in {step}: {base} {counts}, {other} {theirs}")


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
    parser.add_argument(
        "--zones",
        action="store_true",
        help="the fleets also capture the brokers' racks and log-dir sizes, so the nightly "
        "measures cross_zone_traffic (conf/local.yaml zones the generated consumers)",
    )
    parser.add_argument("--workdir", help="keep generated data here (default: a temp dir)")
    parser.add_argument(
        "--storage",
        default="local",
        help="where raw_root and the warehouse live: local, s3 (moto on 127.0.0.1), or both "
        "(then each stage's ratio to the first)",
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.groups.split(",")]
    masters = args.masters.split(",")
    storages = args.storage.split(",")
    if unknown := sorted(set(storages) - set(STORAGES)):
        parser.error(f"--storage: unknown {unknown[0]!r} (expected {', '.join(STORAGES)})")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="fleet-e2e-"))
    runs: dict[tuple[str, str], dict[int, dict]] = {
        (master, storage): {} for master in masters for storage in storages
    }
    baseline = [args.baseline_groups] if args.baseline_groups else []

    def label(master: str, storage: str) -> str:
        return master if storage == "local" else f"{master} on {storage}"

    try:
        with contextlib.ExitStack() as stack:
            s3 = stack.enter_context(s3_store()) if "s3" in storages else None
            for size in baseline + sizes:
                raw = root / (f"raw-{size}-zones" if args.zones else f"raw-{size}")
                if not raw.exists():
                    generate(raw, size, args.interval_minutes, args.zones)
                for master, storage in itertools.product(masters, storages):
                    tag = re.sub(r"\W", "", master)
                    name = f"wh-{size}-{tag}"
                    if storage == "s3":
                        warehouse: Path | str = s3.fresh_warehouse(f"{name}-{storage}")
                        options = s3.read_options
                        result = run_nightly(
                            s3.upload(raw),
                            warehouse,
                            master,
                            args.pin,
                            conf=root / f"{name}-{storage}.yaml",
                            storage_options=s3.server.storage_options,
                            env=s3.env,
                            zones=args.zones,
                        )
                    else:
                        warehouse, options = root / name, None
                        shutil.rmtree(warehouse, ignore_errors=True)
                        result = run_nightly(raw, warehouse, master, args.pin, zones=args.zones)
                    runs[(master, storage)][size] = result
                    print_run(size, label(master, storage), result)
                    if (master, storage) == (masters[0], storages[0]) and size not in baseline:
                        print("  " + fleet_shape(warehouse, size, options))
        print("\nscaling (time per group vs the previous size; 1.00 = linear):")
        for (master, storage), sized in runs.items():
            print(f"  {label(master, storage)}{' pinned' if args.pin else ''}:")
            print_scaling(sizes, sized, None)
            if baseline:
                print(f"   above the {baseline[0]}-group run's time:")
                print_scaling(sizes, sized, sized[baseline[0]])
        if "local[1]" in masters and "local[2]" in masters:
            for storage in storages:
                where = "" if storage == "local" else f" on {storage}"
                print(f"speed-up local[1] / local[2]{where}:")
                for size in baseline + sizes:
                    one = runs[("local[1]", storage)][size]
                    two = runs[("local[2]", storage)][size]
                    per_step = ", ".join(
                        f"{s} {one['steps'][s][0] / two['steps'][s][0]:.2f}" for s in one["steps"]
                    )
                    print(f"  {size}: total {one['wall'] / two['wall']:.2f}; {per_step}")
        for other in storages[1:]:
            print_storage_comparison(baseline + sizes, masters, runs, storages[0], other)
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
