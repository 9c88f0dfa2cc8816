"""Large inputs benchmark: one parse task's wall time and peak memory on a big broker
log and a big offsets capture (issue 36 item 8).

Generates, in a temporary directory deleted afterwards, a coordinator log of `--log-mb`
(a busy broker's server.log: filler lines of other loggers with a coordinator burst
every `--burst-every` lines, 1 % coordinator lines by default) and an offsets capture
of `--offsets-mb` (3.6 layout, groups of 48 partitions), optionally gzip-compressed
too (`--gzip`). Each file is then ingested by the code of one parse task
(bronze_batches.capture_batches over parse_file_parts, as ingest's executors run it; the
batches it yields are counted, not written) in a fresh process, `--repeat` times; the
medians of wall time and of that process's peak RSS are printed, with the RSS of the
process before parsing (interpreter and imports). capture.max_memory_mb bounds what the
parse task adds to that: peak RSS minus RSS before parsing, checked against it here.

`--bombs` adds issue 56's compression bombs, gzip members of a MiB each repeated: 10 GiB
of zeros (10 MB stored), 2 GiB of newlines (2 MB) and 1 GiB of one valid offsets row
(1 MB); each must be refused as soon as it passes capture.max_inflation_ratio, in about
a second and within the memory of any other file.

    python benchmarks/large_inputs.py                       # 2 GB log, 1 GB offsets
    python benchmarks/large_inputs.py --log-mb 200 --offsets-mb 100 --repeat 3
    python benchmarks/large_inputs.py --log-mb 0 --offsets-mb 0 --bombs --repeat 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import gzip
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The bombs are built as the hostile tree's (tests/ is not a package: fuzz.py's way).
sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))

MB = 1 << 20
DAY = dt.date(2026, 11, 20)
PATTERN = r"^(?P<cluster>[^/]+)/"
LOG = "bench/logs/broker-3/server.log.2026-11-20-02"
OFFSETS = "bench/captures/2026-11-20T0900Z/consumer-groups-offsets.txt"
BURST = Path(__file__).resolve().parent.parent / "tests/data/broker_logs"
BURST_FILE = BURST / "kafka-3.x-old-coordinator-server.log"
FILLER = (
    "INFO [ReplicaFetcher replicaId=3, leaderId={b}, fetcherId=0] Truncating partition "
    "orders-{p} with TruncationState(offset={o}, completed=true) due to leader epoch and "
    "offset EpochEndOffset(errorCode=0, partition={p}, leaderEpoch=12, endOffset={o}) "
    "(kafka.server.ReplicaFetcherThread)",
    "INFO [LocalLog partition=events-web-{p}, dir=/var/lib/kafka/data] Rolled new log "
    "segment at offset {o} in 3 ms. (kafka.log.LocalLog)",
    "INFO [ProducerStateManager partition=audit-{p}] Wrote producer snapshot at offset "
    "{o} with 0 producer ids in 1 ms. (kafka.log.ProducerStateManager)",
    "INFO [UnifiedLog partition=orders-{p}, dir=/var/lib/kafka/data] Incremented log "
    "start offset to {o} due to leader offset increment (kafka.log.UnifiedLog)",
)


def write_log(path: Path, size: int, burst_every: int, seed: int = 11) -> None:
    """A server.log of about `size` bytes, stamped through 2026-11-20 02:00-03:00."""
    rng = random.Random(seed)
    lines_of = BURST_FILE.read_text().splitlines()
    burst = [line.split("] ", 1)[1] for line in lines_of if line.startswith("[")]
    start = dt.datetime(2026, 11, 20, 2)
    written, lines = 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            block = []
            for _ in range(burst_every):
                at = start + dt.timedelta(milliseconds=(lines * 7) % 3_600_000)
                stamp = at.strftime("%Y-%m-%d %H:%M:%S,") + f"{at.microsecond // 1000:03d}"
                filler = rng.choice(FILLER).format(
                    b=rng.randrange(1, 6), p=rng.randrange(64), o=rng.randrange(10**9)
                )
                block.append(f"[{stamp}] {filler}\n")
                lines += 1
            for body in burst:
                block.append(f"[{stamp}] {body}\n")
                lines += 1
            text = "".join(block)
            out.write(text)
            written += len(text)


def write_offsets(path: Path, size: int, seed: int = 7) -> None:
    """An offsets capture of about `size` bytes: 3.6 layout, 48 partitions per group."""
    from fleet_rebalance.generate.render import GroupView, MemberView, offsets_view

    rng = random.Random(seed)
    written, g = 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            views = []
            for _ in range(200):
                members = [
                    MemberView(
                        f"consumer-g{g}-{m}-{rng.getrandbits(64):016x}",
                        None,
                        f"/10.0.{m}.{g % 250}",
                        f"consumer-g{g}-{m}",
                        [],
                    )
                    for m in range(4)
                ]
                offsets = {}
                for p in range(48):
                    tp = (f"topic-{g % 17}", p)
                    members[p % 4].partitions.append(tp)
                    end = rng.randint(10**6, 10**9)
                    offsets[tp] = (end - rng.randint(0, 10**5), end)
                views.append(
                    GroupView(f"group-{g}", "Stable", "range", ("k:9092", 1), members, offsets)
                )
                g += 1
            text = offsets_view(views, "3.6") + "\n"
            out.write(text)
            written += len(text)


def write_bombs(directory: Path) -> list[Path]:
    """Issue 56's compression bombs (tests/hostile_units.py BOMBS) in `directory`."""
    from hostile_units import BOMBS, bomb

    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / name for name in BOMBS]
    for path, parts in zip(paths, BOMBS.values(), strict=True):
        path.write_bytes(bomb(*parts))
    return paths


