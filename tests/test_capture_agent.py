"""fleet-capture against a fake admin client (tests/fake_admin.py): no
Kafka, no Spark. What a snapshot holds is checked by parsing it with ingest's own
parser (capture.parse.parse_capture) into literal expected rows."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupType, KafkaError
from fake_admin import FakeAdmin, FakeCluster, FakeGroup, FakeMember

from fleet_rebalance.agent import cli
from fleet_rebalance.agent.config import (
    AgentConfig,
    Backoff,
    ClusterConfig,
    GroupFilter,
    Timeouts,
    load_config,
    parse_config,
)
from fleet_rebalance.agent.errors import ConfigError
from fleet_rebalance.agent.runner import cluster_loop, run_forever, run_once
from fleet_rebalance.agent.snapshot import BROKERS_FILE, GROUPS_FILE, TOPICS_FILE
from fleet_rebalance.agent.writer import remove_stale_staging
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN
from fleet_rebalance.capture.store import HIDDEN_DIRECTORY, discover, survey
from fleet_rebalance.filesystems import Location

PROJECT = Path(__file__).resolve().parent.parent
AT = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
KIP848_ID = "Q7K_qda8THGpKHzSy-UQ8A"


# -- helpers ---------------------------------------------------------------------------------
def east() -> FakeCluster:
    """Four groups: a classic group with a static member, an unowned committed partition,
    an owned partition without a commit and a log truncated below its commit; a KIP-848
    group with a target assignment; an Empty group; a group whose describe fails."""
    cluster = FakeCluster(topics={"orders": 3, "payments": 2, "audit": 1})
    cluster.log_end = {
        ("orders", 0): 100,
        ("orders", 1): 200,
        ("orders", 2): 300,
        ("payments", 0): 50,
        ("payments", 1): 60,
        ("audit", 0): 10,
    }
    cluster.log_start = {tp: 5 for tp in cluster.log_end}
    cluster.add_group(
        FakeGroup(
            "orders-app",
            coordinator=2,
            members=[
                FakeMember("m-1", "c-1", "/10.0.0.1", [("orders", 0), ("orders", 1)]),
                FakeMember("m-2", "c-2", "/10.0.0.2", [("orders", 2)], group_instance_id="pod-2"),
            ],
            committed={("orders", 0): 90, ("orders", 1): 200, ("audit", 0): 12},
        )
    )
    cluster.add_group(
        FakeGroup(
            "payments",
            type=ConsumerGroupType.CONSUMER,
            assignor="uniform",
            coordinator=3,
            members=[
                FakeMember(
                    KIP848_ID,
                    "c-p",
                    "/10.0.0.3",
                    [("payments", 0)],
                    target_assignment=[("payments", 0), ("payments", 1)],
                )
            ],
            committed={("payments", 0): 45, ("payments", 1): 60},
        )
    )
    cluster.add_group(
        FakeGroup(
            "archiver", state=ConsumerGroupState.EMPTY, assignor="", committed={("orders", 0): 100}
        )
    )
    cluster.add_group(FakeGroup("broken"))
    cluster.describe_errors["broken"] = KafkaError.COORDINATOR_NOT_AVAILABLE
    return cluster


def config_for(raw: Path, *names: str, **overrides) -> AgentConfig:
    settings = {
        "interval_s": 0.05,
        "timeouts": Timeouts(request_s=2.0, cycle_s=10.0),
        "backoff": Backoff(initial_s=0.01, max_s=0.04),
        **overrides,
    }
    clusters = tuple(ClusterConfig(name=n, bootstrap_servers=f"{n}:9092") for n in names)
    return AgentConfig(raw_root=raw, clusters=clusters, **settings)


def ticking(start: dt.datetime = AT):
    """A `now` that moves one second per call: every cycle gets its own directory."""
    seconds = itertools.count()
    lock = threading.Lock()

    def now() -> dt.datetime:
        with lock:
            return start + dt.timedelta(seconds=next(seconds))

    return now


def snapshots(raw: Path, cluster: str) -> list[Path]:
    captures = raw / cluster / "captures"
    return (
        sorted(p for p in captures.iterdir() if not p.name.startswith("."))
        if captures.exists()
        else []
    )


def parsed(raw: Path, path: Path):
    relative = path.relative_to(raw).as_posix()
    return parse_capture(relative, path.read_bytes())


def pick(rows: list[dict], *keys: str) -> list[tuple]:
    return sorted((tuple(r[k] for k in keys) for r in rows), key=repr)


class Lines:
    """A status-line sink that can stop a run once a condition holds."""

    def __init__(self, stop: threading.Event | None = None, until=None) -> None:
        self.lines: list[str] = []
        self.stop, self.until = stop, until
        self.lock = threading.Lock()
        self.at_stop: list[str] | None = None  # the lines when `until` first held
        self.stopped_at: float | None = None

    def __call__(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)
            if self.stop is None or self.until is None or self.at_stop is not None:
                return
            if self.until(self.lines):
                self.at_stop, self.stopped_at = list(self.lines), time.monotonic()
                self.stop.set()


# -- what a snapshot holds -------------------------------------------------------------------
def test_snapshot_parses_into_the_rows_the_cli_views_give(tmp_path):
    """Given the east cluster (four groups) captured once at 09:10:00Z,
    Then ingest's parser reads groups.jsonl without quarantine into these rows;
    Expected: the offsets view's rows (owned partitions with their member, committed
    partitions nobody owns with nulls, a null CURRENT-OFFSET where nothing is committed),
    the members and state views' rows, and the failed group as no row in any table (a gap
    for replay), its line structural and named in the file's reason."""
    raw = tmp_path / "raw"
    config = config_for(raw, "east")
    assert run_once(config, {"east": FakeAdmin(east())}, Lines(), now=lambda: AT) == 0
    (directory,) = snapshots(raw, "east")
    assert directory.name == "2026-11-20T091000Z"
    result = parsed(raw, directory / GROUPS_FILE)
    assert (result.kind, result.status, result.quarantine) == ("jsonl", "ok", [])
    assert result.reconciles()
    states = result.records("group_states")
    assert {(r["cluster"], r["captured_at"], r["source_file"]) for r in states} == {
        ("east", AT, "east/captures/2026-11-20T091000Z/groups.jsonl")
    }
    assert pick(
        states,
        "group_id",
        "state",
        "assignment_strategy",
        "coordinator_host",
        "coordinator_id",
        "member_count",
    ) == [
        ("archiver", "Empty", None, "127.0.0.1:9091", 1, 0),
        ("orders-app", "Stable", "range", "127.0.0.1:9092", 2, 2),
        ("payments", "Stable", "uniform", "127.0.0.1:9093", 3, 1),
    ]
    assert pick(
        result.records("members"),
        "group_id",
        "consumer_id",
        "group_instance_id",
        "host",
        "client_id",
        "partition_count",
        "assignment",
        "subscription",
    ) == [
        (
            "orders-app",
            "m-1",
            None,
            "/10.0.0.1",
            "c-1",
            2,
            [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 1}],
            None,
        ),
        (
            "orders-app",
            "m-2",
            "pod-2",
            "/10.0.0.2",
            "c-2",
            1,
            [{"topic": "orders", "partition": 2}],
            None,
        ),
        (
            "payments",
            KIP848_ID,
            None,
            "/10.0.0.3",
            "c-p",
            1,
            [{"topic": "payments", "partition": 0}],
            None,
        ),
    ]
    assert pick(
        result.records("offsets"),
        "group_id",
        "topic",
        "partition",
        "current_offset",
        "log_end_offset",
        "lag",
        "consumer_id",
        "host",
        "client_id",
    ) == [
        ("archiver", "orders", 0, 100, 100, 0, None, None, None),
        ("orders-app", "audit", 0, 12, None, None, None, None, None),
        ("orders-app", "orders", 0, 90, 100, 10, "m-1", "/10.0.0.1", "c-1"),
        ("orders-app", "orders", 1, 200, 200, 0, "m-1", "/10.0.0.1", "c-1"),
        ("orders-app", "orders", 2, None, 300, None, "m-2", "/10.0.0.2", "c-2"),
        ("payments", "payments", 0, 45, 50, 5, KIP848_ID, "/10.0.0.3", "c-p"),
        ("payments", "payments", 1, 60, 60, 0, None, None, None),
    ]
    assert (result.structural, result.row_lines, result.lines) == (1, 3, 4)
    assert result.failed_groups == {
        "broken": "COORDINATOR_NOT_AVAILABLE: Broker: Coordinator not available"
    }
    assert result.failed_groups_note == (
        "1 group the exporter failed to capture: broken (COORDINATOR_NOT_AVAILABLE)"
    )


