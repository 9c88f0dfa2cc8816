"""A warehouse that has lived for two months: does the nightly still cost one day's work?

Generates `--days + 1` days of a `--groups`-group fleet (4 clusters, captures every
`--interval-minutes`), then, as a user would, through ./spark-submit.sh:

1. the history: the nightly of day 1, then a backfill of days 2..N (`nightly --from D2
   --to DN`), timed per date from its progress lines (`date 12/59 2026-09-12 done in
   41 s, eta 52 min`); kept in the work directory; a second run resumes it;
2. `--repeat` times, in turn: the nightly of day 1 on an empty warehouse, and the nightly
   of day N+1 on a copy of a warehouse holding only day N and on a copy of the history
   (the same inputs and work; only the history differs);
3. `maintain`, with the files of each table's current version and on storage before
   and after.

It prints wall time and peak resident memory of the driver (the JVM, which in local mode
also runs the tasks, plus the job's Python driver; Python workers excluded, sampled
every 0.2 s) of the three with the ratios, the backfill's time per date
(first, median, last, and the last ten dates over the first ten), and the file counts.
Day N+1's captures are not day 1's: partition expansions accumulate (the 200-group fleet's
day 61 has ~14 % more offsets rows than its day 1), and day 1 has no date before it to
read. So the ratio that says whether the work grows with history is day N+1 on N days
against day N+1 on one; day 1 is shown for reference.

    python benchmarks/history.py                       # 60 days of 200 groups (~1 h)
    python benchmarks/history.py --days 5 --groups 40  # a quick look
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from end_to_end import peak_rss_mib

from fleet_rebalance.generate.fleet import FleetSpec, write_fleet

PROJECT = Path(__file__).resolve().parent.parent
CLUSTERS = 4
PROGRESS = re.compile(r"date \d+/\d+ \d{4}-\d{2}-\d{2} done in ((?:\d+ h )?\d+ (?:s|min))")
UNITS = {"h": 3600, "min": 60, "s": 1}
WORKER_MARKERS = ("pyspark.daemon", "pyspark/daemon", "pyspark.worker", "pyspark/worker")


def is_driver(pid: int) -> bool:
    """The run's JVM or the job's Python driver; not a Python worker."""
    try:
        text = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return False
    if any(marker in text for marker in WORKER_MARKERS):
        return False
    return "java" in text.split(" ", 1)[0] or "jobs/" in text


def run(job: list[str], conf: Path, log: Path) -> dict:
    """One ./spark-submit.sh run: wall seconds, driver peak MiB, its stderr lines."""
    started = time.monotonic()
    with log.open("w") as err:
        process = subprocess.Popen(
            [str(PROJECT / "spark-submit.sh"), *job, "--conf", str(conf)],
            cwd=PROJECT,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        stop, peak = threading.Event(), []
        sampler = threading.Thread(target=peak_rss_mib, args=(process.pid, stop, peak, is_driver))
        sampler.start()
        stdout = process.communicate()[0]
        stop.set()
        sampler.join()
    lines = log.read_text().splitlines()
    if process.returncode != 0:
        raise SystemExit(
            f"{' '.join(job)} failed ({process.returncode}):\n" + "\n".join(lines[-30:])
        )
    return {"wall": time.monotonic() - started, "peak": peak[0], "stderr": lines, "stdout": stdout}


def write_conf(path: Path, raw: Path, warehouse: Path) -> Path:
    path.write_text(
        f"raw_root: {raw}\nwarehouse: {warehouse}\nmaster: local[*]\n"
        "spark:\n  spark.sql.shuffle.partitions: 8\n  spark.driver.memory: 4g\n"
    )
    return path


def table_files(warehouse: Path) -> dict[str, tuple[int, int]]:
    """Per table: (files in the current version, Parquet files on storage)."""
    counts = {}
    for log in sorted(warehouse.glob("*/_delta_log")):
        table = log.parent
        # Data files only: a checkpoint is Parquet too, under _delta_log.
        on_disk = sum(1 for f in table.rglob("*.parquet") if "_delta_log" not in f.parts)
        counts[table.name] = (len(DeltaTable(str(table)).file_uris()), on_disk)
    return counts


def seconds(text: str) -> float:
    """`41 s`, `2 min`, `1 h 5 min` (the progress line's whole units) in seconds."""
    words = text.split()
    return float(sum(int(n) * UNITS[unit] for n, unit in zip(words[::2], words[1::2], strict=True)))


def nightly(day: dt.date, conf: Path, log: Path) -> dict:
    return run(["nightly", "--date", day.isoformat()], conf, log)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=60, help="days of history (default 60)")
    parser.add_argument("--groups", type=int, default=200, help="groups in the fleet (default 200)")
    parser.add_argument("--interval-minutes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2, help="runs of day 1 and day N+1")
    parser.add_argument("--first-day", type=dt.date.fromisoformat, default=dt.date(2026, 9, 1))
    parser.add_argument("--workdir", type=Path, help="keep everything here (default: a temp dir)")
    args = parser.parse_args()

    work = args.workdir or Path(tempfile.mkdtemp(prefix="fleet-history-"))
    work.mkdir(parents=True, exist_ok=True)
    days = [args.first_day + dt.timedelta(days=i) for i in range(args.days + 1)]
    raw = work / "raw"
    if not raw.exists():
        started = time.monotonic()
        spec = FleetSpec(
            clusters=CLUSTERS,
            groups_per_cluster=-(-args.groups // CLUSTERS),
            start=dt.datetime.combine(days[0], dt.time(), dt.UTC),
            hours=24 * len(days),
            interval_minutes=args.interval_minutes,
            topics_per_group=(1, 1, 1, 2),
            groups_per_topic=3,
        )
        written = write_fleet(spec, raw)
        print(
            f"generated {len(days)} days of {args.groups} groups: {written} "
            f"in {time.monotonic() - started:.0f} s",
            flush=True,
        )

    history = work / "history"
    conf = write_conf(work / "history.yaml", raw, history)
    if not history.exists():
        seed = nightly(days[0], conf, work / "history-day1.log")
        print(f"day 1 ({days[0]}) to start the history: {seed['wall']:.1f} s", flush=True)
    # Resumes an interrupted history: the dates already done run again, committing nothing.
    started = time.monotonic()
    backfill = run(
        ["nightly", "--from", days[1].isoformat(), "--to", days[-2].isoformat()],
        conf,
        work / "backfill.log",
    )
    per_date = [seconds(m.group(1)) for line in backfill["stderr"] if (m := PROGRESS.search(line))]
    print(
        f"backfill of {len(days) - 2} dates ({len(per_date)} run): "
        f"{time.monotonic() - started:.0f} s, driver peak {backfill['peak']:.0f} MiB",
        flush=True,
    )
    if per_date:
        ten = min(10, len(per_date) // 2) or 1
        print(
            f"  per date: first {per_date[0]:.1f} s, median "
            f"{statistics.median(per_date):.1f} s, last {per_date[-1]:.1f} s; "
            f"last {ten} over first {ten}: "
            f"{statistics.mean(per_date[-ten:]) / statistics.mean(per_date[:ten]):.2f}",
            flush=True,
        )

    # The same date on two warehouses: `recent` holds only the date before it (what any
    # nightly reads besides its own inputs), `history` every date. Only the history
    # differs, so their ratio is what history costs. Day 1 (no date before it, and
    # the fleet's first day, ~14 % smaller) is printed beside them, as the issue asks.
    recent = work / "recent"
    if not recent.exists():
        nightly(days[-2], write_conf(work / "recent.yaml", raw, recent), work / "recent.log")
    runs: dict[str, list[dict]] = {"day1": [], "recent": [], "history": []}
    for r in range(args.repeat):
        for kind, source, day in (
            ("day1", None, days[0]),
            ("recent", recent, days[-1]),
            ("history", history, days[-1]),
        ):
            warehouse = work / f"{kind}-{r}"
            shutil.rmtree(warehouse, ignore_errors=True)
            if source is not None:
                shutil.copytree(source, warehouse)
            conf_r = write_conf(work / f"{kind}-{r}.yaml", raw, warehouse)
            runs[kind].append(nightly(day, conf_r, work / f"{kind}-{r}.log"))
            print(
                f"{kind} run {r + 1} (nightly of {day}): {runs[kind][-1]['wall']:.1f} s, "
                f"driver peak {runs[kind][-1]['peak']:.0f} MiB",
                flush=True,
            )

    def median(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kind])

    print(
        f"\nnightly, median of {args.repeat}: day 1 (empty warehouse), day {len(days)} on "
        f"1 day of history, day {len(days)} on {len(days) - 1} days"
    )
    print(f"  {'':<18} {'day 1':>10} {'1 day':>10} {f'{len(days) - 1} days':>10}   ratios")
    for key, label, unit in (("wall", "wall time", "s"), ("peak", "driver peak RSS", "MiB")):
        a, b, c = (median(kind, key) for kind in ("day1", "recent", "history"))
        print(
            f"  {label + ' (' + unit + ')':<18} {a:10.1f} {b:10.1f} {c:10.1f}   "
            f"{len(days) - 1} days / 1 day {c / b:.2f}, / day 1 {c / a:.2f}"
        )

    target = work / "history-0"
    before = table_files(target)
    maintained = run(
        ["maintain"], write_conf(work / "maintain.yaml", raw, target), work / "maintain.log"
    )
    after = table_files(target)
    print(f"\nmaintain on {len(days)} days: {maintained['wall']:.1f} s")
    print(f"  {'table':<22} {'files (current)':>16} {'parquet on storage':>20}")
    for name in sorted(before):
        (cur_a, disk_a), (cur_b, disk_b) = before[name], after.get(name, (0, 0))
        print(f"  {name:<22} {cur_a:>7} -> {cur_b:<6} {disk_a:>9} -> {disk_b:<8}")
    print(f"\nwork directory: {work}")


if __name__ == "__main__":
    main()
