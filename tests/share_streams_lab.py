"""Share and streams groups on a live Kafka 4.4 lab, captured with Kafka's own tools: the
fixtures tests/data/share_streams/*_live-4.4.0.txt and their ground truth
(live-4.4.0.truth.json) that tests/test_share_streams_live.py checks without a JVM.

The brokers are kafka_lab.Lab's (three KRaft nodes on 127.0.0.1, the "4" line: 4.4.0),
without its consumer scenario and capturer. On them run:

- a share group (KIP-932) of two KafkaShareConsumer members (lab_client/share_streams/
  LabShareConsumer) on one topic, and a share group whose only member has left (Empty);
- a streams group (KIP-1071, `group.protocol=streams`) of two Kafka Streams instances
  (LabStreamsApp: re-key, then count: two subtopologies, the second stateful) with one
  standby replica per task, so STANDBY tasks show, and a streams group whose only
  instance has stopped (Empty). On the streams protocol the client's
  num.standby.replicas is not what counts: the broker assigns the tasks, and the
  standbys are the group config `streams.num.standby.replicas` (default
  `group.streams.num.standby.replicas`, 0), set here with kafka-configs.sh
  (ConfigCommand) before the group starts;
- one classic and one consumer-protocol consumer group (lab_client/LabConsumer), so the
  group lists show every type;
- a producer on every topic.

Once the tools show the groups settled (Stable with their members, the standby tasks
assigned), every view the parser reads is captured by the tools' main classes, one JVM
per view, stdout and stderr together as `2>&1` (VIEWS). Share and streams groups are on
by default on a fresh 4.4 cluster (`share.version` and `streams.version` take their
latest production levels at `kafka-storage format`): the lab checks it with
`kafka-features.sh describe` and records it in the truth file.

Regenerate (5-6 minutes on a shared 2-core machine: brokers 30-60 s, the groups settled
after 2-3 more, one JVM per view 40-175 s; needs java, javac and mvn):

    PYTHONPATH=src:tests .venv/bin/python tests/share_streams_lab.py --record

Without --record it captures into a temporary directory and prints where.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafka_lab import CLIENT_SOURCES, JVM_OPTS, Lab, _kill

FIXTURES = Path(__file__).resolve().parent / "data" / "share_streams"
MARKER = "live-4.4.0"
TRUTH = FIXTURES / f"{MARKER}.truth.json"
SOURCES = CLIENT_SOURCES / "share_streams"
KAFKA = "4.4.0"

SHARE_GROUP, SHARE_IDLE, SHARE_TOPIC = "lab-share-workers", "lab-share-idle", "share-jobs"
STREAMS_GROUP, STREAMS_IDLE = "lab-streams-counts", "lab-streams-idle"
STREAMS_TOPIC = "streams-input"
CLASSIC_GROUP, CONSUMER_GROUP, CONSUMER_TOPIC = "lab-classic", "lab-consumer", "orders"
PARTITIONS = 4
STANDBYS = 1
TOPICS = {SHARE_TOPIC: PARTITIONS, STREAMS_TOPIC: PARTITIONS, CONSUMER_TOPIC: 3}

SHARE_TOOL = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
STREAMS_TOOL = "org.apache.kafka.tools.streams.StreamsGroupCommand"
GROUPS_TOOL = "org.apache.kafka.tools.GroupsCommand"
CONSUMER_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
DESCRIBE = ("--describe", "--all-groups")
# kafka-features.sh describe: `Feature: share.version  SupportedMinVersion: 0 ...
# FinalizedVersionLevel: 2 ...`, the columns padded with spaces.
FEATURE = re.compile(r"^Feature: (\S+)\s.*?FinalizedVersionLevel: (\S+)", re.M)
# fixture name (without the marker) -> the tool and its arguments after --bootstrap-server.
VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "share_offsets": (SHARE_TOOL, DESCRIBE),
    "share_offsets_verbose": (SHARE_TOOL, (*DESCRIBE, "--verbose")),
    "share_members": (SHARE_TOOL, (*DESCRIBE, "--members")),
    "share_members_verbose": (SHARE_TOOL, (*DESCRIBE, "--members", "--verbose")),
    "share_state": (SHARE_TOOL, (*DESCRIBE, "--state")),
    "share_state_verbose": (SHARE_TOOL, (*DESCRIBE, "--state", "--verbose")),
    "share_list_state": (SHARE_TOOL, ("--list", "--state")),
    "streams_offsets": (STREAMS_TOOL, DESCRIBE),
    "streams_offsets_verbose": (STREAMS_TOOL, (*DESCRIBE, "--verbose")),
    "streams_members": (STREAMS_TOOL, (*DESCRIBE, "--members")),
    "streams_members_verbose": (STREAMS_TOOL, (*DESCRIBE, "--members", "--verbose")),
    "streams_state": (STREAMS_TOOL, (*DESCRIBE, "--state")),
    "streams_state_verbose": (STREAMS_TOOL, (*DESCRIBE, "--state", "--verbose")),
    "streams_list_state": (STREAMS_TOOL, ("--list", "--state")),
    "groups_list": (GROUPS_TOOL, ("--list",)),
    "consumer_groups_list_type": (CONSUMER_TOOL, ("--list", "--type")),
    "consumer_groups_list_type_state": (CONSUMER_TOOL, ("--list", "--type", "--state")),
}


@dataclass
class ShareStreamsLab(Lab):
    """kafka_lab.Lab's brokers with share and streams group clients instead of its
    scenario; `clients` are every process it started besides the brokers."""

    clients: dict[str, subprocess.Popen] = field(default_factory=dict)

    def start(self) -> None:
        self.start_brokers()
        self.produce_to(TOPICS)
        said = self.tool("org.apache.kafka.tools.ConfigCommand", "--alter", "--entity-type",
                         "groups", "--entity-name", STREAMS_GROUP, "--add-config",
                         f"streams.num.standby.replicas={STANDBYS}")  # fmt: skip
        if "Completed updating config" not in said:
            raise RuntimeError(f"share/streams lab: the standby group config failed: {said[-300:]}")

    def stop(self) -> None:
        for process in [*self.clients.values(), *(m.process for m in self.members.values())]:
            if process is not None:
                _kill(process, signal.SIGTERM)
        for process in [*self.clients.values(), *self.helpers, *self.nodes]:
            _kill(process, signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                _kill(process, signal.SIGKILL)
        for member in self.members.values():
            if member.process is not None:
                _kill(member.process, signal.SIGKILL)

    def _compile_clients(self) -> None:
        self.classes.mkdir(parents=True, exist_ok=True)
        sources = sorted(str(p) for p in [*CLIENT_SOURCES.glob("*.java"), *SOURCES.glob("*.java")])
        subprocess.run(
            ["javac", "-nowarn", "-d", str(self.classes), "-cp", self._classpath(), *sources],
            check=True,
            capture_output=True,
        )

    # -- clients --------------------------------------------------------------------------
    def share_member(self, name: str, group: str) -> None:
        self._client(name, ["-Xmx64m", "LabShareConsumer", f"group={group}",
                            f"topics={SHARE_TOPIC}", f"client={name}"])  # fmt: skip

    def streams_member(self, name: str, group: str) -> None:
        state = self.root / "streams-state" / name
        state.mkdir(parents=True, exist_ok=True)
        args = [f"group={group}", f"topic={STREAMS_TOPIC}", f"client={name}", f"state={state}"]
        self._client(name, ["-Xmx128m", "LabStreamsApp", *args])

    def leave(self, name: str) -> None:
        """SIGTERM: the client closes and leaves its group."""
        process = self.clients.pop(name)
        _kill(process, signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            _kill(process, signal.SIGKILL)

    def output(self, name: str) -> str:
        return self._read(self.root / "members" / f"{name}.txt")

    def _client(self, name: str, args: list[str]) -> None:
        out = self.root / "members" / f"{name}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        self.clients[name] = self._spawn([*args, f"bootstrap={self.bootstrap}"], out)

    # -- the tools ------------------------------------------------------------------------
    def tool(self, main: str, *args: str) -> str:
        """One run of a tool's main class, stdout and stderr as `2>&1` leaves them."""
        done = subprocess.run(
            ["java", *JVM_OPTS, "-Xmx128m", "-cp", self._classpath(), main,
             "--bootstrap-server", self.bootstrap, *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, check=False,
        )  # fmt: skip
        return done.stdout.decode("utf-8", errors="replace")

    def features(self) -> str:
        return self.tool("org.apache.kafka.tools.FeatureCommand", "describe")

    def wait_until(self, what: str, check, timeout_s: float = 240) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(2)
        raise RuntimeError(f"share/streams lab: {what} not seen in {timeout_s} s ({self.root})")


def settled(lab: ShareStreamsLab) -> bool:
    """The share group Stable with two members, the streams group Stable with both
    instances holding tasks and a standby among them."""
    share = lab.tool(SHARE_TOOL, "--describe", "--group", SHARE_GROUP, "--state")
    streams = lab.tool(STREAMS_TOOL, "--describe", "--group", STREAMS_GROUP, "--members")
    state = lab.tool(STREAMS_TOOL, "--describe", "--group", STREAMS_GROUP, "--state")
    share_ok = any(line.split()[-2:] == ["Stable", "2"] for line in share.splitlines() if line)
    rows = [line for line in streams.splitlines() if line.startswith(STREAMS_GROUP)]
    streams_ok = len(rows) == 2 and all("ACTIVE:" in r for r in rows)
    standby = any("STANDBY:" in r for r in rows) and "WARMUP:" not in streams
    stable = any(line.split()[-2:] == ["Stable", "2"] for line in state.splitlines() if line)
    return share_ok and streams_ok and standby and stable


def run(root: Path) -> tuple[dict[str, str], dict]:
    """Start the lab, run the groups, capture every view; (fixture name -> text, truth)."""
    lab = ShareStreamsLab("4", root, cluster="lab-share-streams")
    timings: dict[str, float] = {}
    began = time.monotonic()
    try:
        lab.start()
        timings["brokers_s"] = round(time.monotonic() - began, 1)
        features = lab.features()
        lab.share_member(f"{SHARE_IDLE}-1", SHARE_IDLE)
        lab.streams_member(f"{STREAMS_IDLE}-1", STREAMS_IDLE)
        for i in (1, 2):
            lab.share_member(f"{SHARE_GROUP}-{i}", SHARE_GROUP)
            lab.streams_member(f"{STREAMS_GROUP}-{i}", STREAMS_GROUP)
        lab.java_member(f"{CLASSIC_GROUP}-1", CLASSIC_GROUP, CONSUMER_TOPIC, "range")
        lab.java_member(f"{CONSUMER_GROUP}-1", CONSUMER_GROUP, CONSUMER_TOPIC, "uniform",
                        protocol="consumer")  # fmt: skip
        lab.wait_until(
            "the idle groups' members at work",
            lambda: (
                "records=" in lab.output(f"{SHARE_IDLE}-1")
                and "state=RUNNING" in lab.output(f"{STREAMS_IDLE}-1")
            ),
        )
        lab.leave(f"{SHARE_IDLE}-1")
        lab.leave(f"{STREAMS_IDLE}-1")
        lab.wait_until("the groups settled", lambda: settled(lab))
        timings["settled_s"] = round(time.monotonic() - began, 1)
        captures = {}
        for name, (main, args) in VIEWS.items():
            captures[f"{name}_{MARKER}.txt"] = lab.tool(main, *args)
        timings["captured_s"] = round(time.monotonic() - began, 1)
    finally:
        lab.stop()
    timings["total_s"] = round(time.monotonic() - began, 1)
    truth = {
        "kafka": KAFKA,
        "features": sorted(f"{m[1]}={m[2]}" for m in FEATURE.finditer(features)),
        "streams_group_config": f"streams.num.standby.replicas={STANDBYS}",
        "share_groups": {
            SHARE_GROUP: {
                "state": "Stable",
                "members": 2,
                "topic": SHARE_TOPIC,
                "partitions": PARTITIONS,
                "client_ids": [f"{SHARE_GROUP}-1", f"{SHARE_GROUP}-2"],
            },
            SHARE_IDLE: {
                "state": "Empty",
                "members": 0,
                "topic": SHARE_TOPIC,
                "partitions": PARTITIONS,
                "client_ids": [],
            },
        },
        "streams_groups": {
            STREAMS_GROUP: {
                "state": "Stable",
                "members": 2,
                "topic": STREAMS_TOPIC,
                "subtopologies": 2,
                "partitions": PARTITIONS,
                "task_kinds": ["active", "standby"],
                "client_ids": [f"{STREAMS_GROUP}-{i}-StreamThread-1-consumer" for i in (1, 2)],
            },
            STREAMS_IDLE: {
                "state": "Empty",
                "members": 0,
                "topic": STREAMS_TOPIC,
                "subtopologies": 2,
                "partitions": PARTITIONS,
                "task_kinds": [],
                "client_ids": [],
            },
        },
        "consumer_groups": {CLASSIC_GROUP: "classic", CONSUMER_GROUP: "consumer"},
        "seconds": timings,
    }
    return captures, truth


def record(captures: dict[str, str], truth: dict, into: Path) -> None:
    """Replace the live fixtures in `into` with these."""
    for old in into.glob(f"*_{MARKER}.txt"):
        old.unlink()
    for name, text in captures.items():
        (into / name).write_text(text, encoding="utf-8")
    (into / f"{MARKER}.truth.json").write_text(
        json.dumps(truth, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help=f"replace {FIXTURES}/*{MARKER}*")
    parser.add_argument("--root", type=Path, help="the lab's directory (default: a temp dir)")
    args = parser.parse_args(argv)
    root = args.root or Path(tempfile.mkdtemp(prefix="share-streams-lab-"))
    shutil.rmtree(root / "lab", ignore_errors=True)
    captures, truth = run(root / "lab")
    record(captures, truth, FIXTURES if args.record else root)
    print(f"captured {len(captures)} views in {truth['seconds']['total_s']} s "
          f"into {FIXTURES if args.record else root}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
