"""Fuzzing the Spark-free capture parsing (issue 19): seeds, mutations, one checker.

A variant is a seed capture (every file of one cluster + timestamp, as one ingest parse
task sees it) with one file's bytes mutated. `run_capture` runs exactly what the parse
task runs, `bronze_batches.capture_batches`, on in-memory bytes; `check_file` asserts
the three bars of DESIGN.md's "Quality bars" for one file:

- crash: capture_batches never raises;
- lines: every physical line (the decoded text split at "\\r\\n", "\\n" or a lone
  "\\r", a final line ending starting no line) is parsed, quarantined or structural,
  counted once; a whole-file rejection accounts for the whole file;
- value: every stored value taken from a line reproduces that line's text (a whole
  ASCII number token, a substring, or for jsonl the parsed JSON, with its type), and
  every stored `line` is the physical line.

Mutations draw their choices from a `Chooser`, so the hypothesis tests (which shrink
the draws) and the time-boxed benchmarks/fuzz.py (a seeded random.Random) share them.
"""

from __future__ import annotations

import codecs
import dataclasses
import datetime as dt
import hashlib
import json
import re
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches
from fleet_rebalance.capture.coordinator_log import NO_FACT, UNKNOWN_LINE, UNMATCHED_GROUP_LINE
from fleet_rebalance.capture.coordinator_log.messages import COORDINATOR_LOGGERS
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.paths import CapturePath, parse_capture_path
from fleet_rebalance.capture.result import FAILED_CAPTURE, REJECTED

SAMPLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "fleet_v1"
SEED_LINES = 40  # small seeds keep one example to a few milliseconds
T = TypeVar("T")

CRASH, LINES, VALUE = "crash", "lines", "value"
KINDS = ("offsets", "members", "state", "topics", "coordinator_log", "jsonl", "brokers", "log_dirs")


# --------------------------------------------------------------------------- seeds


@dataclasses.dataclass(frozen=True)
class Seed:
    """One capture: `files` by path relative to raw_root; `target` is the one mutated
    (the others give it its context, e.g. the offsets a members file is completed from)."""

    name: str
    kind: str
    target: str
    files: dict[str, bytes]

    def __repr__(self) -> str:  # hypothesis prints draws: not the whole capture
        return f"Seed({self.name!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


def _sample(relative: str) -> bytes:
    return (SAMPLE / relative).read_bytes()


def _blocks(data: bytes) -> list[bytes]:
    """A describe view's group blocks (header, rows), without their blank lines."""
    return [block.strip(b"\n") for block in data.split(b"\n\n") if block.strip()]


def _join_blocks(blocks: list[bytes]) -> bytes:
    """As Kafka prints them: each block opened by a blank line, each line ended."""
    return b"".join(b"\n" + block + b"\n" for block in blocks)


def _block_group(block: bytes) -> bytes | None:
    """The group of a block's first row (None for a message or a bare header)."""
    lines = block.split(b"\n")
    return lines[1].split()[0] if len(lines) > 1 and lines[1].split() else None


def _cut_blocks(data: bytes, lines: int = SEED_LINES) -> bytes:
    """The first whole group blocks that fit in `lines` (at least one)."""
    kept: list[bytes] = []
    for block in _blocks(data):
        if kept and len(_join_blocks([*kept, block]).split(b"\n")) > lines:
            break
        kept.append(block)
    return _join_blocks(kept)


def _cut_lines(data: bytes, lines: int = SEED_LINES) -> bytes:
    return b"".join(data.splitlines(keepends=True)[:lines])


def _with_offsets(members_relative: str, members: bytes) -> dict[str, bytes]:
    """A members seed and its capture's offsets view, cut to the same groups (the
    members rows are completed from them)."""
    offsets_relative = members_relative.replace("members", "offsets")
    groups = {_block_group(b) for b in _blocks(members)}
    offsets = [b for b in _blocks(_sample(offsets_relative)) if _block_group(b) in groups]
    return {members_relative: members, offsets_relative: _join_blocks(offsets)}