def test_snapshot_keeps_what_the_admin_api_adds_beside_the_parsed_keys(tmp_path):
    """Given the east cluster, Then the jsonl lines carry type, the target assignment,
    leader epochs, log start offsets, the truncated log end and the failure's reason;
    Expected: as listed (the parser ignores these keys, the file keeps them)."""
    raw = tmp_path / "raw"
    run_once(config_for(raw, "east"), {"east": FakeAdmin(east())}, Lines(), now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    lines = (directory / GROUPS_FILE).read_text().splitlines()
    by_group = {record["group_id"]: record for record in map(json.loads, lines)}
    assert [r["group_id"] for r in map(json.loads, lines)] == sorted(by_group)
    assert by_group["payments"]["type"] == "consumer"
    assert by_group["orders-app"]["type"] == "classic"
    assert by_group["payments"]["members"][0]["target_assignment"] == [
        ["payments", 0],
        ["payments", 1],
    ]
    audit = next(o for o in by_group["orders-app"]["offsets"] if o["topic"] == "audit")
    assert (audit["log_end_offset"], audit["log_end_offset_below_committed"]) == (None, 10)
    orders0 = by_group["orders-app"]["offsets"][0]
    assert (orders0["leader_epoch"], orders0["log_start_offset"]) == (3, 5)
    assert by_group["broken"] == {
        "group_id": "broken",
        "cluster": "east",
        "captured_at": "2026-11-20T09:10:00Z",
        "type": "classic",
        "capture_error": {
            "stage": "describe",
            "reason": "COORDINATOR_NOT_AVAILABLE: Broker: Coordinator not available",
        },
    }


def test_topics_file_parses_into_topic_partitions(tmp_path):
    """Given the east cluster, Then topics.txt parses as kafka-topics.sh --describe;
    Expected: one row per partition (6), ids and replicas as described, nothing quarantined."""
    raw = tmp_path / "raw"
    run_once(config_for(raw, "east"), {"east": FakeAdmin(east())}, Lines(), now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    result = parsed(raw, directory / TOPICS_FILE)
    assert (result.kind, result.status, result.quarantine) == ("topics", "ok", [])
    rows = result.records("topic_partitions")
    assert pick(rows, "topic", "partition", "leader", "replicas", "isr") == [
        ("audit", 0, 1, [1, 2, 3], [1, 2, 3]),
        ("orders", 0, 1, [1, 2, 3], [1, 2, 3]),
        ("orders", 1, 2, [2, 3, 1], [2, 3, 1]),
        ("orders", 2, 3, [3, 1, 2], [3, 1, 2]),
        ("payments", 0, 1, [1, 2, 3], [1, 2, 3]),
        ("payments", 1, 2, [2, 3, 1], [2, 3, 1]),
    ]
    assert all(r["topic_id"] and len(r["topic_id"]) == 22 for r in rows)


def test_brokers_file_parses_into_each_brokers_rack(tmp_path):
    """Given the east cluster's three nodes, one of them without a rack, Then brokers.txt
    parses as kafka-configs.sh --describe --all; Expected: one row per broker, null rack
    for the one without."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.racks = {1: "use1-az1", 2: None, 3: "b"}
    run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, Lines(), now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    result = parsed(raw, directory / BROKERS_FILE)
    assert (result.kind, result.status, result.quarantine) == ("brokers", "ok", [])
    assert pick(result.records("brokers"), "broker", "rack") == [
        (1, "use1-az1"),
        (2, None),
        (3, "b"),
    ]


def test_a_cluster_description_that_fails_leaves_out_brokers_txt_only(tmp_path):
    """Given describe_cluster failing, Then the groups and topics are still written and the
    cycle's line says why the racks are missing; Expected: no brokers.txt."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.describe_cluster_error = KafkaError.CLUSTER_AUTHORIZATION_FAILED
    lines = Lines()
    run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, lines, now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    assert sorted(p.name for p in directory.iterdir()) == [GROUPS_FILE, TOPICS_FILE]
    assert "; brokers not described: CLUSTER_AUTHORIZATION_FAILED" in lines.lines[0]


def test_a_group_whose_offsets_cannot_be_read_is_written_as_failed(tmp_path):
    """Given orders-app's offset fetch failing, Then the group is written with its reason
    and neither members nor offsets (members without offsets would make ingest infer an
    empty subscription); Expected: one failed group in the status line, exit 0."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.describe_errors.clear()
    cluster.offset_errors["orders-app"] = KafkaError.GROUP_AUTHORIZATION_FAILED
    lines = Lines()
    assert (
        run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, lines, now=lambda: AT) == 0
    )
    assert "ok 4 groups (1 failed)" in lines.lines[0]
    (directory,) = snapshots(raw, "east")
    records = {json.loads(x)["group_id"]: json.loads(x) for x in (directory / GROUPS_FILE).open()}
    assert records["orders-app"]["capture_error"]["stage"] == "offsets"
    assert records["orders-app"]["capture_error"]["reason"].startswith("GROUP_AUTHORIZATION_FAILED")
    assert "members" not in records["orders-app"]
    rows = parsed(raw, directory / GROUPS_FILE).records("members")
    assert {r["group_id"] for r in rows} == {"payments"}


def test_an_incomplete_listing_is_captured_and_noted(tmp_path):
    """Given one broker's ListGroups failing while the others answer, Then the groups
    listed are captured (the missing ones are a gap, not gone) and the line says so;
    Expected: ok, 'listing incomplete: COORDINATOR_LOAD_IN_PROGRESS...'."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.listing_errors = [KafkaError.COORDINATOR_LOAD_IN_PROGRESS]
    lines = Lines()
    assert (
        run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, lines, now=lambda: AT) == 0
    )
    assert " east ok 4 groups (1 failed)" in lines.lines[0]
    assert "; listing incomplete: COORDINATOR_LOAD_IN_PROGRESS" in lines.lines[0]


def test_a_cluster_without_groups_gets_no_groups_file(tmp_path):
    """Given a cluster with topics and no groups, Then no groups.jsonl is written (ingest
    reads an empty capture file as a failed capture); Expected: brokers.txt and topics.txt."""
    raw = tmp_path / "raw"
    cluster = FakeCluster(topics={"orders": 2}, log_end={("orders", 0): 1, ("orders", 1): 1})
    lines = Lines()
    assert (
        run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, lines, now=lambda: AT) == 0
    )
    assert " east ok 0 groups, 0 partitions, 1 topics in " in lines.lines[0]
    (directory,) = snapshots(raw, "east")
    assert sorted(p.name for p in directory.iterdir()) == [BROKERS_FILE, TOPICS_FILE]


