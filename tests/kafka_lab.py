"""A real Kafka cluster on 127.0.0.1, real clients rebalancing in it, and Kafka's own tools
capturing it: the lab the pipeline is tested against (tests/test_kafka_lab.py) and that
benchmarks/kafka_lab.py runs and records.

One lab is one broker line: "3.9" (3.9.2, the old GroupCoordinator) or "4" (4.4.0, the
new group coordinator and KIP-848), its jars from jvm/pom.xml (fetched with mvn on first
use). It starts three KRaft nodes (broker and controller each, `broker.rack` set) on free
ports in a temporary directory, with Kafka's log layout (`[%d] %p %m (%c)%n`, server.log
rolled hourly into server.log.yyyy-MM-dd-HH, the group coordinator at INFO), and stops
them in a `finally`. A producer keeps every topic moving; the scenario (SCENARIO) starts,
kills, restarts, stalls and freezes consumers on the Java client (tests/lab_client/LabConsumer,
compiled against the line's kafka-clients) and on librdkafka (confluent-kafka), adds
partitions, and records what it did and when (truth.jsonl). Every CAPTURE_INTERVAL_S the
capturer (LabCapture: the tools' main classes in one JVM) writes the consumer-groups
offsets, members (--verbose) and state views and the topics view in raw_root's layout:

    <root>/raw/<cluster>/captures/<UTC yyyy-MM-ddTHHmmssZ>/consumer-groups-*.txt, topics.txt
    <root>/raw/<cluster>/logs/broker-<id>/server.log[.yyyy-MM-dd-HH]
    <root>/truth.jsonl (what the scenario did, when; each group's generation at the end)

Nothing listens anywhere but 127.0.0.1.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
CLIENT_SOURCES = Path(__file__).resolve().parent / "lab_client"
LINES = {"3.9": "kafka-3.9", "4": "kafka-4"}
CAPTURE_INTERVAL_S = 10
SESSION_MS = 10_000  # the classic members' session.timeout.ms (brokers allow 6 s and up)
POLL_MS = 10_000  # the stalling member's max.poll.interval.ms
STATIC_SESSION_MS = 30_000
FREEZE_S = 25  # a SIGSTOPped member's freeze: past SESSION_MS, so the coordinator expires it
STATIC_DOWN_S = 40  # a static member down past STATIC_SESSION_MS
TOPICS = {"orders": 6, "audit": 3, "clicks": 4}
RATE = 20  # records a second into each topic
# A quiet topic: a record a second, so its groups' lag is a handful of records at most.
QUIET_TOPIC = {"quiet": 2}
QUIET_RATE = 1
JVM_OPTS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Duser.timezone=UTC"]


# What the lab's operator knows of its consumers, for the nightly's conf (metrics.*): the
# session timeout its members run with (its static ones' is longer: for them it is a
# lower bound), and its librdkafka clients' client.ids.
LAB_CLIENT_LIBRARIES = {"lab-rdkafka-*": "librdkafka"}
LAB_METRICS = {"session_timeout_ms": SESSION_MS, "client_libraries": LAB_CLIENT_LIBRARIES}
# Every lab consumer runs on this host (servers and clients on 127.0.0.1 only), so the
# lab's zone map puts them all in rack-1, node 1's broker.rack; nodes 2 and 3 are the
# other zones. cross_zone_traffic then has zones for every read (test_kafka_lab).
LAB_CONSUMER_ZONE = "rack-1"
LAB_ZONES = {"consumer_cidrs": {"127.0.0.1/32": LAB_CONSUMER_ZONE}}


def lab_conf(root: Path) -> Path:
    """conf/local.yaml with LAB_METRICS and LAB_ZONES, written to <root>/lab.yaml for
    spark-submit."""
    import yaml

    conf = yaml.safe_load((PROJECT / "conf" / "local.yaml").read_text())
    conf["metrics"].update(LAB_METRICS)
    conf["zones"] = LAB_ZONES
    path = root / "lab.yaml"
    path.write_text(yaml.safe_dump(conf, sort_keys=False))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_jars(line: str) -> list[Path]:
    from fleet_rebalance.jvm import classpath

    return classpath(PROJECT, LINES[line])


@dataclass
class Member:
    """One consumer of the lab: a pod, restarted under the same name."""

    name: str
    group: str
    client: str  # java | librdkafka
    topics: str
    assignor: str
    options: dict
    process: subprocess.Popen | None = None


# Where each client prints the generation it was given (LabConsumer, librdkafka's cgrp debug).
GENERATION = {
    "java": re.compile(r"^generation=(\d+) ", re.M),
    "librdkafka": re.compile(r"JoinGroup response: GenerationId (\d+)"),
}


@dataclass
class Lab:
    line: str
    root: Path
    cluster: str = ""
    nodes: list[subprocess.Popen] = field(default_factory=list)
    members: dict[str, Member] = field(default_factory=dict)
    gone: list[Member] = field(default_factory=list)
    helpers: list[subprocess.Popen] = field(default_factory=list)
    thaws: list[threading.Timer] = field(default_factory=list)
    started: float = 0.0
    stopped: bool = False

    def __post_init__(self) -> None:
        self.cluster = self.cluster or f"lab-{self.line}"
        self.raw = self.root / "raw"
        self.jars = lab_jars(self.line)
        self.ports = [(free_port(), free_port()) for _ in range(3)]
        self.bootstrap = ",".join(f"127.0.0.1:{b}" for b, _ in self.ports)
        self.truth = self.root / "truth.jsonl"
        self.generations = self.root / "admin-generations.txt"
        self.classes = self.root / "classes"
        self._lock = threading.Lock()

    # -- the cluster ------------------------------------------------------------------------
    def start_brokers(self) -> None:
        """Compile the clients, format and start the three KRaft nodes, wait for them."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._compile_clients()
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        voters = ",".join(f"{i + 1}@127.0.0.1:{c}" for i, (_, c) in enumerate(self.ports))
        for i, (broker, controller) in enumerate(self.ports):
            node = i + 1
            props = self._write_node_config(node, broker, controller, voters)
            self._java(
                ["kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)],
                check=True,
            )
        for i in range(3):
            node = i + 1
            logs = self.log_dir(node)
            logs.mkdir(parents=True, exist_ok=True)
            self.nodes.append(
                self._spawn(
                    ["-Xmx384m", f"-Dkafka.logs.dir={logs}", *self._log_config(),
                     "kafka.Kafka", str(self.root / f"node-{node}" / "server.properties")],
                    self.root / f"node-{node}" / "stdout.txt",
                )
            )  # fmt: skip
        self._wait_for_brokers()

    def start(self) -> None:
        self.start_brokers()
        self.produce_to(TOPICS)
        self.helpers.append(
            self._spawn(
                ["-Xmx256m", "LabCapture", f"bootstrap={self.bootstrap}", f"out={self.raw}",
                 f"cluster={self.cluster}", f"interval_ms={CAPTURE_INTERVAL_S * 1000}",
                 f"stop={self.root / 'stop-capture'}", f"generations={self.generations}"],
                self.root / "capture.txt",
            )
        )  # fmt: skip

    def produce_to(self, topics: dict[str, int], rate: int = RATE) -> None:
        """Create `topics` (name -> partitions, replication 3) and keep a producer on
        them, `rate` records a second into each."""
        for topic, partitions in topics.items():
            self.topics("--create", "--topic", topic, "--partitions", str(partitions),
                        "--replication-factor", "3")  # fmt: skip
        self.started = self.started or time.monotonic()
        self.helpers.insert(
            0,
            self._spawn(
                ["-Xmx96m", "LabProducer", f"bootstrap={self.bootstrap}",
                 f"topics={','.join(topics)}", f"rate={rate}"],
                self.root / f"producer-{'-'.join(topics)}.txt",
            ),
        )  # fmt: skip

    def stop(self) -> None:
        """Stop the capturer (it writes the generations the admin API reports), record each
        group's generation as its clients last saw it, then stop everything else. A
        stopped lab starts no member again (LabsInBackground.close stops a running one)."""
        self.stopped = True
        (self.root / "stop-capture").touch()
        for timer in self.thaws:
            timer.cancel()
        capture = self.helpers[-1] if self.helpers else None
        if capture is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                capture.wait(60)
            admin = dict(
                line.split() for line in self._read(self.generations).splitlines() if line.strip()
            )
            for group, generation in sorted(self.client_generations().items()):
                epoch = admin.get(group, "-")
                self.record("generation", group, generation=generation,
                            group_epoch=None if epoch == "-" else int(epoch))  # fmt: skip
        for member in self.members.values():
            if member.process is not None:
                _kill(member.process, signal.SIGKILL)
        for process in [*self.helpers, *self.nodes]:
            _kill(process, signal.SIGTERM)
        for process in [*self.helpers, *self.nodes]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(30)
            _kill(process, signal.SIGKILL)

    def log_dir(self, node: int) -> Path:
        return self.raw / self.cluster / "logs" / f"broker-{node}"

    def topics(self, *args: str) -> None:
        """kafka-topics.sh, as the line's TopicCommand."""
        self._java(
            ["-Xmx128m", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
             self.bootstrap, *args],
            check=True,
        )  # fmt: skip

    # -- members ----------------------------------------------------------------------------
    def java_member(self, name: str, group: str, topics: str, assignor: str, **options) -> None:
        """Start a Java consumer; its client.id is `name` (a pod keeps its name). Options:
        protocol (classic | consumer), instance (group.instance.id), session_ms, poll_ms."""
        self._start(Member(name, group, "java", topics, assignor, dict(options)))
        self.record("start", group, name, client="java", topics=topics, assignor=assignor,
                    **options)  # fmt: skip

    def rdkafka_member(self, name: str, group: str, topics: str, assignor: str) -> None:
        self._start(Member(name, group, "librdkafka", topics, assignor, {}))
        self.record("start", group, name, client="librdkafka", topics=topics, assignor=assignor)

    def restart(self, name: str, down_s: float = 1.0, **changes) -> None:
        """A deploy's restart of one pod: a clean shutdown, then the same pod (client.id,
        instance id) up again `down_s` later, with `changes` to its options (a protocol).
        A static member sends no LeaveGroup: down past its session timeout, it expires."""
        member = self.members[name]
        self.record("restart", member.group, name, down_s=down_s, **changes)
        self._stop(member, signal.SIGTERM)
        time.sleep(down_s)
        member.assignor = changes.pop("assignor", member.assignor)
        member.options.update(changes)
        self._start(member)

    def terminate(self, *names: str) -> None:
        """A clean shutdown of each (all signalled before any is waited for, so members
        named together leave at once): each sends its LeaveGroup (a dynamic one)."""
        members = [self.members.pop(name) for name in names]
        for member in members:
            self.record("terminate", member.group, member.name)
            assert member.process is not None
            _kill(member.process, signal.SIGTERM)
        for member in members:
            self._stop(member, signal.SIGTERM)
            self.gone.append(member)

    def kill(self, name: str) -> None:
        """kill -9: no LeaveGroup; the coordinator expires the member's session."""
        member = self.members.pop(name)
        self.record("kill", member.group, name)
        self._stop(member, signal.SIGKILL)
        self.gone.append(member)

    def freeze(self, name: str, seconds: float) -> None:
        """SIGSTOP the member (no heartbeat, no poll: a frozen VM or a stop-the-world
        pause), SIGCONT it `seconds` later; returns at once."""
        member = self.members[name]
        self.record("freeze", member.group, name, seconds=seconds)
        assert member.process is not None
        _kill(member.process, signal.SIGSTOP)

        def thaw() -> None:
            self.record("thaw", member.group, name)
            if member.process is not None:
                _kill(member.process, signal.SIGCONT)

        timer = threading.Timer(seconds, thaw)
        timer.daemon = True
        self.thaws.append(timer)
        timer.start()

    def stall(self, name: str) -> None:
        """The member stops between two polls past max.poll.interval.ms, then polls again."""
        member = self.members[name]
        self.record("stall", member.group, name)
        (self.root / "stall" / name).touch()

    def add_partitions(self, topic: str, count: int) -> None:
        self.record("add_partitions", None, topic=topic, partitions=count)
        self.topics("--alter", "--topic", topic, "--partitions", str(count))

    def record(self, action: str, group: str | None, member: str | None = None, **facts) -> None:
        row = {
            "at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "action": action,
            "group": group,
            "member": member,
            **{k: v for k, v in facts.items() if v is not None},
        }
        with self._lock, self.truth.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, sort_keys=True) + "\n")

    def settle(self, timeout_s: float = 120, grown: tuple[str, int] | None = None) -> None:
        """Wait until a capture stamped from now on shows every group the lab started
        Stable with the members it runs (Empty when it runs none) in its state view, and
        none of them rebalancing in its members view, taken seconds before: under load a
        KIP-848 group's members view can show a member still waiting for its partitions
        while the state view already says Stable, and the replay starts a group's
        history at a capture whose views agree.
        `grown` (topic, partitions): also wait until the offsets view shows each running
        group that reads the topic owning every partition. A classic group is Stable
        until its leader's metadata refresh sees the new partitions; under load that can
        take longer than the lab's pause, and the next phase may stop the leader first."""
        since = dt.datetime.now(dt.UTC).replace(microsecond=0)
        running = Counter(m.group for m in self.members.values())
        expected = {m.group: running.get(m.group, 0) for m in [*self.members.values(), *self.gone]}
        readers = (
            {m.group for m in self.members.values() if grown[0] in m.topics.split(",")}
            if grown
            else set()
        )
        deadline = time.monotonic() + timeout_s
        shown: dict[str, tuple[str, int]] = {}
        while time.monotonic() < deadline:
            captures = self.raw / self.cluster / "captures"
            for stamp in sorted(p.name for p in captures.iterdir()) if captures.is_dir() else []:
                at = dt.datetime.strptime(stamp, "%Y-%m-%dT%H%M%SZ").replace(tzinfo=dt.UTC)
                state = captures / stamp / "consumer-groups-state.txt"
                members = captures / stamp / "consumer-groups-members.txt"
                if at < since or not state.is_file() or not members.is_file():
                    continue
                shown = group_states(state.read_text(errors="replace"))
                moving = set(REBALANCING.findall(members.read_text(errors="replace")))
                offsets = captures / stamp / "consumer-groups-offsets.txt"
                owned = owned_partitions(self._read(offsets), grown[0]) if grown else {}
                if (
                    not moving & set(expected)
                    and all(
                        shown.get(g) == (("Stable", n) if n else ("Empty", 0))
                        for g, n in expected.items()
                    )
                    and (
                        grown is None or all(owned.get(g) == set(range(grown[1])) for g in readers)
                    )
                ):
                    self.record("settled", None, capture=stamp)
                    return
            time.sleep(1)
        raise RuntimeError(f"the lab's groups did not settle in {timeout_s} s: {expected}, {shown}")

    def client_generations(self) -> dict[str, int]:
        """Each group's last generation as its members' clients were given it."""
        found: dict[str, int] = {}
        for member in [*self.members.values(), *self.gone]:
            text = self._read(self._output(member))
            pattern = GENERATION[member.client]
            for value in pattern.findall(text):
                found[member.group] = max(found.get(member.group, 0), int(value))
        return found

    @staticmethod
    def _read(path: Path) -> str:
        return path.read_text(errors="replace") if path.is_file() else ""

    def _output(self, member: Member) -> Path:
        return self.root / "members" / f"{member.name}.txt"

    def _start(self, member: Member) -> None:
        if self.stopped:
            raise RuntimeError(f"the lab is stopped: {member.name} not started")
        out = self._output(member)
        out.parent.mkdir(exist_ok=True)
        if member.client == "librdkafka":
            args = [sys.executable, str(CLIENT_SOURCES / "rdkafka_consumer.py")]
        else:
            args = ["java", *JVM_OPTS, "-Xmx64m", "-cp", self._classpath(), "LabConsumer",
                    f"stall={self.root / 'stall' / member.name}"]  # fmt: skip
            (self.root / "stall").mkdir(exist_ok=True)
        args += [f"bootstrap={self.bootstrap}", f"group={member.group}", f"topics={member.topics}",
                 f"client={member.name}", f"assignor={member.assignor}"]  # fmt: skip
        args += [f"{k}={v}" for k, v in member.options.items() if v is not None]
        with out.open("a") as sink:
            member.process = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
        self.members[member.name] = member

    def _stop(self, member: Member, sig: int) -> None:
        assert member.process is not None
        _kill(member.process, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            member.process.wait(30)
        _kill(member.process, signal.SIGKILL)

    # -- plumbing -----------------------------------------------------------------------------
    def _classpath(self) -> str:
        return os.pathsep.join([str(self.classes), *map(str, self.jars)])

    def _compile_clients(self) -> None:
        self.classes.mkdir(parents=True, exist_ok=True)
        sources = sorted(str(p) for p in CLIENT_SOURCES.glob("*.java"))
        subprocess.run(
            ["javac", "-nowarn", "-d", str(self.classes), "-cp", self._classpath(), *sources],
            check=True,
            capture_output=True,
        )

    def _java(self, args: list[str], check: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["java", *JVM_OPTS, "-cp", self._classpath(), *args],
            check=check,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def _spawn(self, args: list[str], out: Path) -> subprocess.Popen:
        out.parent.mkdir(parents=True, exist_ok=True)
        return subprocess.Popen(
            ["java", *JVM_OPTS, "-cp", self._classpath(), *args],
            stdout=out.open("w"),
            stderr=subprocess.STDOUT,
        )

    def _write_node_config(self, node: int, broker: int, controller: int, voters: str) -> Path:
        directory = self.root / f"node-{node}"
        directory.mkdir(parents=True, exist_ok=True)
        props = directory / "server.properties"
        props.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    f"node.id={node}",
                    f"controller.quorum.voters={voters}",
                    f"listeners=PLAINTEXT://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{broker}",
                    "controller.listener.names=CONTROLLER",
                    "inter.broker.listener.name=PLAINTEXT",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={directory / 'data'}",
                    f"broker.rack=rack-{node}",
                    "offsets.topic.replication.factor=3",
                    "transaction.state.log.replication.factor=3",
                    "transaction.state.log.min.isr=2",
                    "auto.create.topics.enable=false",
                    "num.network.threads=2",
                    "num.io.threads=2",
                    "background.threads=2",
                ]
            )
            + "\n"
        )
        return props

    def _log_config(self) -> list[str]:
        """Kafka's own layout and hourly server.log files, the other loggers' lines in
        their own files as Kafka's default configuration routes them."""
        if self.line == "3.9":
            path = self.root / "log4j.properties"
            path.write_text(LOG4J_39)
            return [f"-Dlog4j.configuration=file:{path}"]
        path = self.root / "log4j2.properties"
        path.write_text(LOG4J2_4)
        return [f"-Dlog4j2.configurationFile={path}"]

    def _wait_for_brokers(self, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        pending = set(range(1, 4))
        while pending and time.monotonic() < deadline:
            for node in list(pending):
                log = self.log_dir(node) / "server.log"
                if log.is_file() and "Kafka Server started" in log.read_text(errors="replace"):
                    pending.discard(node)
            for process in self.nodes:
                if process.poll() is not None:
                    raise RuntimeError(f"a lab broker exited: see {self.root}/node-*/stdout.txt")
            time.sleep(0.5)
        if pending:
            raise RuntimeError(f"lab brokers {sorted(pending)} did not start in {timeout_s} s")


# Kafka's tools' warning for a group whose members are not settled (any view).
REBALANCING = re.compile(r"Consumer group '([^']+)' is rebalancing\.")


def group_states(text: str) -> dict[str, tuple[str, int]]:
    """group -> (state, #members) from a `--describe --state` view."""
    found = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[-1].isdigit() and fields[0] != "GROUP":
            found[fields[0]] = (fields[-2], int(fields[-1]))
    return found


def owned_partitions(text: str, topic: str) -> dict[str, set[int]]:
    """group -> the topic's partitions a member owns, from a `--describe --offsets` view
    (a row whose CONSUMER-ID is "-" has a committed offset and no owner)."""
    found: dict[str, set[int]] = defaultdict(set)
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 7 and fields[1] == topic and fields[2].isdigit() and fields[6] != "-":
            found[fields[0]].add(int(fields[2]))
    return found


def _kill(process: subprocess.Popen, sig: int) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)


