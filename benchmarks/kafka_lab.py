"""The Kafka lab (tests/kafka_lab.py) end to end, as a user would run it: start a real
KRaft cluster of one broker line, run the scenario with real clients while Kafka's
tools capture it, run `./spark-submit.sh nightly` on what the brokers and tools wrote,
and print what the pipeline made of it against what the lab did:

- captures and coordinator log lines ingested, quarantined lines;
- rebalances (from the logs, from captures only) against the brokers' generations;
- conformance of the observed assignment to each group's declared assignor;
- causes per group, found / scripted, and every disagreement (tests/lab_checks.py).

`--record` replaces tests/data/lab-<line>/ with the run (its captures, the brokers'
server.log files and truth.jsonl), the fixture tests/test_kafka_lab.py replays where no
JVM jars are at hand.

    python benchmarks/kafka_lab.py                  # both lines, ~8 min
    python benchmarks/kafka_lab.py --line 4 --record
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from deltalake import DeltaTable

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT / "tests"))
from kafka_lab import LINES, lab_conf, record_fixture, run_scenario, running_lab  # noqa: E402
from lab_checks import compare, read_truth  # noqa: E402


def table(warehouse: Path, name: str):
    return DeltaTable(str(warehouse / name)).to_pandas()


def nightly(raw: Path, warehouse: Path, conf: Path) -> float:
    """The nightly of every date the lab ran on (one, unless it ran across midnight)."""
    started = time.monotonic()
    subprocess.run(
        [str(PROJECT / "spark-submit.sh"), "nightly", "--conf", str(conf), "--raw-root",
         str(raw), "--warehouse", str(warehouse), "--all"],
        check=True, cwd=PROJECT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.monotonic() - started


def report(line: str, root: Path, warehouse: Path) -> list[str]:
    files = table(warehouse, "ingested_files")
    quarantine = table(warehouse, "quarantine")
    events = table(warehouse, "rebalance_events")
    timeline = table(warehouse, "rebalance_timeline")
    metrics = table(warehouse, "replay_metrics")
    coordinator = table(warehouse, "coordinator_events")
    truth = read_truth(root / "truth.jsonl")
    print(f"\n== Kafka {line} ({root})")
    kinds = Counter(files["kind"])
    print(f"files: {dict(sorted(kinds.items()))}, status {dict(Counter(files['status']))}")
    print(
        f"coordinator log: {len(coordinator)} event rows from "
        f"{int(files.loc[files['kind'] == 'coordinator_log', 'rows'].sum())} parsed lines; "
        f"quarantined lines: {len(quarantine)}"
    )
    rebalances = events[events["trigger"] != "initial"]
    print(
        f"rebalances: {len(rebalances)} ({dict(Counter(rebalances['source']))}) + "
        f"{int((events['trigger'] == 'initial').sum())} initial; the logs' generations: "
        f"{len(timeline)}, of them cooperative follow-up rounds: {int(timeline['follow_up'].sum())}"
    )
    decided = metrics[(metrics["assignor"] == "observed") & metrics["conforms"].notna()]
    print("conformance of the observed assignment to the declared assignor, per group:")
    for group, rows in decided.groupby("group_id"):
        share = rows["conforms"].astype(bool).mean()
        print(f"  {group:16} {truth.assignors.get(group, '?'):20} {share:6.1%} of {len(rows)}")
    found = compare(
        truth,
        events.to_dict("records"),
        timeline[timeline["follow_up"]].to_dict("records"),
    )
    print("causes per group, found (scripted):")
    for group in sorted(found.causes):
        got, want = found.causes[group], found.expected[group]
        shown = ", ".join(f"{c} {got[c]} ({want.get(c, 0)})" for c in sorted(got | want))
        print(f"  {group:16} {shown}")
    print(f"disagreements: {len(found.problems)}")
    for problem in found.problems:
        print(f"  {problem}")
    return found.problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--line", choices=[*LINES, "all"], default="all")
    parser.add_argument("--root", type=Path, help="where the runs go (default: a temp dir)")
    parser.add_argument("--record", action="store_true", help="replace tests/data/lab-<line>")
    args = parser.parse_args(argv)
    lines = list(LINES) if args.line == "all" else [args.line]
    base = args.root or Path(tempfile.mkdtemp(prefix="kafka-lab-"))
    problems = 0
    for line in lines:
        root = base / f"lab-{line}"
        shutil.rmtree(root, ignore_errors=True)
        started = time.monotonic()
        with running_lab(line, root, agent=True) as lab:
            run_scenario(lab)
        lab_s = time.monotonic() - started
        warehouse = root / "warehouse"
        nightly_s = nightly(root / "raw", warehouse, lab_conf(root))
        print(f"\nlab {line}: scenario {lab_s:.0f} s, nightly {nightly_s:.0f} s")
        problems += len(report(line, root, warehouse))
        if args.record:
            print(f"recorded: {record_fixture(root, PROJECT / 'tests' / 'data' / f'lab-{line}')}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