def test_a_consumer_group_short_of_its_target_assignment_is_reconciling(tmp_path):
    """Given the KIP-848 group reported in state Unknown (librdkafka 2.16 has no
    Assigning/Reconciling) with a member short of its target assignment, Then its state
    is written Reconciling (replay skips mid-rebalance snapshots) and librdkafka's own
    kept beside it; Expected: group_states Reconciling, state_reported Unknown."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.groups["payments"].state = ConsumerGroupState.UNKNOWN
    cluster.groups["orders-app"].state = ConsumerGroupState.UNKNOWN  # classic: left alone
    run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, Lines(), now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    states = parsed(raw, directory / GROUPS_FILE).records("group_states")
    assert pick(states, "group_id", "state") == [
        ("archiver", "Empty"), ("orders-app", "Unknown"), ("payments", "Reconciling")]  # fmt: skip
    records = [json.loads(line) for line in (directory / GROUPS_FILE).open()]
    assert [(r["group_id"], r["state_reported"]) for r in records if "state_reported" in r] == [
        ("payments", "Unknown")]  # fmt: skip


def test_a_group_deleted_since_the_listing_is_left_out(tmp_path):
    """Given a listed group that is Dead when described (deleted in between), Then it is
    left out as the CLI leaves it out; Expected: three groups, 'gone' noted."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.groups["archiver"].state = ConsumerGroupState.DEAD
    lines = Lines()
    run_once(config_for(raw, "east"), {"east": FakeAdmin(cluster)}, lines, now=lambda: AT)
    assert "ok 3 groups (1 failed)" in lines.lines[0]
    assert "1 group(s) gone since the listing" in lines.lines[0]