def compress(path: Path) -> Path:
    packed = path.with_name(path.name + ".gz")
    with path.open("rb") as source, gzip.open(packed, "wb", compresslevel=1) as out:
        shutil.copyfileobj(source, out, 4 * MB)
    return packed


def parse_task(raw_root: str, relative: str, max_memory_mb: int) -> dict:
    """One parse task over one file, in this process: its report and peak RSS. With
    max_memory_mb negative, parse_stream alone (no bronze batches) with its absolute."""
    from fleet_rebalance.capture.bronze_batches import (
        FILE_REPORT,
        capture_batches,
        parse_file_parts,
    )
    from fleet_rebalance.capture.parse import parse_stream
    from fleet_rebalance.filesystems import location

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if max_memory_mb < 0:
        started = time.perf_counter()
        with open(Path(raw_root) / relative, "rb") as stream:
            result, _ = parse_stream(relative, stream, max_memory_mb=-max_memory_mb)
        return {
            "seconds": time.perf_counter() - started,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "base_rss_mb": before,
            "rows": result.row_count,
            "lines": result.lines,
            "status": result.status,
            "reconciles": result.reconciles(),
        }
    root = location(raw_root)
    # As ingest runs it: an offsets file's rows written a chunk at a time.
    parse = functools.partial(
        parse_file_parts,
        root,
        path_pattern=PATTERN,
        log_timezone="UTC",
        max_memory_mb=max_memory_mb,
    )
    file = {"relative": relative, "cluster": "bench", "captured_at": None, "group": None}
    if "/captures/" in relative:
        file["captured_at"] = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    started = time.perf_counter()
    rows, summary = 0, {}
    for table, out in capture_batches([file], parse, DAY):
        if table == FILE_REPORT:
            summary = out
        else:
            rows += out.num_rows
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "base_rss_mb": before,
        "rows": rows,
        "lines": summary["lines"],
        "status": summary["status"],
        "reconciles": summary["reconciles"],
    }


def measure(raw_root: Path, relative: str, max_memory_mb: int, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        child = subprocess.run(
            [sys.executable, __file__, "--child", str(raw_root), relative, str(max_memory_mb)],
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    first = runs[0]
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
        "base_rss_mb": statistics.median(r["base_rss_mb"] for r in runs),
        **{k: first[k] for k in ("rows", "lines", "status", "reconciles")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log-mb", type=int, default=2048)
    parser.add_argument("--offsets-mb", type=int, default=1024)
    parser.add_argument("--burst-every", type=int, default=4800, help="filler lines per burst")
    parser.add_argument("--max-memory-mb", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--gzip", action="store_true", help="also measure the files gzipped")
    parser.add_argument("--bombs", action="store_true", help="also measure compression bombs")
    parser.add_argument(
        "--parse-only",
        action="store_true",
        help="measure parse_stream alone, without the bronze batches of the parse task",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="large_inputs_"))
    try:
        raw = root / "raw"
        files = []
        for relative, size, write in (
            (LOG, args.log_mb, functools.partial(write_log, burst_every=args.burst_every)),
            (OFFSETS, args.offsets_mb, write_offsets),
        ):
            if size <= 0:
                continue
            path = raw / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            write(path, size * MB)
            print(
                f"generated {relative}: {path.stat().st_size / MB:.0f} MiB "
                f"in {time.perf_counter() - started:.0f}s",
                flush=True,
            )
            files.append(path)
            if args.gzip:
                packed = compress(path)
                print(f"  gzipped: {packed.stat().st_size / MB:.0f} MiB", flush=True)
                files.append(packed)
        if args.bombs:
            files += write_bombs((raw / OFFSETS).parent)
        what = "parse_stream alone" if args.parse_only else "one parse task"
        print(
            f"{what} per file, capture.max_memory_mb={args.max_memory_mb}, median of {args.repeat}:"
        )
        for path in files:
            relative = str(path.relative_to(raw))
            budget = -args.max_memory_mb if args.parse_only else args.max_memory_mb
            result = measure(raw, relative, budget, args.repeat)
            used = result["peak_rss_mb"] - result["base_rss_mb"]
            within = used <= args.max_memory_mb
            print(
                f"  {path.name} ({path.stat().st_size / MB:.0f} MiB): "
                f"{result['seconds']:.1f}s, peak RSS {result['peak_rss_mb']:.0f} MiB "
                f"(before parsing {result['base_rss_mb']:.0f} MiB: the task used {used:.0f} of "
                f"{args.max_memory_mb} MiB, {'within' if within else 'OVER'}), "
                f"{result['lines']} lines, {result['rows']} rows, {result['status']}, "
                f"reconciles {result['reconciles']}",
                flush=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(parse_task(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        main()
