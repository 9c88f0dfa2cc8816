"""fleet-capture against a real cluster (tests/kafka_lab.py, line "4": Kafka 4.4.0, the
new group coordinator, KIP-848): the agent's snapshot of a moment gives the bronze rows
Kafka's own tools give for the captures just before and just after it.

What is compared, and how:
- group_states, members, topic_partitions: equal, field for field, to both CLI captures
  around the agent's (the test first requires those two to agree, so the groups did not
  move in between; a rebalance in that window retries once);
- offsets: the same rows (group, topic, partition, owner); committed and log-end
  offsets lie between the two CLI captures' values (the producer and the consumers keep
  moving them; a capture cannot be simultaneous with another);
- brokers: each broker's rack, as kafka-configs.sh --all and the agent's cluster
  description give it, is the lab's broker.rack; partition_sizes (kafka-log-dirs.sh
  only: the agent's client has no DescribeLogDirs) holds every replica, none shrinking.
What is not compared: source_file / line_number / captured_at (each capture's own),
the extra keys only the agent writes (type, target assignment, log start offsets).
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest
from kafka_lab import CAPTURE_INTERVAL_S, STATIC_SESSION_MS, Lab, running_lab

from fleet_rebalance.agent.admin import confluent_admin
from fleet_rebalance.agent.config import AgentConfig, ClusterConfig, Timeouts
from fleet_rebalance.agent.runner import run_once
from fleet_rebalance.capture.parse import parse_capture

pytestmark = [pytest.mark.slow, pytest.mark.lab]

LINE = "4"
CLI_VIEWS = ("consumer-groups-state.txt", "consumer-groups-members.txt",
             "consumer-groups-offsets.txt", "topics.txt",
             "brokers.txt", "log-dirs.txt")  # fmt: skip
STATE_KEYS = ("state", "assignment_strategy", "coordinator_host", "coordinator_id", "member_count")
MEMBER_KEYS = ("group_instance_id", "host", "client_id", "partition_count")


def start_groups(lab: Lab) -> None:
    """A classic range group, a static member, a KIP-848 group, a librdkafka group and
    a group whose only member left (Empty, offsets committed)."""
    for i in (1, 2, 3):
        lab.java_member(f"lab-range-{i}", "lab-range", "orders,audit", "range")
    lab.java_member("lab-static-1", "lab-static", "orders", "range",
                    instance="lab-static-1", session_ms=STATIC_SESSION_MS)  # fmt: skip
    for i in (1, 2):
        lab.java_member(f"lab-uniform-{i}", "lab-uniform", "clicks,orders", "uniform",
                        protocol="consumer")  # fmt: skip
    lab.rdkafka_member("lab-rdkafka-1", "lab-rdkafka", "clicks", "cooperative-sticky")
    lab.java_member("lab-stopped-1", "lab-stopped", "audit", "range")
    lab.settle()
    lab.terminate("lab-stopped-1")
    lab.settle()


def cli_captures(lab: Lab) -> list[Path]:
    captures = lab.raw / lab.cluster / "captures"
    return sorted(p for p in captures.iterdir() if all((p / view).is_file() for view in CLI_VIEWS))


def wait_for_capture_after(lab: Lab, at: dt.datetime, timeout_s: float = 60) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        later = [p for p in cli_captures(lab) if stamp_of(p) > at]
        if later:
            time.sleep(2)  # the capturer writes its four views one after another
            return later[0]
        time.sleep(1)
    raise AssertionError(f"no CLI capture after {at} within {timeout_s} s")


def stamp_of(path: Path) -> dt.datetime:
    return dt.datetime.strptime(path.name, "%Y-%m-%dT%H%M%SZ").replace(tzinfo=dt.UTC)


def rows(root: Path, directory: Path, files: tuple[str, ...]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for name in files:
        path = directory / name
        result = parse_capture(path.relative_to(root).as_posix(), path.read_bytes())
        assert result.quarantine == [], (path, result.quarantine[:3])
        for table in result.rows.keys() | result.batches.keys():
            found.setdefault(table, []).extend(result.records(table))
    return found


def states(found: dict[str, list[dict]]) -> dict[str, tuple]:
    return {r["group_id"]: tuple(r[k] for k in STATE_KEYS) for r in found["group_states"]}


def members(found: dict[str, list[dict]]) -> dict[tuple[str, str], tuple]:
    return {
        (r["group_id"], r["consumer_id"]): (
            *(r[k] for k in MEMBER_KEYS),
            sorted((a["topic"], a["partition"]) for a in r["assignment"]),
        )
        for r in found["members"]
    }


def offsets(found: dict[str, list[dict]]) -> dict[tuple, tuple[int | None, int | None]]:
    return {
        (r["group_id"], r["topic"], r["partition"], r["consumer_id"]): (
            r["current_offset"],
            r["log_end_offset"],
        )
        for r in found["offsets"]
    }


def topics(found: dict[str, list[dict]]) -> set[tuple]:
    return {
        (r["topic"], r["topic_id"], r["partition"], r["leader"], tuple(r["replicas"]),
         tuple(r["isr"]))
        for r in found["topic_partitions"]
    }  # fmt: skip


def between(low: int | None, value: int | None, high: int | None) -> bool:
    if value is None:
        return low is None
    return (low is None or low <= value) and (high is None or value <= high)


def agent_snapshot(lab: Lab, raw: Path) -> Path:
    config = AgentConfig(
        raw_root=raw,
        clusters=(ClusterConfig(name=lab.cluster, bootstrap_servers=lab.bootstrap),),
        timeouts=Timeouts(request_s=15, cycle_s=60),
    )
    admin = confluent_admin(config.clusters[0])
    lines: list[str] = []
    assert run_once(config, {lab.cluster: admin}, lines.append) == 0, lines
    (directory,) = sorted((raw / lab.cluster / "captures").iterdir())
    return directory


def test_agent_snapshot_gives_the_cli_captures_rows(tmp_path):
    root = tmp_path / "lab"
    agent_raw = tmp_path / "agent-raw"
    with running_lab(LINE, root) as lab:
        start_groups(lab)
        for _attempt in range(2):
            shutil.rmtree(agent_raw, ignore_errors=True)
            before_dir = wait_for_capture_after(lab, dt.datetime.now(dt.UTC) - dt.timedelta(
                seconds=CAPTURE_INTERVAL_S))  # fmt: skip
            agent_dir = agent_snapshot(lab, agent_raw)
            after_dir = wait_for_capture_after(lab, stamp_of(agent_dir))
            before = rows(lab.raw, before_dir, CLI_VIEWS)
            after = rows(lab.raw, after_dir, CLI_VIEWS)
            if members(before) == members(after) and states(before) == states(after):
                break
        else:
            pytest.fail("the lab's groups kept rebalancing around the agent's capture")
        agent = rows(agent_raw, agent_dir, ("groups.jsonl", "topics.txt", "brokers.txt"))

    assert stamp_of(before_dir) <= stamp_of(agent_dir) <= stamp_of(after_dir)
    assert states(agent) == states(before)
    assert states(agent)["lab-stopped"][0] == "Empty"
    assert states(agent)["lab-uniform"][1] == "uniform"
    assert members(agent) == members(before)
    assert Counter(g for g, _ in members(agent)) == {
        "lab-range": 3, "lab-static": 1, "lab-uniform": 2, "lab-rdkafka": 1}  # fmt: skip
    stopped = {k: v for k, v in offsets(agent).items() if k[0] == "lab-stopped"}
    assert sorted(k[1:] for k in stopped) == [("audit", p, None) for p in range(3)]
    assert topics(agent) == topics(before)
    agent_offsets, low, high = offsets(agent), offsets(before), offsets(after)
    assert agent_offsets.keys() == low.keys() == high.keys()
    outside = {
        key: (low[key], value, high[key])
        for key, value in agent_offsets.items()
        if not (between(low[key][0], value[0], high[key][0])
                and between(low[key][1], value[1], high[key][1]))
    }  # fmt: skip
    assert outside == {}
    # Racks: kafka-configs.sh --all's broker.rack lines, and the agent's cluster description.
    racks = {1: "rack-1", 2: "rack-2", 3: "rack-3"}
    assert {r["broker"]: r["rack"] for r in before["brokers"]} == racks
    assert {r["broker"]: r["rack"] for r in agent["brokers"]} == racks
    # Sizes: kafka-log-dirs.sh's replica of every partition on every broker holding it,
    # each log no smaller a capture later (no retention runs in the lab).
    replicas = {(t, p, b) for t, _, p, _, held, _ in topics(before) for b in held}
    sizes = {
        (r["topic"], r["partition"], r["broker"]): r["size_bytes"] for r in after["partition_sizes"]
    }
    assert replicas <= sizes.keys()
    earlier = {
        (r["topic"], r["partition"], r["broker"]): r["size_bytes"]
        for r in before["partition_sizes"]
    }
    assert all(sizes[k] >= earlier[k] for k in replicas)
    assert sum(sizes[k] for k in replicas if k[0] == "orders") > 0