def test_group_filter_include_and_exclude(tmp_path):
    """Given include ^(orders|payments) and exclude ^payments$, Then only orders-app is
    described; Expected: one group in the snapshot."""
    raw = tmp_path / "raw"
    cluster_config = ClusterConfig(
        name="east",
        bootstrap_servers="east:9092",
        groups=parse_config(
            {
                "raw_root": "x",
                "clusters": [{"name": "e", "bootstrap_servers": "b:1"}],
                "groups": {"include": ["^(orders|payments)"], "exclude": ["^payments$"]},
            },
            {},
        )
        .clusters[0]
        .groups,
    )
    config = config_for(raw, "east")
    config = config.model_copy(update={"clusters": (cluster_config,)})
    run_once(config, {"east": FakeAdmin(east())}, Lines(), now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    assert [json.loads(x)["group_id"] for x in (directory / GROUPS_FILE).open()] == ["orders-app"]
    assert GroupFilter().wants("anything")


# -- trouble ---------------------------------------------------------------------------------
def test_backoff_doubles_up_to_its_cap():
    """Given Backoff(5, 60), Expected: 5, 10, 20, 40, 60, 60 after 1..6 failures."""
    assert [Backoff(initial_s=5, max_s=60).delay(n) for n in range(1, 7)] == [5, 10, 20, 40, 60, 60]


def test_cluster_down_for_two_cycles_is_retried_with_backoff_then_captured(tmp_path):
    """Given a cluster whose listing fails twice, Then the loop reports two failures with
    growing retry delays and writes nothing for them, then captures;
    Expected: FAILED (retry 0.01s), FAILED (retry 0.02s), ok; one snapshot."""
    raw = tmp_path / "raw"
    cluster = east()
    cluster.down_cycles = 2
    stop = threading.Event()
    lines = Lines(stop, until=lambda seen: any(" ok " in s for s in seen))
    config = config_for(raw, "east")
    loop = threading.Thread(
        target=cluster_loop,
        args=(config.clusters[0], FakeAdmin(cluster), config, lines, stop, ticking()),
    )
    loop.start()
    loop.join(timeout=10)
    assert not loop.is_alive()
    assert [line.split(" ", 2)[2][:6] for line in lines.lines] == ["FAILED", "FAILED", "ok 4 g"]
    assert "groups not listed: _TRANSPORT" in lines.lines[0]
    assert lines.lines[0].endswith("retry in 0.01s")
    assert lines.lines[1].endswith("retry in 0.02s")
    assert [p.name for p in snapshots(raw, "east")] == ["2026-11-20T091002Z"]
    assert cluster.calls.count("list_consumer_groups") == 3


def test_once_exits_1_when_a_cluster_is_down_and_still_writes_the_others(tmp_path):
    """Given east down and west up, Then --once captures west and reports east failed;
    Expected: exit 1, a west snapshot, no east snapshot."""
    raw = tmp_path / "raw"
    down = east()
    down.down_cycles = 1
    admins = {"east": FakeAdmin(down), "west": FakeAdmin(east())}
    lines = Lines()
    assert run_once(config_for(raw, "east", "west"), admins, lines, now=lambda: AT) == 1
    assert snapshots(raw, "east") == []
    assert len(snapshots(raw, "west")) == 1
    assert sorted(line.split()[1:3] for line in lines.lines) == [["east", "FAILED"], ["west", "ok"]]


def test_a_slow_cluster_never_delays_a_fast_one(tmp_path):
    """Given west answering at once and east taking 0.3 s per admin call (a cycle of
    several seconds), Then west completes cycle after cycle while east is still in its
    first; Expected: three west snapshots before any east line."""
    raw = tmp_path / "raw"
    slow = east()
    slow.delay_s = 0.3
    stop = threading.Event()
    lines = Lines(stop, until=lambda seen: sum(" west ok " in s for s in seen) >= 3)
    admins = {"east": FakeAdmin(slow), "west": FakeAdmin(east())}
    started = time.monotonic()
    timer = threading.Timer(20, stop.set)  # a hung test ends anyway
    timer.start()
    try:
        run_forever(config_for(raw, "east", "west"), admins, lines, stop, now=ticking())
    finally:
        timer.cancel()
    assert lines.stopped_at - started < 1.5  # east's first cycle takes about 2.7 s
    assert not any(" east " in line for line in lines.at_stop)
    assert len(snapshots(raw, "west")) >= 3


def test_once_reports_the_fast_cluster_first(tmp_path):
    """Given east slow (0.2 s per call) and west fast, Then --once runs both at once and
    prints west's line before east's; Expected: west, east; both captured, exit 0."""
    raw = tmp_path / "raw"
    slow = east()
    slow.delay_s = 0.2
    lines = Lines()
    admins = {"east": FakeAdmin(slow), "west": FakeAdmin(east())}
    assert run_once(config_for(raw, "east", "west"), admins, lines, now=lambda: AT) == 0
    assert [line.split()[1] for line in lines.lines] == ["west", "east"]


def test_a_cycle_past_its_deadline_writes_nothing(tmp_path):
    """Given cycle_s 0.3 and 0.2 s per admin call, Then the cycle gives up between calls;
    Expected: FAILED 'cycle deadline passed', no snapshot, exit 1."""
    raw = tmp_path / "raw"
    slow = east()
    slow.delay_s = 0.2
    config = config_for(raw, "east", timeouts=Timeouts(request_s=1.0, cycle_s=0.3))
    lines = Lines()
    assert run_once(config, {"east": FakeAdmin(slow)}, lines, now=lambda: AT) == 1
    assert "FAILED" in lines.lines[0]
    assert "cycle deadline passed during" in lines.lines[0]
    assert snapshots(raw, "east") == []


KILLED_WRITER = textwrap.dedent(
    """
    import datetime as dt, sys, time
    from pathlib import Path
    from fleet_rebalance.agent.writer import write_snapshot

    def lines():
        for i in range(100000):
            yield '{"group_id": "g%d"}' % i
            if i == 10:
                print("writing", flush=True)
            time.sleep(0.001)

    at = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
    files = [("topics.txt", ["Topic: a"]), ("groups.jsonl", lines())]
    write_snapshot(Path(sys.argv[1]), "east", at, files)
    """
)


def test_kill_9_mid_write_leaves_no_partial_snapshot(tmp_path):
    """Given a writer killed with SIGKILL while writing groups.jsonl, Then raw_root holds
    no capture ingest would read (only the hidden staging directory, which ingest reports
    as hidden and skips), and the next agent start removes it;
    Expected: discover() finds nothing; survey() one hidden directory; then none."""
    raw = tmp_path / "raw"
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src")}
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(raw)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)
    writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    root = Location(str(raw))
    assert discover(root, DEFAULT_PATH_PATTERN) == []
    (entry,) = survey(root, DEFAULT_PATH_PATTERN)
    assert entry.relative.startswith("east/captures/.2026-11-20T091000Z.")
    assert entry.skipped == HIDDEN_DIRECTORY
    assert len(remove_stale_staging(raw, "east")) == 1
    assert survey(root, DEFAULT_PATH_PATTERN) == []