def _sample_seeds() -> list[Seed]:
    east = "prod-east/captures/2026-11-20T0500Z/"
    lab = "lab/captures/2026-11-19T2200Z/"
    seeds = []
    for name, kind, relative, cut in (
        ("offsets 3.6 (sample)", "offsets", east + "consumer-groups-offsets.txt", _cut_blocks),
        ("state 3.6 (sample)", "state", east + "consumer-groups-state.txt", _cut_blocks),
        ("topics (sample)", "topics", east + "topics.txt", _cut_lines),
        (
            "log, old coordinator (sample)",
            "coordinator_log",
            "prod-east/logs/broker-3/server.log.2026-11-20-02",
            _cut_lines,
        ),
        (
            "log, new coordinator (sample)",
            "coordinator_log",
            "lab/logs/broker-1/server.log.2026-11-20-00",
            _cut_lines,
        ),
    ):
        seeds.append(Seed(name, kind, relative, {relative: cut(_sample(relative))}))
    for name, relative in (
        ("members 3.6 (sample)", east + "consumer-groups-members.txt"),
        ("members 4.x KIP-1099 (sample)", lab + "consumer-groups-members.txt"),
    ):
        members = _cut_blocks(_sample(relative), SEED_LINES // 2)
        seeds.append(Seed(name, "members", relative, _with_offsets(relative, members)))
    return seeds


FORMATS_CAPTURE = "prod-east/captures/2026-11-20T0910Z/"
# Layouts shared/FORMATS.md documents that data/sample does not hold.
OFFSETS_38 = (  # 3.8/3.9: no blank line between blocks, no final newline
    "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG         "
    "    CONSUMER-ID     HOST            CLIENT-ID"
    "\ng1              orders          0          5               9               4           "
    "    c-1             /10.0.0.1       consumer-g1-1"
    "\ng1              orders          10         7               9               2           "
    "    c-1             /10.0.0.1       consumer-g1-1"
    "\ng1              orders          3          -               9               -           "
    "    -               -               -"
    "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG         "
    "    CONSUMER-ID     HOST            CLIENT-ID"
    "\ng2              audit           2          103254125       103915600       661475      "
    "    c-2             /10.0.0.2       consumer-g2-1"
)
OFFSETS_010 = (  # 0.10.0/0.10.1: OWNER = clientId + "_" + clientHost
    "GROUP                          TOPIC                          PARTITION  CURRENT-OFFSET  "
    "LOG-END-OFFSET  LAG             OWNER\n"
    "g                              orders                         0          5               "
    "7               2               client-0_/192.168.1.13\n"
    "g                              orders                         1          unknown         "
    "7               unknown         none\n"
)
OFFSETS_09 = (  # 0.9: comma separated
    "GROUP, TOPIC, PARTITION, CURRENT OFFSET, LOG END OFFSET, LAG, OWNER\n"
    "g, orders, 0, 5, 7, 2, client-0_/10.0.0.9\n"
    "g, orders, 1, unknown, 7, unknown, none\n"
)
OFFSETS_TOOL_ERROR = (  # a tool failure mid-capture (2>&1): messages, log4j noise, a trace
    "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG         "
    "    CONSUMER-ID     HOST            CLIENT-ID\n"
    "g               t               0          5               9               4           "
    "    c-1             /10.0.0.1       c\n"
    "\nConsumer group 'audit-archiver' has no active members.\n"
    "[2026-11-20 09:10:01,000] WARN [AdminClient clientId=adminclient-1] Connection to node -1 "
    "could not be established. (org.apache.kafka.clients.NetworkClient)\n"
    "\nError: Executing consumer group command failed due to org.apache.kafka.common.errors."
    "TimeoutException: Timed out waiting for a node assignment.\n"
    "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: "
    "Timed out waiting for a node assignment.\n"
    "\tat java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)\n"
    "\t... 5 more\n"
)
MEMBERS_38 = (  # 3.8/3.9: topic-less ASSIGNMENT, a bare header after an Empty group
    "\nConsumer group 'idle' has no active members.\n"
    "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT"
    "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT"
    "\ng1              c-1             /10.0.0.1       consumer-g1-1   2               (0,10)"
    "\ng1              c-3             /10.0.0.3       consumer-g1-3   0               -"
)
MEMBERS_36_STATIC = (  # 2.6+: GROUP-INSTANCE-ID only in a group with static members
    "\nGROUP           CONSUMER-ID                                         GROUP-INSTANCE-ID "
    "HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"
    "g1              pod-a-5f1c2d3e-aaaa-bbbb-cccc-000000000001           pod-a             "
    "/10.0.0.1       consumer-g1-pod-a 3               audit(2), orders(0,1)\n"
    "g1              consumer-g1-1-5f1c2d3e-aaaa-bbbb-cccc-000000000002   -                 "
    "/10.0.0.2       consumer-g1-1   0               -\n"
    "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n"
    "g2              c-1             /10.0.0.3       c               2               \n"
)
STATE_MIXED = (  # 3.6 overflowing coordinator and empty strategy; 3.8 two spaces; 4.x dash
    "\nGROUP                              COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE"
    "           #MEMBERS\n"
    "audit-archiver                     kafka-e4.prod.example.net:9092 (4)                     "
    " Empty           0\n"
    "\nGROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE          "
    " #MEMBERS\n"
    "g                         kafka-2:9092  (2)         cooperative-sticky   Stable          2\n"
    "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                "
    "#MEMBERS\n"
    "h               kafka-3:9092  (3)         -                    Empty                0\n"
)
TOPICS_MIXED = (  # 3.8+ Elr columns, a reassignment, no leader, the pre-2.4 header
    "Topic: orders\tTopicId: kD2lJ1sPQx2XbH6dVLFo2w\tPartitionCount: 2\tReplicationFactor: 3\t"
    "Configs: segment.bytes=1073741824\n"
    "\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 2,1,3\tIsr: 1,3,2\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 3,2,1\tIsr: \tAdding Replicas: 4\t"
    "Removing Replicas: 1\tElr: N/A\tLastKnownElr: N/A\n"
    "Topic:legacy\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n"
    "\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n"
)
LOG_MIXED = (  # both coordinators' strings (FORMATS 3), other loggers, a stack frame
    "[2026-11-20 09:40:05,171] INFO [GroupCoordinator 1]: Preparing to rebalance group orders "
    "in state PreparingRebalance with old generation 41 (__consumer_offsets-44) (reason: "
    "Removing member c-1 on LeaveGroup; client reason: the consumer is being closed) "
    "(kafka.coordinator.group.GroupCoordinator)\n"
    "[2026-11-20 09:40:05,172] INFO [GroupCoordinator 1]: Member MemberMetadata(memberId=c-1, "
    "groupInstanceId=None, clientId=c, clientHost=/10.0.0.1, sessionTimeoutMs=45000, "
    "rebalanceTimeoutMs=300000, supportedProtocols=List(range, cooperative-sticky)) has left "
    "group orders through explicit `LeaveGroup`; client reason: the consumer is being closed "
    "(kafka.coordinator.group.GroupCoordinator)\n"
    "[2026-11-20 09:40:08,002] INFO [GroupCoordinator 1]: Stabilized group orders generation 42 "
    "(__consumer_offsets-44) with 2 members (kafka.coordinator.group.GroupCoordinator)\n"
    "[2026-11-20 09:41:00,000] INFO [GroupCoordinator 1]: Member c-3 in group orders has failed,"
    " removing it from the group (kafka.coordinator.group.GroupCoordinator)\n"
    "[2026-11-20 09:42:00,000] INFO [GroupCoordinator 1]: Static member with groupInstanceId="
    "pod-a and unknown member id joins group orders in Stable state. Replacing previously mapped"
    " member pod-a-old with this groupInstanceId. (kafka.coordinator.group.GroupCoordinator)\n"
    "[2026-11-20 09:43:00,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=7]"
    " Preparing to rebalance group pay in state PreparingRebalance with old generation 3 "
    "(reason: removing member m-1 on heartbeat expiration.). "
    "(org.apache.kafka.coordinator.group.GroupMetadataManager)\n"
    "[2026-11-20 09:43:02,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=7]"
    " [GroupId kip] Member Q7K_qda8THGpKHzSy-UQ8A fenced from the group because the member "
    "session expired.. (org.apache.kafka.coordinator.group.GroupMetadataManager)\n"
    "[2026-11-20 09:43:03,000] INFO [Controller id=1] Something unrelated "
    "(kafka.controller.KafkaController)\n"
    "\tat some.stack.Frame(Frame.java:1)\n"
)
# jsonl.py's docstring format: every field, a static member, an inferred subscription.
JSONL = [
    {
        "group_id": "orders-processor",
        "captured_at": "2026-11-20T09:10:00Z",
        "cluster": "prod-east",
        "state": "Stable",
        "assignment_strategy": "cooperative-sticky",
        "coordinator": {"host": "kafka-3:9092", "id": 3},
        "members": [
            {
                "member_id": "c-1-5f1c2d3e",
                "group_instance_id": None,
                "client_id": "c-1",
                "host": "/10.0.0.7",
                "rack": "use1-az1",
                "generation": 42,
                "subscription": ["orders"],
                "assignment": [["orders", 0], ["orders", 1]],
            },
            {
                "member_id": "pod-b-77aa",
                "group_instance_id": "pod-b",
                "client_id": "c-2",
                "host": "/10.0.0.8",
                "assignment": [{"topic": "orders", "partition": 2}],
            },
        ],
        "offsets": [
            {
                "topic": "orders",
                "partition": 0,
                "current_offset": 10,
                "log_end_offset": 12,
                "consumer_id": "c-1-5f1c2d3e",
                "host": "/10.0.0.7",
                "client_id": "c-1",
            },
            {"topic": "orders", "partition": 2, "current_offset": None, "log_end_offset": 7},
        ],
    },
    {
        "group_id": "audit",
        "state": "Empty",
        "assignment_strategy": "",
        "coordinator": {"host": "kafka-1:9092", "id": 1},
        "members": [],
        "offsets": [{"topic": "audit", "partition": 5, "current_offset": 3, "log_end_offset": 3}],
    },
]


BROKERS = (
    "All configs for broker 1 are:\n"
    "  advertised.listeners=PLAINTEXT://10.0.1.7:9092 sensitive=false "
    "synonyms={STATIC_BROKER_CONFIG:advertised.listeners=PLAINTEXT://10.0.1.7:9092}\n"
    "  broker.rack=use1-az1 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.rack=use1-az1}\n"
    "  ssl.key.password=null sensitive=true synonyms={}\n"
    "All configs for broker 2 are:\n"
    "  broker.rack=null sensitive=false synonyms={}\n"
    "  group.streams.rack.aware.assignment.tags= sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.rack.aware.assignment.tags=}\n"
    "Default configs for brokers in the cluster are:\n"
)
LOG_DIRS = (
    "Querying brokers for log directories information\n"
    "Received log directory information from brokers 1,2\n"
    '{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"orders-eu-0",'
    '"size":73400320,"offsetLag":0,"isFuture":false},{"partition":"audit-11","size":0,'
    '"offsetLag":3,"isFuture":true}],"error":null,"logDir":"/var/lib/kafka/data"}]},'
    '{"broker":2,"logDirs":[{"partitions":[],"error":"KafkaStorageException",'
    '"logDir":"/var/lib/kafka/data2"}]}],"version":1}\n'
)


def _literal_seeds() -> list[Seed]:
    def one(name: str, kind: str, relative: str, text: str) -> Seed:
        return Seed(name, kind, relative, {relative: text.encode()})

    members_38 = FORMATS_CAPTURE + "consumer-groups-members.txt"
    return [
        one("offsets 3.8", "offsets", FORMATS_CAPTURE + "offsets-38.txt", OFFSETS_38),
        one("offsets 0.10 OWNER", "offsets", FORMATS_CAPTURE + "offsets-010.txt", OFFSETS_010),
        one("offsets 0.9 commas", "offsets", FORMATS_CAPTURE + "offsets-09.txt", OFFSETS_09),
        one(
            "offsets, tool error",
            "offsets",
            FORMATS_CAPTURE + "offsets-error.txt",
            OFFSETS_TOOL_ERROR,
        ),
        Seed(
            "members 3.8 topic-less",
            "members",
            members_38,
            {
                members_38: MEMBERS_38.encode(),
                FORMATS_CAPTURE + "consumer-groups-offsets.txt": OFFSETS_38.encode(),
            },
        ),
        one("members static", "members", FORMATS_CAPTURE + "members-26.txt", MEMBERS_36_STATIC),
        one("state 3.6/3.8/4.x", "state", FORMATS_CAPTURE + "state.txt", STATE_MIXED),
        one("topics 2.x-3.8", "topics", FORMATS_CAPTURE + "topics.txt", TOPICS_MIXED),
        one(
            "log, both coordinators",
            "coordinator_log",
            "prod-east/logs/broker-1/server.log.2026-11-20-09",
            LOG_MIXED,
        ),
        one(
            "jsonl",
            "jsonl",
            "prod-east/exports/2026-11-20T0910Z/groups.jsonl",
            "".join(json.dumps(s) + "\n" for s in JSONL),
        ),
        one("brokers 3.x/4.x", "brokers", FORMATS_CAPTURE + "brokers.txt", BROKERS),
        one("log dirs 3.6+", "log_dirs", FORMATS_CAPTURE + "log-dirs.txt", LOG_DIRS),
    ]


def all_seeds() -> dict[str, list[Seed]]:
    """The seeds per capture kind."""
    by_kind: dict[str, list[Seed]] = {kind: [] for kind in KINDS}
    for seed in [*_sample_seeds(), *_literal_seeds()]:
        by_kind[seed.kind].append(seed)
    return by_kind


SEEDS = all_seeds()


# ----------------------------------------------------------------------- mutations


class Chooser(Protocol):
    def below(self, n: int) -> int:
        """0 <= k < n; smaller is simpler (hypothesis shrinks towards 0)."""


class RandomChooser:
    def __init__(self, rng: Any) -> None:
        self.rng = rng

    def below(self, n: int) -> int:
        return self.rng.randrange(n)


class DrawChooser:
    def __init__(self, draw: Callable[[st.SearchStrategy[int]], int]) -> None:
        self.draw = draw

    def below(self, n: int) -> int:
        return self.draw(st.integers(0, n - 1))


def _pick(chooser: Chooser, options: Sequence[T]) -> T:
    return options[chooser.below(len(options))]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _line_index(data: bytes, chooser: Chooser) -> int:
    return chooser.below(len(_lines(data)))


def _edit_line(data: bytes, index: int, edit: Callable[[bytes], bytes]) -> bytes:
    lines = _lines(data)
    lines[index] = edit(lines[index])
    return b"\n".join(lines)


def flip_byte(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    if not data:
        return data, "flip_byte(empty)"
    at = chooser.below(len(data))
    bit = 1 << chooser.below(8)
    return data[:at] + bytes([data[at] ^ bit]) + data[at + 1 :], f"flip_byte(@{at} ^{bit:#x})"


def truncate(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    at = len(data) - chooser.below(len(data) + 1)  # shrinks towards "keep everything"
    return data[:at], f"truncate(@{at})"


BINARY = [b"\x00", b"\xff", b"\xfe\xff", b"\x1b[0m", b"\x07", b"\x80\x81", b"\x00" * 8]


def insert_binary(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    at = chooser.below(len(data) + 1)
    junk = _pick(chooser, BINARY)
    return data[:at] + junk + data[at:], f"insert_binary(@{at} {junk!r})"


def _fullwidth(digits: str) -> str:
    return "".join(chr(0xFF10 + int(d)) for d in digits)


def _arabic_indic(digits: str) -> str:
    return "".join(chr(0x0660 + int(d)) for d in digits)


# Spellings of a number that Kafka never prints; each must be quarantined or stored as
# what it says (DESIGN.md: numbers are ASCII digits within the column's type).
NUMBER_SPELLINGS: list[tuple[str, Callable[[str], str]]] = [
    ("2^31", lambda d: str(2**31)),
    ("2^63", lambda d: str(2**63)),
    ("10^30", lambda d: str(10**30)),
    ("negative", lambda d: "-" + d),
    ("underscore", lambda d: "1_0"),
    ("plus", lambda d: "+7"),
    ("fullwidth", _fullwidth),
    ("arabic-indic", _arabic_indic),
    ("decimal", lambda d: "3.7"),
    ("double minus", lambda d: "--" + d),
    ("exponent", lambda d: "1e3"),
    ("-2^63-1", lambda d: str(-(2**63) - 1)),
    # Issue 56: each integer column's edges, the values just past them, and 2^64.
    ("2^31-1", lambda d: str(2**31 - 1)),
    ("-2^31", lambda d: str(-(2**31))),
    ("-2^31-1", lambda d: str(-(2**31) - 1)),
    ("2^63-1", lambda d: str(2**63 - 1)),
    ("-2^63", lambda d: str(-(2**63))),
    ("2^64", lambda d: str(2**64)),
    ("-1", lambda d: "-1"),
]
NUMBER = re.compile(rb"\d+")


def replace_number(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    numbers = list(NUMBER.finditer(data))
    if not numbers:
        return data, "replace_number(none)"
    match = _pick(chooser, numbers)
    name, spell = _pick(chooser, NUMBER_SPELLINGS)
    new = spell(match.group().decode()).encode()
    return (
        data[: match.start()] + new + data[match.end() :],
        f"replace_number(@{match.start()} {match.group().decode()}->{new.decode()!r} {name})",
    )


def duplicate_line(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    lines, i = _lines(data), _line_index(data, chooser)
    return b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]), f"duplicate_line({i + 1})"


def remove_line(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    lines, i = _lines(data), _line_index(data, chooser)
    return b"\n".join(lines[:i] + lines[i + 1 :]), f"remove_line({i + 1})"


def swap_lines(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    lines = _lines(data)
    i, j = chooser.below(len(lines)), chooser.below(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), f"swap_lines({i + 1},{j + 1})"


ENCODINGS = ["utf-8-sig", "utf-16-le-bom", "utf-16-be-bom", "latin-1"]


def reencode(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """The whole file as another tool or shell would write it (PowerShell: UTF-16 LE
    with BOM); latin-1 gets a non-ASCII letter so that it differs from UTF-8."""
    text = data.decode("utf-8", errors="replace")
    encoding = _pick(chooser, ENCODINGS)
    if encoding == "utf-8-sig":
        return "\ufeff".encode() + data, "reencode(utf-8 BOM)"
    if encoding == "latin-1":
        at = chooser.below(len(text) + 1)
        text = text[:at] + "é" + text[at:]
        return text.encode("latin-1", errors="replace"), f"reencode(latin-1, é @{at})"
    codec = "utf-16-le" if encoding == "utf-16-le-bom" else "utf-16-be"
    return "\ufeff".encode(codec) + text.encode(codec), f"reencode({encoding})"


# Characters str.splitlines() breaks on besides "\n", and other odd whitespace.
SEPARATORS = [
    "\t",
    "\v",
    "\f",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
    "\r",
    "\u00a0",
    "  ",
]


def odd_separator(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """An odd separator inside a line, replacing a space or inserted."""
    at = chooser.below(len(data) + 1)
    separator = _pick(chooser, SEPARATORS).encode()
    replace = chooser.below(2) and data[at : at + 1] == b" "
    rest = data[at + 1 :] if replace else data[at:]
    how = "replacing a space" if replace else "inserted"
    return data[:at] + separator + rest, f"odd_separator(@{at} {separator!r} {how})"


def crlf(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    if chooser.below(2):
        return data.replace(b"\n", b"\r\n"), "crlf(all lines)"
    i = _line_index(data, chooser)
    return _edit_line(data, i, lambda line: line + b"\r"), f"crlf(line {i + 1})"


# A line past parse_capture's 64 KiB sniffing window; the hypothesis tests use a short
# one (speed is the benchmark's business, DESIGN.md: no timed assertions in tests).
LONGEST = 70_000
TEST_LONGEST = 2_000


def long_line(data: bytes, chooser: Chooser, longest: int = LONGEST) -> tuple[bytes, str]:
    """A line made `size` bytes longer: a long last value, or the line repeated."""
    i = _line_index(data, chooser)
    size = _pick(chooser, [min(1_000, longest), longest])
    if chooser.below(2):
        longer = _edit_line(data, i, lambda line: line + b" " + b"x" * size)
        return longer, f"long_line({i + 1} +{size} x)"
    repeated = _edit_line(data, i, lambda line: b" ".join([line] * (size // (len(line) + 1) + 1)))
    return repeated, f"long_line({i + 1} repeated past {size})"


# Values of the wrong JSON type for a field (jsonl.py's docstring gives the right ones).
CONFUSIONS: list[Any] = [
    "abc",
    "orders",
    3.7,
    True,
    None,
    {"nested": {"a": 1}},
    [],
    ["orders", 1],
    2**31,
    2**63,
    -1,
    "3",
    "\uff13",
    "",
]


def _paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in items:
        yield from _paths(child, (*path, key))


def _replace_at(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace_at(value[path[0]], path[1:], new)
    return copy


def _json_lines(data: bytes) -> list[tuple[int, Any]]:
    found = []
    for i, line in enumerate(_lines(data)):
        try:
            found.append((i, json.loads(line)))
        except ValueError:
            continue
    return found


def _dumped(snapshot: Any) -> bytes:
    """A snapshot as one JSON line: UTF-8 as the exporters write it, or with escapes
    where a string holds a lone surrogate (json_lone_surrogate's), which UTF-8 cannot."""
    try:
        return json.dumps(snapshot, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(snapshot).encode()


def json_confuse(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """A value anywhere in a snapshot replaced by one of another JSON type."""
    snapshots = _json_lines(data)
    if not snapshots:
        return data, "json_confuse(no JSON line)"
    i, snapshot = _pick(chooser, snapshots)
    path = _pick(chooser, list(_paths(snapshot))[1:] or [()])
    new = _pick(chooser, CONFUSIONS)
    text = _dumped(_replace_at(snapshot, path, new))
    return _edit_line(data, i, lambda _: text), f"json_confuse(line {i + 1} {list(path)}={new!r})"


# Escapes JSON allows in a string that no Unicode text holds (issue 56: a member's
# client_id `c-2\udc80` was stored without it while the rest of its group was kept).
LONE_SURROGATES = ["\\udc80", "\\ud800", "\\udfff", "\\udbff"]


def json_lone_surrogate(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """A lone surrogate escape put inside a string value of a snapshot."""
    snapshots = _json_lines(data)
    texts = [
        (i, s, p) for i, s in snapshots for p in _paths(s) if p and isinstance(_value_at(s, p), str)
    ]
    if not texts:
        return data, "json_lone_surrogate(none)"
    i, snapshot, path = _pick(chooser, texts)
    escape = _pick(chooser, LONE_SURROGATES)
    marker = "\x00LONE\x00"
    value = _value_at(snapshot, path)
    at = chooser.below(len(value) + 1)
    text = json.dumps(_replace_at(snapshot, path, value[:at] + marker + value[at:]))
    line = text.replace(json.dumps(marker)[1:-1], escape).encode()
    return _edit_line(data, i, lambda _: line), f"json_lone_surrogate(line {i + 1} {list(path)})"


def _value_at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def json_drop_key(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    snapshots = _json_lines(data)
    keyed = [(i, s, p) for i, s in snapshots for p in _paths(s) if p and isinstance(p[-1], str)]
    if not keyed:
        return data, "json_drop_key(none)"
    i, snapshot, path = _pick(chooser, keyed)
    original = snapshot
    for key in path[:-1]:
        original = original[key]
    kept = {k: v for k, v in original.items() if k != path[-1]}
    text = _dumped(_replace_at(snapshot, path[:-1], kept))
    return _edit_line(data, i, lambda _: text), f"json_drop_key(line {i + 1} {list(path)})"


# After a line's last character (issue 36: a log line ending in a space was dropped, one
# with text after its logger or cut off was neither parsed nor quarantined).
TRAILING = [b" ", b"\t", b"   ", b" xyz", b"xyz", b")", b" (x)", b"\x00"]


def trailing_bytes(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """Blanks or garbage appended to one line."""
    i = _line_index(data, chooser)
    tail = _pick(chooser, TRAILING)
    return _edit_line(data, i, lambda line: line + tail), f"trailing_bytes({i + 1} +{tail!r})"


def cr_only(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """Every line ending, or one, a lone CR (classic Mac OS, terminal recorders)."""
    if chooser.below(2):
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r"), "cr_only(all lines)"
    lines = _lines(data)
    if len(lines) < 2:
        return data, "cr_only(one line)"
    i = chooser.below(len(lines) - 1)
    joined = b"\n".join(lines[: i + 1]) + b"\r" + b"\n".join(lines[i + 1 :])
    return joined, f"cr_only(after line {i + 1})"


# Characters a client.id (so a member id) may hold that a parser could take for a
# separator: the KIP-800 reason's `;`, the ASSIGNMENT text's `,` and `:`.
ID_SEPARATORS = [b";", b",", b":"]
ID_LIKE = re.compile(rb"[A-Za-z][\w.]*-[\w.-]*\w")


def id_separator(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """`;`, `,` or `:` inserted inside an id-like word (`consumer-g1-1`)."""
    ids = list(ID_LIKE.finditer(data))
    if not ids:
        return data, "id_separator(none)"
    match = _pick(chooser, ids)
    at = match.start() + 1 + chooser.below(len(match.group()) - 1)
    separator = _pick(chooser, ID_SEPARATORS)
    return (
        data[:at] + separator + data[at:],
        f"id_separator(@{at} {separator!r} in {match.group().decode(errors='replace')!r})",
    )


WORD = re.compile(rb"\S{2,}")


def nul_in_value(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
    """A NUL inside a word (a client id, a group, a log message's word)."""
    words = list(WORD.finditer(data))
    if not words:
        return data, "nul_in_value(none)"
    match = _pick(chooser, words)
    at = match.start() + 1 + chooser.below(len(match.group()) - 1)
    return data[:at] + b"\x00" + data[at:], f"nul_in_value(@{at})"


Mutation = Callable[[bytes, Chooser], tuple[bytes, str]]
TEXT_MUTATIONS: list[Mutation] = [
    replace_number,
    odd_separator,
    duplicate_line,
    remove_line,
    swap_lines,
    truncate,
    crlf,
    flip_byte,
    insert_binary,
    reencode,
    trailing_bytes,
    cr_only,
    id_separator,
    nul_in_value,
]
JSON_MUTATIONS: list[Mutation] = [json_confuse, json_drop_key, json_lone_surrogate]
MOST_MUTATIONS = 4


def mutations_for(kind: str, longest: int = LONGEST) -> list[Mutation]:
    def long(data: bytes, chooser: Chooser) -> tuple[bytes, str]:
        return long_line(data, chooser, longest)

    text = [*TEXT_MUTATIONS, long]
    return [*JSON_MUTATIONS, *text] if kind == "jsonl" else text


def mutate(
    data: bytes, chooser: Chooser, kind: str, longest: int = LONGEST
) -> tuple[bytes, list[str]]:
    """1 to MOST_MUTATIONS mutations applied in turn, and what each did."""
    mutations = mutations_for(kind, longest)
    done = []
    for _ in range(1 + chooser.below(MOST_MUTATIONS)):
        data, what = _pick(chooser, mutations)(data, chooser)
        done.append(what)
    return data, done


@dataclasses.dataclass(frozen=True)
class Variant:
    seed: Seed
    data: bytes  # the target file's mutated bytes
    mutations: tuple[str, ...]

    def __repr__(self) -> str:
        return f"Variant({self.seed.name!r}, {len(self.data)} bytes, {list(self.mutations)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @property
    def files(self) -> dict[str, bytes]:
        return {**self.seed.files, self.seed.target: self.data}


def random_variant(seed: Seed, rng: Any, longest: int = LONGEST) -> Variant:
    data, done = mutate(seed.files[seed.target], RandomChooser(rng), seed.kind, longest)
    return Variant(seed, data, tuple(done))


@st.composite
def mutated(
    draw: st.DrawFn, data: bytes, kind: str, longest: int = TEST_LONGEST
) -> tuple[bytes, list[str]]:
    """`data` (a file of capture `kind`) with 1 to MOST_MUTATIONS mutations, and what
    each did; hypothesis shrinks the choices towards fewer, earlier, simpler ones."""
    return mutate(data, DrawChooser(draw), kind, longest)


@st.composite
def variants(draw: st.DrawFn, kind: str, longest: int = TEST_LONGEST) -> Variant:
    """A seed of `kind` with its target file mutated."""
    seed = draw(st.sampled_from(SEEDS[kind]))
    data, done = draw(mutated(seed.files[seed.target], kind, longest))
    return Variant(seed, data, tuple(done))


# ------------------------------------------------------------------ running a capture


@dataclasses.dataclass
class FileOutputs:
    """What capture_batches gave for one file: its summary and its rows per table
    (quarantine included), plus the capture's offsets rows (members complete from them)."""

    relative: str
    summary: dict[str, Any] | None = None
    rows: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    capture_offsets: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    crash: str | None = None


def _crash_text(exc: BaseException) -> str:
    """The exception's last line and the innermost project frame it came from."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "fleet_rebalance" in f.filename]
    where = ""
    if frames:
        frame = frames[-1]
        where = f" [{Path(frame.filename).name}:{frame.lineno} in {frame.name}]"
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return last[:300] + where


def run_capture(files: dict[str, bytes]) -> dict[str, FileOutputs]:
    """capture_batches over in-memory files of one capture, as a parse task runs it;
    the run date is the capture's path date."""
    paths = {relative: parse_capture_path(relative) for relative in files}
    dates = [p.captured_at.date() for p in paths.values() if p.captured_at is not None]
    run_date = min(dates) if dates else dt.date(2026, 11, 20)
    units = [
        {"relative": r, "cluster": p.cluster, "captured_at": p.captured_at, "group": p.group}
        for r, p in paths.items()
    ]

    def parse(file: dict[str, Any]) -> tuple[Any, str]:
        data = files[file["relative"]]
        path = CapturePath(file["cluster"], file["captured_at"], file["group"])
        return parse_capture(file["relative"], data, path=path), hashlib.sha256(data).hexdigest()

    outputs = {relative: FileOutputs(relative) for relative in files}
    offsets: list[dict[str, Any]] = []
    try:
        for table, out in capture_batches(units, parse, run_date):
            if table == FILE_REPORT:
                outputs[out["source_file"]].summary = out
                continue
            for row in out.to_pylist():
                outputs[row["source_file"]].rows.setdefault(table, []).append(row)
                if table == "offsets":
                    offsets.append(row)
    except Exception as exc:  # the harness reports it: parsing must never raise
        crash = _crash_text(exc)
        for output in outputs.values():
            output.crash = crash
    for output in outputs.values():
        output.capture_offsets = offsets
    return outputs


# ------------------------------------------------------------------------ the checker


@dataclasses.dataclass(frozen=True)
class Problem:
    """`kind` is crash, lines or value; `check` names the broken rule without the
    variant's particulars (the failure class); `detail` has them."""

    kind: str
    check: str
    detail: str
    line_number: int | None = None

    def __str__(self) -> str:
        at = f" line {self.line_number}" if self.line_number else ""
        return f"[{self.kind}] {self.check}{at}: {self.detail}"


# Byte-order marks a capture may start with (Windows terminals, PowerShell redirections);
# longest first: UTF-32-LE's mark starts with UTF-16-LE's.
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
UNDECODABLE = re.compile("[\udc00-\udcff]")
# What no Kafka tool or log4j line prints inside a value (capture/text.py UNPRINTED): a
# stored value holding one was stored other than Kafka wrote it (issue 36: NUL).
UNPRINTED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _lone_surrogates(error: UnicodeError) -> tuple[str, int]:
    """Each byte that does not decode as U+DC00 + byte (surrogateescape cannot hold
    bytes below 0x80, which a UTF-16 file cut mid-character ends with)."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(chr(0xDC00 + b) for b in bad), error.end


codecs.register_error("fuzz-lone-surrogates", _lone_surrogates)


def physical_lines(data: bytes) -> list[str]:
    """DESIGN.md: lines end at "\\r\\n", "\\n" or a lone "\\r" (issue 36: CR-only
    files); a final line ending starts no line. The text is UTF-8, or what a byte-order
    mark names; bytes that do not decode stay lone surrogates, which no honest stored
    value contains."""
    encoding, start = "utf-8", 0
    for bom, name in BOMS:
        if data.startswith(bom):
            encoding, start = name, len(bom)
            break
    text = data[start:].decode(encoding, errors="fuzz-lone-surrogates")
    parts = re.split(r"\r\n|\r|\n", text) if text else []
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def quarantine_forms(line: str, number: int) -> set[str]:
    """How a quarantine row may show a physical line: as it is; with its undecodable
    bytes as U+FFFD or as \\xNN escapes; line 1 also with the UTF-8 mark kept."""
    forms = {line}
    if UNDECODABLE.search(line):
        forms |= {
            UNDECODABLE.sub("\ufffd", line),
            UNDECODABLE.sub(lambda m: f"\\x{ord(m[0]) - 0xDC00:02x}", line),
        }
    if number == 1:
        forms |= {"\ufeff" + form for form in forms}
    return forms


def _int_in(value: int, text: str) -> bool:
    """`value`'s ASCII decimal spelling as a whole number token of text (leading zeros
    allowed: they are ASCII digits of the same number)."""
    digits = str(abs(value))
    sign = "-" if value < 0 else ""
    zero = "-?" if value == 0 else ""
    pattern = rf"(?<![\w.+\-]){sign}{zero}0*{digits}(?!\w)(?!\.\d)"
    return re.search(pattern, text) is not None


def _pair_in(topic: str, partition: int, text: str) -> bool:
    """A (topic, partition) as the ASSIGNMENT text spells it: `topic(0,1)` (<= 3.7) or
    `topic:0,1` (4.x, KIP-1099)."""
    for match in re.finditer(rf"(?<![^\s,;(]){re.escape(topic)}[(:]([^()\s;]*)", text):
        for number in match.group(1).split(","):
            if number.isascii() and number.isdigit() and int(number) == partition:
                return True
    return False


TOPICLESS = re.compile(r"(?<![^\s,])\(\d+(?:,\d+)*\)")  # 3.8/3.9: (0,1,10), (2)
BROKER_IN_PATH = re.compile(r"broker[-_]?(\d+)")
# Columns not taken from the line: the path's, the parser's names, the capture's.
NOT_FROM_LINE = {
    "cluster",
    "captured_at",
    "capture_date",
    "source_file",
    "line_number",
    "subscription_inferred",
    "rebalancing",  # the tool's warning above the group's table (test_coordinator_lines)
    "log_date",
    "event",
    "line",
    "topic_id",  # from the topic's header line, checked against the file
    "lag",  # offsets: checked below (printed LAG, or derived in jsonl)
}
JSON_TABLES = ("group_states", "members", "offsets")
WHOLE_FILE = (REJECTED, FAILED_CAPTURE)


def check_file(data: bytes, outputs: FileOutputs) -> list[Problem]:
    """Every problem of one file's outputs: crash, lines unaccounted, values changed."""
    if outputs.crash is not None:
        return [Problem(CRASH, _crash_class(outputs.crash), outputs.crash)]
    summary = outputs.summary
    if summary is None:
        return [Problem(LINES, "no file summary", outputs.relative)]
    quarantine = outputs.rows.get("quarantine", [])
    whole = [q for q in quarantine if q["line_number"] is None]
    stored = list(_stored_rows(outputs))
    if whole and summary["status"] in WHOLE_FILE:  # accounted for as a whole
        return (
            [Problem(LINES, "rows stored from a file refused whole", f"{len(stored)} rows")]
            if stored
            else []
        )
    problems = [
        Problem(
            LINES,
            f"quarantine row without a line number in a file with status {summary['status']}",
            f"reason {q['reason'][:120]!r}",
        )
        for q in whole
    ]
    lines = physical_lines(data)
    problems += _check_accounting(lines, summary, outputs)
    if summary["lines"] != len(lines):
        return problems  # line numbers are shifted: per-line checks would only echo it
    problems += _check_line_texts(lines, outputs)
    problems += _check_control(outputs)
    if summary["kind"] == "coordinator_log":
        problems += _check_coordinator_lines(lines, summary, outputs)
    if summary["kind"] == "jsonl":
        problems += _check_jsonl(lines, outputs)
    else:
        problems += _check_values(lines, outputs)
    return problems


def _crash_class(crash: str) -> str:
    """The exception type and where it was raised (its message varies per variant)."""
    kind = crash.split(":", 1)[0]
    where = re.search(r"\[(\S+):\d+ in (\S+)\]$", crash)
    return f"{kind} in {where.group(1)}:{where.group(2)}" if where else kind


def _stored_rows(outputs: FileOutputs) -> Iterator[tuple[str, dict[str, Any]]]:
    for table, rows in outputs.rows.items():
        if table != "quarantine":
            for row in rows:
                yield table, row


def _check_accounting(
    lines: list[str], summary: dict[str, Any], outputs: FileOutputs
) -> list[Problem]:
    problems = []
    count = len(lines)
    if summary["lines"] != count:
        problems.append(
            Problem(
                LINES,
                "summary line count differs from the physical lines",
                f"summary says {summary['lines']}, the file has {count} lines split on \\n",
            )
        )
    quarantined = {q["line_number"] for q in outputs.rows.get("quarantine", [])} - {None}
    stored = {r["line_number"] for _, r in _stored_rows(outputs) if r.get("line_number")}
    accounted = summary["parsed_lines"] + len(quarantined) + summary["structural"]
    if accounted != count:
        problems.append(
            Problem(
                LINES,
                "lines != parsed + quarantined + structural",
                f"{count} lines, {summary['parsed_lines']} parsed + {len(quarantined)} "
                f"quarantined + {summary['structural']} structural = {accounted}",
            )
        )
    outside = sorted(n for n in quarantined | stored if not 1 <= n <= count)
    if outside:
        problems.append(Problem(LINES, "line number outside the file", f"lines {outside[:5]}"))
    both = sorted(quarantined & stored)
    if both:
        problems.append(
            Problem(
                LINES,
                "line both stored and quarantined (partly stored)",
                f"lines {both[:5]}",
                both[0],
            )
        )
    if len(stored) > summary["parsed_lines"]:
        problems.append(
            Problem(
                LINES,
                "more lines with stored rows than parsed lines",
                f"{len(stored)} lines have rows, {summary['parsed_lines']} parsed",
            )
        )
    return problems


def _check_line_texts(lines: list[str], outputs: FileOutputs) -> list[Problem]:
    problems = []
    for table, rows in outputs.rows.items():
        for row in rows:
            number = row.get("line_number")
            if "line" not in row or number is None or not 1 <= number <= len(lines):
                continue
            allowed = (
                quarantine_forms(lines[number - 1], number)
                if table == "quarantine"
                else {lines[number - 1]}
            )
            if row["line"] not in allowed:
                problems.append(
                    Problem(
                        VALUE,
                        f"{table}.line is not the physical line",
                        f"stored {_short(row['line'])}, line is {_short(lines[number - 1])}",
                        number,
                    )
                )
    return problems


# A line naming a coordinator logger the way log4j ends its lines, `(logger)`.
NAMES_COORDINATOR = re.compile(
    r"\((?:" + "|".join(re.escape(name) for name in COORDINATOR_LOGGERS) + r")\)"
)
# ... or a row left for its own date's run (bronze_batches: "rows of other dates").
COORDINATOR_NOTES = (NO_FACT, UNMATCHED_GROUP_LINE, UNKNOWN_LINE, "rows of other dates")


def _check_coordinator_lines(
    lines: list[str], summary: dict[str, Any], outputs: FileOutputs
) -> list[Problem]:
    """Issue 36: a line naming a coordinator logger is an event row, quarantined, or
    counted under one of the coordinator notes; never structural without a word (a
    trailing space or a cut-off line once made events vanish that way)."""
    kept = {q["line_number"] for q in outputs.rows.get("quarantine", [])}
    kept |= {r["line_number"] for _, r in _stored_rows(outputs)}
    unkept = [
        n
        for n, line in enumerate(lines, start=1)
        if n not in kept and NAMES_COORDINATOR.search(line)
    ]
    noted = sum(summary.get("notes", {}).get(note, 0) for note in COORDINATOR_NOTES)
    if len(unkept) <= noted:
        return []
    return [
        Problem(
            LINES,
            "coordinator lines structural without a note (silently dropped)",
            f"{len(unkept)} such lines, {noted} noted; e.g. {_short(lines[unkept[0] - 1])}",
            unkept[0],
        )
    ]


def _check_control(outputs: FileOutputs) -> list[Problem]:
    """No stored text (nor list of texts) holds a control character."""
    problems = []
    for table, row in _stored_rows(outputs):
        for column, value in row.items():
            texts = value if isinstance(value, list) else [value]
            bad = next((t for t in texts if isinstance(t, str) and UNPRINTED.search(t)), None)
            if bad is not None:
                problems.append(
                    Problem(
                        VALUE,
                        f"{table}.{column} holds a control character",
                        f"stored {_short(bad)}",
                        row.get("line_number"),
                    )
                )
    return problems


def _short(value: Any, most: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


# Describe views, topics, coordinator log: each value is a token of its line.


def _check_values(lines: list[str], outputs: FileOutputs) -> list[Problem]:
    problems = []
    text = "\n".join(lines)
    untraceable: set[str] = set()
    for table, row in _stored_rows(outputs):
        number = row.get("line_number")
        if number is None:
            untraceable.add(table)
            problems += _check_untraced_row(table, row, lines)
        elif 1 <= number <= len(lines):
            problems += [
                Problem(VALUE, check, detail, number)
                for check, detail in _row_mismatches(table, row, lines[number - 1], outputs)
            ]
        problems += [
            Problem(VALUE, f"negative {table}.{column} stored", repr(row[column]), number)
            for column in NOT_NEGATIVE.get(table, ())
            if _negative(row.get(column))
        ]
        if table == "brokers" and number is not None:
            problems += _broker_header_mismatch(row, lines[:number])
        topic_id = row.get("topic_id")
        if topic_id and not re.search(
            rf"TopicId[ \t]*:[ \t]*{re.escape(topic_id)}[ \t]*(?![^\t\n])", text
        ):
            problems.append(Problem(VALUE, f"{table}.topic_id not in the file", _short(topic_id)))
    if untraceable:
        problems.append(
            Problem(
                VALUE,
                f"rows without line_number ({', '.join(sorted(untraceable))})",
                "a value cannot be traced to its line; DESIGN.md's bronze tables all carry "
                "line_number",
            )
        )
    return problems


# Offsets, lags, counts and broker ids: Kafka prints `-` for an unknown one, never a
# negative number (issue 56).
NOT_NEGATIVE = {
    "offsets": ("current_offset", "log_end_offset", "lag", "start_offset", "partition"),
    "members": ("partition_count",),
    "group_states": ("member_count",),
    "topic_partitions": ("partition", "leader", "replicas", "isr"),
    "brokers": ("broker",),
    "partition_sizes": ("partition", "broker", "size_bytes"),
}


def _negative(value: Any) -> bool:
    if isinstance(value, list):
        return any(_negative(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def _check_untraced_row(table: str, row: dict[str, Any], lines: list[str]) -> list[Problem]:
    """A row without a line number must at least reproduce some line of the file."""
    misses = [list(_row_mismatches(table, row, line, None)) for line in lines]
    if not lines or any(not m for m in misses):
        return []
    nearest = min(range(len(lines)), key=lambda i: len(misses[i]))
    check, detail = misses[nearest][0]
    return [
        Problem(
            VALUE,
            f"{check} (no line reproduces the row)",
            f"{detail}; row {_short(_from_line(row), 160)}; nearest line {_short(lines[nearest])}",
        )
    ]


def _from_line(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in NOT_FROM_LINE}


def _row_mismatches(
    table: str, row: dict[str, Any], line: str, outputs: FileOutputs | None
) -> Iterator[tuple[str, str]]:
    """(check, detail) for each value of row that `line` does not spell."""
    if table == "partition_sizes":
        yield from _replica_mismatches(row, line)
        return
    for column, value in _from_line(row).items():
        if value is None:
            continue
        if column == "assignment":
            yield from _assignment_mismatches(row, line, outputs)
        elif column == "subscription" and row.get("subscription_inferred") is not False:
            continue  # inferred from the capture's offsets (DESIGN.md), not from the line
        elif column == "broker" and table == "brokers":
            continue  # from its block's header: _broker_header_mismatch
        elif column == "broker" and not _int_in(value, line):
            if _broker_from_path(row) != value:
                yield f"{table}.broker neither in the line nor the path", f"{value!r}"
        elif column == "logged_at":
            if _log_stamp(value) not in line:
                yield f"{table}.logged_at not the line's timestamp", f"{value.isoformat()}"
        elif column == "group_id" and not _text_in(value, line):
            if parse_capture_path(row["source_file"]).group != value:
                yield f"{table}.group_id neither in the line nor the path", f"{value!r}"
        elif isinstance(value, list):
            for element in value:
                if not _spelled(element, line):
                    yield f"{table}.{column}[] not in the line", f"element {element!r}"
        elif not _spelled(value, line):
            kind = "number" if isinstance(value, int) else "text"
            yield f"{table}.{column} ({kind}) not in the line", f"stored {_short(value)}"
    if table == "offsets":
        yield from _lag_mismatches(row, line)


def _broker_header_mismatch(row: dict[str, Any], above: list[str]) -> list[Problem]:
    """A broker's rack row: its broker is the last block header at or above its line."""
    headers = [h for h in above if h.startswith(("All configs for broker ", "Default configs"))]
    if headers and headers[-1] == f"All configs for broker {row['broker']} are:":
        return []
    last = headers[-1] if headers else "none"
    return [Problem(VALUE, "brokers.broker not its block's header", last, row["line_number"])]


def _replica_mismatches(row: dict[str, Any], line: str) -> Iterator[tuple[str, str]]:
    """A replica's row is an entry of the line's document, under its broker."""
    try:
        document = json.loads(line)
        entries = [
            (b["broker"], d["logDir"], p["partition"], p["size"], p["offsetLag"], p["isFuture"])
            for b in document["brokers"]
            for d in b["logDirs"]
            for p in d["partitions"]
        ]
    except (ValueError, TypeError, KeyError) as exc:
        yield "partition_sizes row from a line that is no document", repr(exc)[:80]
        return
    stored = (
        row["broker"],
        row["log_dir"],
        f"{row['topic']}-{row['partition']}",
        row["size_bytes"],
        row["offset_lag"],
        row["is_future"],
    )
    if stored not in entries:
        yield "partition_sizes row is no entry of its document", _short(stored)


def _spelled(value: Any, line: str) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return _int_in(value, line)
    if isinstance(value, str):
        return _text_in(value, line)
    return False


# Characters of ids, hosts and names: a value bordered by one of them on a side where it
# ends in one too was cut out of a longer value.
TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")


def _text_in(value: str, line: str) -> bool:
    """`value` as a whole value of the line, not a piece of a longer one (a host cut
    short, an id missing its tail). Kafka's own joins may border it: the 0.9/0.10 OWNER
    `client_/host`, the 0.10.2 glued `consumer-id/host` (`/` is no token character),
    and a sentence's final period after a log message's value."""
    if not value:
        return True  # an empty value spells nothing and changes nothing
    start = line.find(value)
    while start >= 0:
        end = start + len(value)
        before = line[start - 1] if start else " "
        after = line[end : end + 2]
        left = before not in TOKEN_CHARS or value[0] not in TOKEN_CHARS
        right = (
            not after
            or after[0] not in TOKEN_CHARS
            or value[-1] not in TOKEN_CHARS
            or after.startswith("_/")
            or (after[0] == "." and (len(after) == 1 or after[1] not in TOKEN_CHARS))
        )
        if left and right:
            return True
        start = line.find(value, start + 1)
    return False


def _lag_mismatches(row: dict[str, Any], line: str) -> Iterator[tuple[str, str]]:
    lag = row.get("lag")
    if lag is None:
        return
    if not _int_in(lag, line):
        yield "offsets.lag (number) not in the line", f"stored {lag!r}"


def _broker_from_path(row: dict[str, Any]) -> int | None:
    match = BROKER_IN_PATH.search(row.get("source_file") or "")
    return int(match.group(1)) if match else None


def _log_stamp(logged_at: dt.datetime) -> str:
    """As log4j printed it; the harness reads logs as UTC (no log_timezone)."""
    at = logged_at.astimezone(dt.UTC)
    return f"[{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d}]"


def _assignment_mismatches(
    row: dict[str, Any], line: str, outputs: FileOutputs | None
) -> Iterator[tuple[str, str]]:
    """Each pair as the line spells it; 3.8/3.9 print no topic (`(0,10)`), so there
    the topic comes from the same capture's offsets rows of that consumer."""
    owned = (
        {
            (o["topic"], o["partition"])
            for o in outputs.capture_offsets
            if (o["group_id"], o["consumer_id"], o["cluster"], o["captured_at"])
            == (row["group_id"], row["consumer_id"], row["cluster"], row["captured_at"])
        }
        if outputs is not None and TOPICLESS.search(line)
        else set()
    )
    for pair in row["assignment"]:
        topic, partition = pair["topic"], pair["partition"]
        if _pair_in(topic, partition, line):
            continue
        if (topic, partition) in owned and _int_in(partition, line):
            continue
        yield "members.assignment pair not in the line", f"{topic}-{partition}"


# jsonl: the stored rows of a line are the line's JSON, exactly and with their types.


class _Any:
    """An expected value that is not taken from the line (path, inference)."""

    def __repr__(self) -> str:
        return "<not from the line>"


class _Confused:
    """The line holds no value of the right type here: nothing may be stored."""

    def __init__(self, found: Any) -> None:
        self.found = found

    def __repr__(self) -> str:
        return f"<wrong JSON type: {_short(self.found, 60)}>"


ANY = _Any()


def _same(stored: Any, expected: Any) -> bool:
    if expected is ANY:
        return True
    if isinstance(expected, _Confused):
        return False
    if type(stored) is not type(expected):
        return False
    if isinstance(expected, list):
        return len(stored) == len(expected) and all(map(_same, stored, expected))
    if isinstance(expected, dict):
        return stored.keys() == expected.keys() and all(
            _same(stored[k], expected[k]) for k in expected
        )
    return stored == expected


def _exact_int(value: Any) -> Any:
    """A JSON integer; anything else (3.7, true, "3") is not one."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return _Confused(value)


def _exact_str(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else _Confused(value)


def _as_list(value: Any) -> list[Any] | _Confused:
    """`x or []` as jsonl.py reads optional lists; a non-list is a confusion."""
    if not value:
        return []
    return value if isinstance(value, list) else _Confused(value)


def _captured_at(snapshot: dict[str, Any]) -> Any:
    value = snapshot.get("captured_at")
    if not value:
        return ANY
    if not isinstance(value, str):
        return _Confused(value)
    try:
        at = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return _Confused(value)
    return at.astimezone(dt.UTC) if at.tzinfo else at.replace(tzinfo=dt.UTC)


def _expected_state(snapshot: dict[str, Any]) -> dict[str, Any]:
    coordinator = snapshot.get("coordinator") or {}
    members = _as_list(snapshot.get("members"))
    strategy = snapshot.get("assignment_strategy")
    if isinstance(coordinator, dict):
        host, ident = _exact_str(coordinator.get("host")), _exact_int(coordinator.get("id"))
    else:
        host = ident = _Confused(coordinator)
    return {
        "group_id": snapshot.get("group_id"),
        "cluster": _exact_str(snapshot["cluster"]) if snapshot.get("cluster") else ANY,
        "captured_at": _captured_at(snapshot),
        "coordinator_host": host,
        "coordinator_id": ident,
        # Kafka prints an empty strategy for a non-Stable group: stored as null.
        "assignment_strategy": None if strategy == "" else _exact_str(strategy),
        "state": _exact_str(snapshot.get("state")),
        "member_count": len(members) if isinstance(members, list) else members,
    }


def _expected_pair(value: Any) -> Any:
    if isinstance(value, dict) and value.keys() == {"topic", "partition"}:
        topic, partition = value["topic"], value["partition"]
    elif isinstance(value, list) and len(value) == 2:
        topic, partition = value
    else:
        return _Confused(value)
    topic, partition = _exact_str(topic), _exact_int(partition)
    if topic is None or partition is None:
        return _Confused(value)
    return {"topic": topic, "partition": partition}


def _expected_member(member: Any, common: dict[str, Any]) -> dict[str, Any] | _Confused:
    if not isinstance(member, dict):
        return _Confused(member)
    pairs = _as_list(member.get("assignment"))
    assignment = [_expected_pair(p) for p in pairs] if isinstance(pairs, list) else pairs
    subscription = member.get("subscription")
    if subscription is not None and not (
        isinstance(subscription, list) and all(isinstance(t, str) for t in subscription)
    ):
        subscription = _Confused(subscription)
    return {
        **common,
        "consumer_id": _exact_str(member.get("member_id")) if "member_id" in member else ANY,
        "group_instance_id": _exact_str(member.get("group_instance_id")),
        "host": _exact_str(member.get("host")),
        "client_id": _exact_str(member.get("client_id")),
        "partition_count": len(assignment) if isinstance(assignment, list) else assignment,
        "assignment": assignment,
        "subscription": ANY if subscription is None else subscription,
        "subscription_inferred": ANY if subscription is None else False,
    }


def _expected_offset(offset: Any, common: dict[str, Any]) -> dict[str, Any] | _Confused:
    if not isinstance(offset, dict):
        return _Confused(offset)
    current = _exact_int(offset.get("current_offset"))
    end = _exact_int(offset.get("log_end_offset"))
    exact = not isinstance(current, _Confused) and not isinstance(end, _Confused)
    return {
        **common,
        "topic": _exact_str(offset.get("topic")),
        "partition": _exact_int(offset.get("partition")),
        "current_offset": current,
        "log_end_offset": end,
        "lag": (end - current if None not in (current, end) else None) if exact else ANY,
        "consumer_id": _exact_str(offset.get("consumer_id")),
        "host": _exact_str(offset.get("host")),
        "client_id": _exact_str(offset.get("client_id")),
    }


def _expected_rows(snapshot: Any) -> dict[str, list[Any]] | _Confused:
    if not isinstance(snapshot, dict):
        return _Confused(snapshot)
    state = _expected_state(snapshot)
    common = {k: state[k] for k in ("group_id", "cluster", "captured_at")}
    members, offsets = _as_list(snapshot.get("members")), _as_list(snapshot.get("offsets"))
    return {
        "group_states": [state],
        "members": [_expected_member(m, common) for m in members]
        if isinstance(members, list)
        else [members],
        "offsets": [_expected_offset(o, common) for o in offsets]
        if isinstance(offsets, list)
        else [offsets],
    }


def _check_jsonl(lines: list[str], outputs: FileOutputs) -> list[Problem]:
    by_line: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for table, row in _stored_rows(outputs):
        by_line.setdefault(row["line_number"], {}).setdefault(table, []).append(row)
    problems = []
    for number, tables in sorted(by_line.items()):
        if not 1 <= number <= len(lines):
            continue
        try:
            snapshot = json.loads(lines[number - 1])
        except ValueError:
            problems.append(
                Problem(VALUE, "jsonl rows from a line that is not JSON", _short(lines[number - 1]))
            )
            continue
        expected = _expected_rows(snapshot)
        if isinstance(expected, _Confused):
            problems.append(Problem(VALUE, "jsonl rows from a non-object line", repr(expected)))
            continue
        for table in JSON_TABLES:
            problems += _compare_json_rows(table, tables.get(table, []), expected[table], number)
    return problems


def _compare_json_rows(
    table: str, stored: list[dict[str, Any]], expected: list[Any], number: int
) -> list[Problem]:
    if len(stored) != len(expected):
        return [
            Problem(
                VALUE,
                f"jsonl {table}: row count differs from the line's",
                f"{len(stored)} stored, the line has {len(expected)}",
                number,
            )
        ]
    problems = []
    for row, want in zip(stored, expected, strict=True):
        if isinstance(want, _Confused):
            problems.append(
                Problem(
                    VALUE, f"jsonl {table}: row stored from a wrong-typed value", repr(want), number
                )
            )
            continue
        for column, value in want.items():
            if not _same(row.get(column), value):
                problems.append(
                    Problem(
                        VALUE,
                        f"jsonl {table}.{column} differs from the JSON",
                        f"stored {_short(row.get(column))}, JSON {_short(value)}",
                        number,
                    )
                )
    return problems


def check_variant(files: dict[str, bytes], outputs: dict[str, FileOutputs]) -> list[Problem]:
    """check_file for every file of a capture; a crash (it stops the whole capture) once."""
    problems: list[Problem] = []
    for relative, data in files.items():
        found = check_file(data, outputs[relative])
        if found and found[0].kind == CRASH:
            return found
        problems += [dataclasses.replace(p, detail=f"{relative}: {p.detail}") for p in found]
    return problems


def describe_variant(variant: Variant, most: int = 600) -> str:
    data = repr(variant.data)
    if len(data) > most:
        data = data[: most - 3] + "..."
    return (
        f"seed {variant.seed.name!r} ({variant.seed.target})\n"
        f"mutations: {'; '.join(variant.mutations)}\n"
        f"bytes: {data}"
    )