LOG4J_39 = """\
log4j.rootLogger=INFO, kafkaAppender
log4j.appender.kafkaAppender=org.apache.log4j.DailyRollingFileAppender
log4j.appender.kafkaAppender.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.kafkaAppender.File=${kafka.logs.dir}/server.log
log4j.appender.kafkaAppender.layout=org.apache.log4j.PatternLayout
log4j.appender.kafkaAppender.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.other=org.apache.log4j.DailyRollingFileAppender
log4j.appender.other.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.other.File=${kafka.logs.dir}/controller.log
log4j.appender.other.layout=org.apache.log4j.PatternLayout
log4j.appender.other.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.org.apache.kafka.controller=INFO, other
log4j.additivity.org.apache.kafka.controller=false
log4j.logger.state.change.logger=INFO, other
log4j.additivity.state.change.logger=false
log4j.logger.kafka.request.logger=WARN, other
log4j.additivity.kafka.request.logger=false
"""

LOG4J2_4 = """\
status = warn
appender.kafka.type = RollingFile
appender.kafka.name = KafkaAppender
appender.kafka.fileName = ${sys:kafka.logs.dir}/server.log
appender.kafka.filePattern = ${sys:kafka.logs.dir}/server.log.%d{yyyy-MM-dd-HH}
appender.kafka.layout.type = PatternLayout
appender.kafka.layout.pattern = [%d] %p %m (%c)%n
appender.kafka.policies.type = Policies
appender.kafka.policies.time.type = TimeBasedTriggeringPolicy
appender.kafka.policies.time.interval = 1
appender.kafka.policies.time.modulate = true
appender.other.type = RollingFile
appender.other.name = OtherAppender
appender.other.fileName = ${sys:kafka.logs.dir}/controller.log
appender.other.filePattern = ${sys:kafka.logs.dir}/controller.log.%d{yyyy-MM-dd-HH}
appender.other.layout.type = PatternLayout
appender.other.layout.pattern = [%d] %p %m (%c)%n
appender.other.policies.type = Policies
appender.other.policies.time.type = TimeBasedTriggeringPolicy
appender.other.policies.time.interval = 1
appender.other.policies.time.modulate = true
rootLogger.level = INFO
rootLogger.appenderRef.kafka.ref = KafkaAppender
logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
logger.controller.additivity = false
logger.controller.appenderRef.other.ref = OtherAppender
logger.state.name = state.change.logger
logger.state.level = INFO
logger.state.additivity = false
logger.state.appenderRef.other.ref = OtherAppender
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.request.additivity = false
logger.request.appenderRef.other.ref = OtherAppender
"""