def test_a_rerun_of_the_same_second_replaces_the_snapshot(tmp_path):
    """Given two --once runs at the same second, Then the second replaces the first's
    files (a re-run rewrites, never duplicates); Expected: one directory, two files."""
    raw = tmp_path / "raw"
    for _ in range(2):
        run_once(config_for(raw, "east"), {"east": FakeAdmin(east())}, Lines(), now=lambda: AT)
    (directory,) = snapshots(raw, "east")
    assert sorted(p.name for p in directory.iterdir()) == [BROKERS_FILE, GROUPS_FILE, TOPICS_FILE]
    assert [p for p in (raw / "east" / "captures").iterdir() if p.name.startswith(".")] == []


# -- configuration and secrets ---------------------------------------------------------------
SECRET = "s3cr3t-Pa55word"
KEY_SECRET = "key-pa55-from-file"


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def write_config(tmp_path: Path, raw: Path) -> Path:
    (tmp_path / "key-password").write_text(KEY_SECRET + "\n")
    path = tmp_path / "capture.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            raw_root: {raw}
            interval_s: 60
            clusters:
              - name: east
                bootstrap_servers: [kafka-1:9092, kafka-2:9092]
                client:
                  security.protocol: SASL_SSL
                  sasl.mechanism: SCRAM-SHA-512
                  sasl.username: fleet-capture
                  sasl.password: ${{FC_TEST_PASSWORD}}
                  ssl.key.password: file:key-password
            """
        )
    )
    return path


def test_config_resolves_secrets_from_environment_and_files(tmp_path, monkeypatch):
    """Given ${FC_TEST_PASSWORD} and file:key-password, Then both resolve and are
    remembered as secrets; Expected: the values, bootstrap joined, secrets not in repr."""
    monkeypatch.setenv("FC_TEST_PASSWORD", SECRET)
    config = load_config(write_config(tmp_path, tmp_path / "raw"))
    (east_config,) = config.clusters
    properties = east_config.admin_properties()
    assert properties["sasl.password"] == SECRET
    assert properties["ssl.key.password"] == KEY_SECRET
    assert properties["bootstrap.servers"] == "kafka-1:9092,kafka-2:9092"
    assert config.secrets == {SECRET, KEY_SECRET}
    assert SECRET not in repr(config) and KEY_SECRET not in repr(config)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"clusters": [{"name": "e", "bootstrap_servers": "b:1"}]}, "raw_root: expected"),
        (
            {
                "raw_root": "ftp://bucket/raw",
                "clusters": [{"name": "e", "bootstrap_servers": "b:1"}],
            },
            "unsupported scheme",
        ),
        ({"raw_root": "r", "clusters": []}, "clusters: expected a non-empty list"),
        (
            {"raw_root": "r", "interval": 60, "clusters": []},
            r"the capture config: unknown key\(s\) \['interval'\]",
        ),
        (
            {"raw_root": "r", "clusters": [{"name": "e", "bootstrap": "b:1"}]},
            r"clusters\[0\]: unknown key\(s\) \['bootstrap'\]",
        ),
        (
            {"raw_root": "r", "clusters": [{"name": "../x", "bootstrap_servers": "b:1"}]},
            r"clusters\[0\]\.name: expected a plain directory name",
        ),
        ({"raw_root": "r", "clusters": [{"name": "e"}]}, r"clusters\[0\]\.bootstrap_servers"),
        (
            {
                "raw_root": "r",
                "clusters": [
                    {
                        "name": "e",
                        "bootstrap_servers": "b:1",
                        "client": {"sasl.password": "hunter2"},
                    }
                ],
            },
            "a secret must come from the environment",
        ),
        (
            {
                "raw_root": "r",
                "clusters": [
                    {
                        "name": "e",
                        "bootstrap_servers": "b:1",
                        "client": {"sasl.password": "${FC_UNSET_VARIABLE}"},
                    }
                ],
            },
            "environment variable FC_UNSET_VARIABLE is not set",
        ),
        (
            {
                "raw_root": "r",
                "interval_s": 0.5,
                "clusters": [{"name": "e", "bootstrap_servers": "b:1"}],
            },
            "interval_s: expected a positive number of seconds of at least 1",
        ),
        (
            {
                "raw_root": "r",
                "groups": {"include": ["("]},
                "clusters": [{"name": "e", "bootstrap_servers": "b:1"}],
            },
            r"groups\.include: '\(' is not a regular expression",
        ),
    ],
)
def test_config_mistakes_name_the_key(document, message):
    """Given a malformed config, Expected: ConfigError naming the key and what was found."""
    with pytest.raises(ConfigError, match=message):
        parse_config(document, {})


def test_the_example_config_loads(tmp_path):
    """Given conf/capture.example.yaml with its password variable set and its key
    password file pointed at a temporary file, Expected: two clusters, the per-cluster
    group filter, the batching and timeouts as written."""
    import yaml

    document = yaml.safe_load((PROJECT / "conf" / "capture.example.yaml").read_text())
    key_file = tmp_path / "key-password"
    key_file.write_text("k\n")
    document["clusters"][1]["client"]["ssl.key.password"] = f"file:{key_file}"
    env = {"FLEET_CAPTURE_PROD_EAST_PASSWORD": "p"}
    config = parse_config(document, env)
    assert [c.name for c in config.clusters] == ["prod-east", "prod-west"]
    assert (config.interval_s, config.timeouts, config.backoff) == (
        300.0,
        Timeouts(request_s=30.0, cycle_s=240.0),
        Backoff(initial_s=5.0, max_s=300.0),
    )
    assert config.batching.describe_topics == 500
    east_filter, west_filter = (c.groups for c in config.clusters)
    assert not east_filter.wants("_confluent-metrics") and east_filter.wants("orders-app")
    assert west_filter.wants("orders-app") and not west_filter.wants("billing")
    assert config.secrets == {"p", "k"}
    with pytest.raises(
        ConfigError, match=r"clusters\[1\]\.client\.ssl\.key\.password: cannot read"
    ):
        parse_config(yaml.safe_load((PROJECT / "conf" / "capture.example.yaml").read_text()), env)


def test_cli_usage_and_config_mistakes_exit_2(tmp_path, capsys, restore_logging):
    """Given no --conf, then a missing file, Expected: exit 2 with one line each."""
    with pytest.raises(SystemExit) as raised:
        cli.main([])
    assert raised.value.code == 2
    assert cli.main(["--conf", str(tmp_path / "missing.yaml"), "--once"]) == 2
    assert f"{tmp_path / 'missing.yaml'}: configuration file not found" in capsys.readouterr().err


def test_the_capture_config_is_read_by_the_jobs_hardened_loader(tmp_path):
    """Given capture configs with an alias bomb and a duplicate key (a bare safe_load
    expanded the one and let the last of the other win), Then each is one ConfigError
    naming its line, the job's own class."""
    from fleet_rebalance.config import ConfigError as JobConfigError

    assert ConfigError is JobConfigError
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text('a: &a ["x", "x"]\nb: [*a, *a]\n')
    with pytest.raises(ConfigError, match=r"bomb\.yaml: line 1: YAML anchors and aliases"):
        load_config(bomb)
    twice = tmp_path / "twice.yaml"
    twice.write_text("raw_root: /a\nraw_root: /b\n")
    with pytest.raises(ConfigError, match=r"twice\.yaml: line 2: duplicate key 'raw_root'"):
        load_config(twice)


