"""The fleet generator: deterministic, data/sample is what the generate job writes with
its defaults, and everything it writes parses cleanly.

When the generator changes what it writes, regenerate the sample with

    ./spark-submit.sh generate --out data/sample --clean

and re-derive the numbers the tests check on it (docs/sample-fleet.md)."""

from __future__ import annotations

import datetime as dt
import runpy
from collections import Counter
from pathlib import Path

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.generate.cross_zone_truth import cross_zone_path
from fleet_rebalance.generate.fleet import Fleet, FleetSpec, truth_path, write_fleet

PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample"
GENERATE = PROJECT / "jobs" / "generate_fleet.py"

SPEC = FleetSpec(
    clusters=3,
    groups_per_cluster=9,
    topics_per_cluster=4,
    start=dt.datetime(2026, 11, 20, 0, 0, tzinfo=dt.UTC),
    hours=8,
    interval_minutes=20,
    seed=11,
)


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_same_bytes(tmp_path):
    write_fleet(SPEC, tmp_path / "a")
    write_fleet(SPEC, tmp_path / "b")
    assert files(tmp_path / "a") == files(tmp_path / "b")
    for beside in (truth_path, cross_zone_path):  # the truths, beside the captures
        assert beside(tmp_path / "a").read_bytes() == beside(tmp_path / "b").read_bytes()


def test_generate_with_its_defaults_writes_the_sample(tmp_path):
    """Given the generate job's flags with nothing but --out, When its main runs, Then the
    tree it writes is data/sample's, file for file and byte for byte, and its generation
    and cross-zone truths are data/sample.truth.jsonl and data/sample.cross_zone.jsonl
    (issue 53: no step patches the sample after the generator)."""
    out = tmp_path / "sample"
    main = runpy.run_path(str(GENERATE), run_name="generate_fleet")["main"]
    assert main(job_parser("generate").parse_args(["--out", str(out)])) == 0
    written, committed = files(out), files(SAMPLE)
    assert sorted(written) == sorted(committed)
    differing = [name for name in committed if written[name] != committed[name]]
    assert differing == []
    for beside in (truth_path, cross_zone_path):
        assert beside(out).read_bytes() == beside(SAMPLE).read_bytes(), beside(SAMPLE).name


def test_every_generated_file_parses_and_reconciles(tmp_path):
    written = write_fleet(SPEC, tmp_path)
    kinds, statuses, reasons = Counter(), Counter(), Counter()
    events = Counter()
    for relative, data in files(tmp_path).items():
        result = parse_capture(relative, data)
        assert result.reconciles(), (relative, result.reconciliation())
        kinds[result.kind] += 1
        statuses[result.status] += 1
        reasons.update(q["reason"] for q in result.quarantine)
        events.update(r["event"] for r in result.records("coordinator_events"))
    assert written["files"] == sum(kinds.values())
    assert set(kinds) == {
        "offsets",
        "members",
        "state",
        "topics",
        "brokers",
        "log_dirs",
        "coordinator_log",
        "unknown",
    }
    assert kinds["unknown"] == 1  # the empty file: no content, no kind
    # one deliberate failed capture (an empty file); nothing else is quarantined
    assert statuses["failed_capture"] == 1
    assert list(reasons) == ["empty capture file (failed capture: a gap, not 'no groups')"]
    assert {
        "prepare_rebalance",
        "stabilized",
        "assignment_received",
        "epoch_bumped",
        "static_member_rejoined",
        "static_member_joined",  # a static member back past its session timeout
        "member_failed",
    } <= set(events)


def test_each_release_prints_its_own_quirks(tmp_path):
    write_fleet(SPEC, tmp_path)
    members = {
        c: (
            tmp_path / c / "captures" / "2026-11-20T0400Z" / "consumer-groups-members.txt"
        ).read_text()
        for c in ("prod-east", "prod-west", "lab")
    }
    assert "orders(" in members["prod-east"] or "audit(" in members["prod-east"]  # 3.6 Scala
    assert ", (" in members["prod-west"] or "(0" in members["prod-west"]  # 3.9 topic-less
    assert "CURRENT-ASSIGNMENT" in members["lab"]  # 4.1 KIP-1099
    offsets_39 = (
        tmp_path / "prod-west" / "captures" / "2026-11-20T0400Z" / "consumer-groups-offsets.txt"
    ).read_text()
    assert not offsets_39.endswith("\n")  # 3.8/3.9 print no final newline
    # ... in their offsets view only: the members view ends each row with println(), and
    # each header follows a blank line (tests/data/lab-3.9, the live 3.9 tools' output).
    assert members["prod-west"].endswith("\n")
    lines = members["prod-west"].split("\n")
    assert all(lines[i - 1] == "" for i, line in enumerate(lines) if line.startswith("GROUP "))


def test_topics_grow_with_the_fleet_so_each_has_a_few_readers():
    spec = FleetSpec(
        clusters=1, groups_per_cluster=90, topics_per_group=(1, 1, 1, 2), groups_per_topic=3
    )
    (cluster,) = Fleet(spec).clusters
    readers = Counter(t for g in cluster.groups for t in g.topics)
    plain = [t for t in cluster.topics if not t.startswith("events-")]
    assert len(plain) == len(set(plain)) == 38  # ceil(90 * 1.25 / 3)
    assert sum(readers[t] for t in plain) / len(plain) < 4
    assert max(len(g.topics) for g in cluster.groups) <= 2
    # The default keeps the sample's shape: every group picks from the same few topics.
    (small,) = Fleet(FleetSpec(clusters=1, groups_per_cluster=90)).clusters
    assert len([t for t in small.topics if not t.startswith("events-")]) == 5