def record_fixture(root: Path, fixture: Path) -> str:
    """Replace `fixture` with the run at `root`: its captures (Kafka's tools' and
    fleet-capture's), the brokers' server.log files (the other loggers' files are not
    input) and truth.jsonl."""
    shutil.rmtree(fixture, ignore_errors=True)
    for cluster in sorted((root / "raw-agent").glob("*/captures")):
        shutil.copytree(cluster, fixture / "raw-agent" / cluster.parent.name / "captures")
    for cluster in sorted((root / "raw").iterdir()):
        target = fixture / "raw" / cluster.name
        shutil.copytree(cluster / "captures", target / "captures")
        for log in sorted(cluster.glob("logs/broker-*/server.log*")):
            (target / log.parent.relative_to(cluster)).mkdir(parents=True, exist_ok=True)
            shutil.copy2(log, target / log.relative_to(cluster))
    shutil.copy2(root / "truth.jsonl", fixture / "truth.jsonl")
    size = sum(p.stat().st_size for p in fixture.rglob("*") if p.is_file())
    return f"{fixture} ({size / 2**20:.1f} MiB)"


@contextlib.contextmanager
def running_lab(line: str, root: Path, agent: bool = False) -> Iterator[Lab]:
    """A started lab, stopped on exit; with `agent`, fleet-capture also snapshots it
    every CAPTURE_INTERVAL_S into <root>/raw-agent (raw_root's layout, captures only)."""
    lab = Lab(line, root)
    try:
        lab.start()
        with agent_capturing(lab, root / "raw-agent") if agent else contextlib.nullcontext():
            yield lab
    finally:
        lab.stop()