def test_secrets_never_reach_a_status_line_a_log_line_or_a_snapshot(
    tmp_path, monkeypatch, capsys, restore_logging
):
    """Given a client library that echoes its password in an error and a log line (the
    worst case), Then stdout, stderr and every file under raw_root are free of both
    secrets; Expected: the echoed values masked as ***, exit 1 (the cluster failed)."""
    monkeypatch.setenv("FC_TEST_PASSWORD", SECRET)
    raw = tmp_path / "raw"
    conf = write_config(tmp_path, raw)

    class Leaky(FakeAdmin):
        def __init__(self, properties: dict[str, str]) -> None:
            super().__init__(east())
            self.password = properties["sasl.password"]

        def list_consumer_groups(self, **kwargs):
            logging.getLogger("fleet_rebalance.agent.librdkafka.east").warning(
                "SASL auth with password=%s key=%s", self.password, KEY_SECRET
            )
            raise RuntimeError(f"authentication failed for password {self.password}")

    status = cli.main(
        ["--conf", str(conf), "--once"],
        admin_factory=lambda cluster: Leaky(cluster.admin_properties()),
    )
    out, err = capsys.readouterr()
    assert status == 1
    assert "east FAILED" in out and "authentication failed for password ***" in out
    assert "password=*** key=***" in err
    for secret in (SECRET, KEY_SECRET):
        assert secret not in out and secret not in err
        for path in raw.rglob("*") if raw.exists() else []:
            assert path.is_dir() or secret not in path.read_text(errors="replace")

    ok = cli.main(["--conf", str(conf), "--once"], admin_factory=lambda cluster: FakeAdmin(east()))
    out, err = capsys.readouterr()
    assert ok == 0 and " east ok 4 groups (1 failed)" in out
    for path in raw.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert SECRET not in text and KEY_SECRET not in text


