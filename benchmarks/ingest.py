"""Ingest benchmark: offsets-view lines per second per core, beside Spark's CSV reader.

Generates a capture set of `--lines` offsets-view rows (3.6 layout, `--files` files, many
group blocks each) and the same rows as one CSV per file, then times on local[1] (one
core): spark.read.csv with an explicit schema into the noop sink; the ingest job on a
fresh warehouse (whole files per parse task, mapInArrow, every bronze table written by
delta-spark, the ledger too); and the CSV reader into Delta. Prints medians of
`--repeat` runs and the ratios. Target: at least half the CSV reader's speed.

    python benchmarks/ingest.py --lines 1000000
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from fleet_rebalance.capture import store
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import location
from fleet_rebalance.generate.render import GroupView, MemberView, offsets_view
from fleet_rebalance.pipeline import ingest
from fleet_rebalance.spark.session import build_session

CSV_SCHEMA = (
    "group_id string, topic string, partition int, current_offset long, "
    "log_end_offset long, lag long, consumer_id string, host string, client_id string"
)


def write_capture_set(root: Path, lines: int, files: int, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    raw, csvs = root / "raw", root / "csv"
    per_file = lines // files
    for f in range(files):
        folder = raw / "bench" / "captures" / f"2026-11-20T{f // 60:02d}{f % 60:02d}Z"
        folder.mkdir(parents=True)
        views, rows = [], []
        written = 0
        g = 0
        while written < per_file:
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
            for p in range(min(48, per_file - written)):
                tp = (f"topic-{g % 17}", p)
                members[p % 4].partitions.append(tp)
                end = rng.randint(10**6, 10**9)
                offsets[tp] = (end - rng.randint(0, 10**5), end)
                m = members[p % 4]
                rows.append(
                    (
                        f"group-{g}",
                        tp[0],
                        p,
                        offsets[tp][0],
                        end,
                        end - offsets[tp][0],
                        m.member_id,
                        m.host,
                        m.client_id,
                    )
                )
            written += len(offsets)
            views.append(
                GroupView(f"group-{g}", "Stable", "range", ("k:9092", 1), members, offsets)
            )
            g += 1
        (folder / "offsets.txt").write_text(offsets_view(views, "3.6"), encoding="utf-8")
        csvs.mkdir(exist_ok=True)
        with (csvs / f"part-{f:04d}.csv").open("w", newline="") as handle:
            csv.writer(handle).writerows(rows)
    return raw, csvs


def _timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _noop(frame) -> None:
    frame.write.format("noop").mode("overwrite").save()


def _ingest(spark, config: Config, day: dt.date) -> None:
    """The ingest job as a nightly runs it, on a fresh warehouse."""
    shutil.rmtree(config.warehouse, ignore_errors=True)
    ingest.run(spark, config, day)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fleet-ingest-bench-"))
    try:
        raw, csvs = write_capture_set(root, args.lines, args.files)
        config = Config(
            raw_root=str(raw),
            warehouse=str(root / "wh"),
            spark={"spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "2"},
        )
        spark = build_session(config, job="bench-ingest", master="local[1]")
        spark.sparkContext.setLogLevel("ERROR")
        day = dt.date(2026, 11, 20)
        files = store.discover(location(str(raw)), config.capture.path_pattern)
        lines = sum(1 for p in raw.rglob("*.txt") for _ in p.open(encoding="utf-8"))
        times: dict[str, list[float]] = {k: [] for k in ("native", "ours", "native_delta")}
        csv_rows = spark.read.schema(CSV_SCHEMA).csv(str(csvs))
        out = str(root / "csv-delta")

        def csv_to_delta() -> None:
            csv_rows.write.format("delta").mode("overwrite").save(out)

        for _ in range(args.repeat):
            times["native"].append(_timed(lambda: _noop(csv_rows)))
            times["ours"].append(_timed(lambda: _ingest(spark, config, day)))
            times["native_delta"].append(_timed(csv_to_delta))
        median = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"{lines:,} capture lines in {len(files)} files ({args.lines:,} offsets rows), local[1]"
        )
        for key, label in (
            ("native", "native (CSV reader -> noop)           "),
            ("ours", "ours   (ingest: parse tasks -> Delta) "),
            ("native_delta", "native (CSV reader -> Delta)          "),
        ):
            count, unit = (lines, "lines") if key.startswith("ours") else (args.lines, "rows")
            print(
                f"{label}: median {median[key]:6.2f} s  {count / median[key]:12,.0f} {unit}/s/core"
            )
        for ours, native in (("ours", "native"), ("ours", "native_delta")):
            ratio = (lines / median[ours]) / (args.lines / median[native])
            print(f"ratio {ours}/{native}: {ratio:.2f} (target >= 0.5)")
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