class LabsInBackground:
    """The live labs a test session needs, run one after another (running_lab with
    fleet-capture, then run_scenario) in a thread started with the session. A scenario is
    minutes of waiting on the brokers (session timeouts, a frozen member, captures 10 s
    apart): those minutes pass beside the session's other tests, not before the lab's
    own. `root(line)` waits for that line's run and gives its directory."""

    def __init__(self, roots: dict[str, Path]) -> None:
        self._roots = roots
        self._done = {line: threading.Event() for line in roots}
        self._errors: dict[str, BaseException] = {}
        self._closing = threading.Event()
        self._running: Lab | None = None
        self._thread = threading.Thread(target=self._run, name="kafka-labs", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for line, root in self._roots.items():
            try:
                if self._closing.is_set():
                    raise RuntimeError("the test session ended before this lab ran")
                with running_lab(line, root, agent=True) as lab:
                    self._running = lab
                    if not self._closing.is_set():
                        run_scenario(lab)
            except BaseException as exc:  # raised in the test that waits for it
                self._errors[line] = exc
            finally:
                self._running = None
                self._done[line].set()

    def root(self, line: str) -> Path:
        self._done[line].wait()
        if line in self._errors:
            raise RuntimeError(f"the live {line} lab failed") from self._errors[line]
        return self._roots[line]

    def close(self) -> None:
        """At the session's end a lab still running (its test never came: an interrupted
        or failed-fast session) is stopped, its brokers and clients with it."""
        self._closing.set()
        running = self._running
        if running is not None:
            running.stop()
        self._thread.join(timeout=180)


@contextlib.contextmanager
def agent_capturing(lab: Lab, raw: Path) -> Iterator[None]:
    """fleet-capture's cycle on the lab beside LabCapture, at the same interval."""
    from fleet_rebalance.agent.admin import confluent_admin
    from fleet_rebalance.agent.config import AgentConfig, ClusterConfig, Timeouts
    from fleet_rebalance.agent.runner import run_once

    config = AgentConfig(
        raw_root=raw,
        clusters=(ClusterConfig(name=lab.cluster, bootstrap_servers=lab.bootstrap),),
        timeouts=Timeouts(request_s=15, cycle_s=CAPTURE_INTERVAL_S * 3),
    )
    admin = confluent_admin(config.clusters[0])
    status = open(lab.root / "agent.txt", "a", encoding="utf-8")  # noqa: SIM115
    stop = threading.Event()

    def cycles() -> None:
        while not stop.is_set():
            started = time.monotonic()
            run_once(config, {lab.cluster: admin}, lambda line: print(line, file=status))
            stop.wait(max(0.0, CAPTURE_INTERVAL_S - (time.monotonic() - started)))

    thread = threading.Thread(target=cycles, name="fleet-capture", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=CAPTURE_INTERVAL_S * 4)
        status.close()


# The scenario's groups: the classic assignors' groups read orders and audit (so adding
# orders partitions rebalances them all), one each.
CLASSIC = {
    "range": "lab-range",
    "roundrobin": "lab-roundrobin",
    "sticky": "lab-sticky",
    "cooperative-sticky": "lab-coop",
}
CLASSIC_TOPICS = "orders,audit"
ADDED_PARTITIONS = ("orders", 8)
# Groups on the quiet topic that never rebalance after they start: one with a member
# more than the topic has partitions (an idle member).
QUIET = {"lab-quiet": ("range", 2), "lab-quiet-idle": ("cooperative-sticky", 3)}
# Members that join (and later leave) at once: the cooperative group's follow-up rounds
# that also admit a member, and one generation losing several.
COOP_BURST = ("lab-coop-4", "lab-coop-5", "lab-coop-6")
RDKAFKA_BURST = ("lab-rdkafka-3", "lab-rdkafka-4")
FROZEN = "lab-sticky-2"
STATIC_DOWN = "lab-static-2"


def run_scenario(lab: Lab) -> None:
    """What the lab does to its groups, a few minutes of it, recorded in truth.jsonl.
    Every group acts in the same phases; after each, the lab waits until a capture shows
    every group settled (Lab.settle), so each phase's outcome is captured."""
    kip848 = lab.line != "3.9"
    for assignor, group in CLASSIC.items():
        for i in (1, 2, 3):
            lab.java_member(f"{group}-{i}", group, CLASSIC_TOPICS, assignor)
    for i in (1, 2, 3):
        lab.java_member(f"lab-static-{i}", "lab-static", "orders", "range",
                        instance=f"lab-static-{i}", session_ms=STATIC_SESSION_MS)  # fmt: skip
    for i in (1, 2):
        lab.java_member(f"lab-poll-{i}", "lab-poll", "audit", "range", poll_ms=POLL_MS)
        lab.rdkafka_member(f"lab-rdkafka-{i}", "lab-rdkafka", "clicks", "cooperative-sticky")
    lab.java_member("lab-stopped-1", "lab-stopped", "audit", "range")
    lab.produce_to(QUIET_TOPIC, rate=QUIET_RATE)
    for group, (assignor, size) in QUIET.items():
        for i in range(1, size + 1):
            lab.java_member(f"{group}-{i}", group, ",".join(QUIET_TOPIC), assignor)
    if kip848:
        for i in (1, 2):
            lab.java_member(f"lab-uniform-{i}", "lab-uniform", "clicks,orders", "uniform",
                            protocol="consumer")  # fmt: skip
        for i in (1, 2, 3):
            lab.java_member(f"lab-migrate-{i}", "lab-migrate", "audit", "range")
    lab.settle()

    # Scale out: a fourth member in every classic group but the cooperative one, which
    # takes three at once, as does librdkafka's two; two more in the consumer-protocol
    # group one after the other.
    for assignor, group in CLASSIC.items():
        for name in COOP_BURST if group == "lab-coop" else (f"{group}-4",):
            lab.java_member(name, group, CLASSIC_TOPICS, assignor)
    for name in RDKAFKA_BURST:
        lab.rdkafka_member(name, "lab-rdkafka", "clicks", "cooperative-sticky")
    if kip848:
        lab.java_member("lab-uniform-3", "lab-uniform", "clicks,orders", "uniform",
                        protocol="consumer")  # fmt: skip
        lab.settle()
        lab.java_member("lab-uniform-4", "lab-uniform", "clicks,orders", "uniform",
                        protocol="consumer")  # fmt: skip
    lab.settle()

    # Failures: kill -9 (session timeout), a stall past max.poll.interval.ms (poll
    # timeout, then the member polls again and rejoins), a group whose only consumer stops.
    for group in CLASSIC.values():
        lab.kill(f"{group}-1")
    lab.stall("lab-poll-2")
    lab.terminate("lab-stopped-1")
    time.sleep(POLL_MS / 1000)  # the stalled member is back only after it
    lab.settle()

    # A deploy: every pod restarted one by one; the static group's within its session
    # timeout; the migrating group's onto the consumer protocol.
    for i in (2, 3, 4):
        for group in CLASSIC.values():
            lab.restart(f"{group}-{i}")
        lab.restart(f"lab-static-{i - 1}", down_s=3.0)
        if kip848:
            lab.restart(f"lab-migrate-{i - 1}", protocol="consumer", assignor="uniform")
        lab.settle()

    # The topic every classic group (and the consumer-protocol group) reads grows.
    lab.add_partitions(*ADDED_PARTITIONS)
    lab.settle(grown=ADDED_PARTITIONS)

    # Past the session timeout: a member frozen (SIGSTOP, then SIGCONT) longer than it,
    # and a static member down longer than its own.
    lab.freeze(FROZEN, FREEZE_S)
    lab.restart(STATIC_DOWN, down_s=STATIC_DOWN_S)
    lab.settle()

    # Scale in: clean leaves, several at once in the cooperative and librdkafka groups.
    for group in CLASSIC.values():
        lab.terminate(*(COOP_BURST if group == "lab-coop" else (f"{group}-4",)))
    lab.terminate("lab-rdkafka-1", "lab-rdkafka-2")
    if kip848:
        lab.terminate("lab-uniform-4")
        lab.settle()
        lab.terminate("lab-uniform-3")
    lab.settle()
    # The stopped group's lag keeps growing through Burrow's window, and fleet-capture
    # snapshots the quiet groups between tool captures that agree (test_kafka_lab).
    time.sleep(CAPTURE_INTERVAL_S * 3)