def test_a_property_the_client_refuses_is_a_config_mistake(
    tmp_path, monkeypatch, capsys, restore_logging
):
    """Given librdkafka refusing a property at construction, Expected: exit 2, nothing run."""
    monkeypatch.setenv("FC_TEST_PASSWORD", SECRET)
    conf = write_config(tmp_path, tmp_path / "raw")

    def refuse(cluster):
        raise ValueError('No such configuration property: "sasl.pasword"')

    assert cli.main(["--conf", str(conf), "--once"], admin_factory=refuse) == 2
    assert "client refused its properties" in capsys.readouterr().err
    assert not (tmp_path / "raw").exists()


def test_the_real_client_is_built_from_the_config_without_connecting():
    """Given the example-shaped config, Then confluent-kafka's AdminClient accepts its
    properties (librdkafka validates names and values at construction; it connects only
    on the first request); Expected: a client, no exception."""
    from fleet_rebalance.agent.admin import confluent_admin

    cluster = ClusterConfig(
        name="east", bootstrap_servers="127.0.0.1:1", client={"socket.timeout.ms": "1000"}
    )
    assert confluent_admin(cluster) is not None


UNREACHABLE = """
raw_root: {raw}
interval_s: 1
timeouts: {{request_s: 1, cycle_s: 5}}
backoff: {{initial_s: 1, max_s: 2}}
clusters:
  - name: nowhere
    bootstrap_servers: 127.0.0.1:{port}
    client:
      security.protocol: SASL_PLAINTEXT
      sasl.mechanism: PLAIN
      sasl.username: fleet-capture
      sasl.password: ${{FC_TEST_PASSWORD}}
"""


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on return: nothing listens there


def test_real_client_against_an_unreachable_cluster(tmp_path):
    """Given confluent-kafka's AdminClient pointed at a closed port, Then --once reports
    the cluster FAILED (librdkafka returns a listing with errors only) and exits 1, and
    the foreground mode retries with backoff until SIGTERM, then exits 0; the password
    never shows; Expected: as said, nothing written."""
    raw = tmp_path / "raw"
    conf = tmp_path / "capture.yaml"
    conf.write_text(UNREACHABLE.format(raw=raw, port=closed_port()))
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src"), "FC_TEST_PASSWORD": SECRET}
    command = [sys.executable, "-m", "fleet_rebalance.agent.cli", "--conf", str(conf)]
    once = subprocess.run([*command, "--once"], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert once.returncode == 1, once.stderr
    assert " nowhere FAILED in " in once.stdout and "groups not listed: _" in once.stdout
    foreground = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines = [foreground.stdout.readline() for _ in range(2)]
    foreground.send_signal(signal.SIGTERM)
    out, err = foreground.communicate(timeout=30)
    assert foreground.returncode == 0, err
    assert [line.split(" ", 3)[2] for line in lines] == ["FAILED", "FAILED"]
    assert lines[0].rstrip().endswith("retry in 1s") and lines[1].rstrip().endswith("retry in 2s")
    for text in (once.stdout, once.stderr, *lines, out, err):
        assert SECRET not in text
    assert snapshots(raw, "nowhere") == []


def test_topic_ids_are_spelled_as_kafka_prints_them():
    """Given a Uuid whose base64 holds '/' (confluent-kafka's str() is standard base64),
    Expected: Kafka's URL-safe spelling, as kafka-topics.sh prints TopicId."""
    from confluent_kafka import Uuid

    from fleet_rebalance.agent.collect import kafka_uuid

    assert str(Uuid(-1, 0x7FFFFFFFFFFFFFFF)) == "//////////9//////////w"
    assert kafka_uuid(Uuid(-1, 0x7FFFFFFFFFFFFFFF)) == "__________9__________w"
    assert kafka_uuid(None) is None


def test_without_confluent_kafka_help_works_and_a_run_is_one_line(tmp_path):
    """Given a capture host without confluent-kafka (its import refused), Then --help
    prints the usage and a run exits 2 with one line saying what to install, no
    traceback."""
    import subprocess
    import sys

    conf = tmp_path / "capture.yaml"
    conf.write_text("raw_root: /tmp/raw\nclusters:\n  - name: c\n    bootstrap_servers: h:9092\n")
    program = (
        "import sys; sys.modules['confluent_kafka'] = None\n"
        "from fleet_rebalance.agent.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    helped = subprocess.run(
        [sys.executable, "-c", program, "--help"], capture_output=True, text=True
    )
    assert helped.returncode == 0 and helped.stdout.startswith("usage: fleet-capture")
    ran = subprocess.run(
        [sys.executable, "-c", program, "--conf", str(conf), "--once"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 2
    assert ran.stderr.splitlines() == [
        "fleet-capture: error: confluent-kafka (librdkafka's AdminClient) is not installed: "
        "pip install '.[capture]'"
    ]


def test_a_capture_host_needs_none_of_the_jobs_stack():
    """`pip install '.[capture]'` pulls PyYAML, pydantic, confluent-kafka and pyarrow
    only, and every agent module imports without the job's packages (blocked here)."""
    import configparser
    import pkgutil

    import fleet_rebalance.agent as agent

    setup = configparser.ConfigParser()
    setup.read(Path(__file__).resolve().parent.parent / "setup.cfg")

    def names(value: str) -> set[str]:
        lines = [line.strip() for line in value.splitlines()]
        return {line.split(">")[0].split("=")[0].split("[")[0] for line in lines if line}

    capture = names(setup["options"]["install_requires"]) | names(
        setup["options.extras_require"]["capture"]
    )
    assert capture == {"PyYAML", "pydantic", "confluent-kafka", "pyarrow"}
    job_only = ("pyspark", "delta", "deltalake", "duckdb", "pandas", "numpy", "zstandard")
    modules = [f"fleet_rebalance.agent.{m.name}" for m in pkgutil.iter_modules(agent.__path__)]
    program = (
        "import importlib, sys\n"
        f"for name in {job_only!r}: sys.modules[name] = None\n"
        f"for module in {modules!r}: importlib.import_module(module)\n"
        "from fleet_rebalance.agent.cli import main\n"
        "sys.exit(main(['--help']))\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("usage: fleet-capture")
