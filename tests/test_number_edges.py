"""Issue 56: every numeric field of every parser at the int32 and int64 edges and beyond.

Each field below is a one-row capture of its view (or a JSON snapshot, a log line) with
the field's value written in. A value its column holds and Kafka prints (an offset,
lag or count from 0, an epoch or id of either sign) is stored exactly, in its column;
any other (negative where Kafka prints `-`, past the column's width, past int64) gives
no row at all from that line, one quarantine row naming the column or the value, and a
file whose lines still add up. No value, however large, raises out of a parse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import (
    COORDINATOR_EVENTS,
    GROUP_STATES,
    MEMBERS,
    OFFSETS,
    TOPIC_PARTITIONS,
    ParseResult,
)

INT32, INT64 = 32, 64
MAX64 = (1 << 63) - 1
EDGES = sorted(
    {
        edge + delta
        for edge in (0, 1 << 31, -(1 << 31), 1 << 63, -(1 << 63), 1 << 64, -(1 << 64))
        for delta in (-2, -1, 0, 1)
    }
    | {10**30, -(10**30), 10**19, 999_999_999, 1_000_000_000, 9_999_999_999}
)
CAPTURE = "c/captures/2026-11-20T0900Z/view.txt"
EXPORT = "c/exports/2026-11-20T0900Z/groups.jsonl"
LOG = "c/logs/broker-1/server.log.2026-11-20-09"
LOGGER = "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
PREFIX = (
    "[2026-11-20 09:00:00,000] INFO [GroupCoordinator id={b} topic=__consumer_offsets partition=1]"
)


@dataclass(frozen=True)
class Field:
    """A numeric field: the file holding value `v` in it (`text(v)`), the value's line,
    where the value is stored (None: checked, not stored), its width, whether Kafka
    prints it negative, the row's line when it is another (a pre-release streams task
    line adds its tasks to the member row above it), and a value that spells "none"
    (stored as null: topics' `Leader: -1`)."""

    name: str
    relative: str
    text: Callable[[int], str]
    line: int
    table: str
    stored: Callable[[dict], int | None] | None
    bits: int
    signed: bool = False
    row_line: int | None = None
    none: int | None = None

    def holds(self, v: int) -> bool:
        if v == self.none:
            return True
        low = -(1 << (self.bits - 1)) if self.signed else 0
        return low <= v < 1 << (self.bits - 1)


def view(header: str, row: str) -> Callable[[int], str]:
    return lambda v: f"\n{header}\n{row.format(v=v, rest=MAX64 - v)}\n"


def column(name: str) -> Callable[[dict], int | None]:
    return lambda row: row[name]


def snapshot(**parts: object) -> Callable[[int], str]:
    """A jsonl snapshot, `{v}` in its JSON text standing for the value."""
    base = {
        "group_id": "g",
        "state": "Stable",
        "coordinator": {"host": "k:9092", "id": 1},
        "members": [{"member_id": "m", "assignment": [["t", 0]]}],
        "offsets": [{"topic": "t", "partition": 0, "current_offset": 1, "log_end_offset": 2}],
        **parts,
    }
    text = json.dumps(base)
    return lambda v: text.replace('"{v}"', str(v)).replace('"{rest}"', str(MAX64 - v)) + "\n"


OFFSETS_HEADER = (
    "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID"
)
MEMBERS_HEADER = "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS"
MEMBERS_4X = (
    "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT "
    "TARGET-EPOCH TARGET-ASSIGNMENT"
)
STATE_HEADER = (
    "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH"
)
SHARE_OFFSETS = "GROUP TOPIC PARTITION LEADER-EPOCH START-OFFSET LAG"
SHARE_MEMBERS = "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS MEMBER-EPOCH ASSIGNMENT"
SHARE_STATE = "GROUP COORDINATOR (ID) STATE GROUP-EPOCH ASSIGNMENT-EPOCH #MEMBERS"
STREAMS_OFFSETS = "GROUP TOPIC PARTITION CURRENT-OFFSET LEADER-EPOCH LOG-END-OFFSET OFFSET-LAG"
STREAMS_MEMBERS = (
    "GROUP TARGET-ASSIGNMENT-EPOCH TOPOLOGY-EPOCH MEMBER MEMBER-PROTOCOL MEMBER-EPOCH "
    "PROCESS CLIENT-ID ASSIGNMENTS"
)
TOPIC_HEADER = (
    "Topic: t\tTopicId: AAAAAAAAAAAAAAAAAAAAAA\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: "
)
TOPIC_ROW = "\tTopic: t\tPartition: {p}\tLeader: {l}\tReplicas: {r}\tIsr: {i}"


def topics(**values: str) -> Callable[[int], str]:
    fields = {"p": "0", "l": "1", "r": "1", "i": "1", **values}
    return lambda v: f"{TOPIC_HEADER}\n{TOPIC_ROW.format(**fields).replace('{v}', str(v))}\n"


def log_line(generation: str = "3", broker: str = "1") -> Callable[[int], str]:
    message = f"Stabilized group g generation {generation} with 4 members."
    line = f"{PREFIX.format(b=broker)} {message} {LOGGER}"
    return lambda v: line.replace("{v}", str(v)) + "\n"


def first_tp(name: str) -> Callable[[dict], int | None]:
    return lambda row: row[name][0]["partition"]


Stored = str | Callable[[dict], int | None] | None  # a column name, a getter, or unstored


def getter(stored: Stored) -> Callable[[dict], int | None] | None:
    return column(stored) if isinstance(stored, str) else stored


def other(
    name: str,
    relative: str,
    text: Callable[[int], str],
    line: int,
    table: str,
    stored: Stored,
    bits: int,
    **kw: Any,
) -> Field:
    return Field(name, relative, text, line, table, getter(stored), bits, **kw)


def describe(
    name: str, header: str, row: str, table: str, stored: Stored, bits: int, **kw: Any
) -> Field:
    """A describe view's field: its header, then its row (line 3)."""
    return other(name, CAPTURE, view(header, row), 3, table, stored, bits, **kw)


def exported(
    name: str, table: str, stored: Stored, bits: int, signed: bool = False, **parts: object
) -> Field:
    """A jsonl snapshot's field, `parts` replacing the sound snapshot's."""
    return Field(name, EXPORT, snapshot(**parts), 1, table, getter(stored), bits, signed)


SIGNED = {"signed": True}
MEMBER = {"member_id": "m"}
OFFSET = {"topic": "t", "partition": 0}
FIELDS = [
    # kafka-consumer-groups.sh --describe (offsets, members, state)
    describe("offsets PARTITION", OFFSETS_HEADER, "g t {v} 1 2 1 c-1 /h c", OFFSETS,
             "partition", INT32),
    describe("offsets CURRENT-OFFSET", OFFSETS_HEADER, f"g t 0 {{v}} {MAX64} {{rest}} c-1 /h c",
             OFFSETS, "current_offset", INT64),
    describe("offsets LOG-END-OFFSET", OFFSETS_HEADER, "g t 0 0 {v} - c-1 /h c", OFFSETS,
             "log_end_offset", INT64),
    describe("offsets LAG", OFFSETS_HEADER, "g t 0 0 {v} {v} c-1 /h c", OFFSETS, "lag", INT64),
    describe("members #PARTITIONS", MEMBERS_HEADER, "g c-1 /h c {v}", MEMBERS,
             "partition_count", INT32),
    describe("members CURRENT-EPOCH", MEMBERS_4X, "g c-1 /h c 1 {v} t:0 5 t:0", MEMBERS,
             "member_epoch", INT32, **SIGNED),
    describe("members TARGET-EPOCH", MEMBERS_4X, "g c-1 /h c 1 5 t:0 {v} t:0", MEMBERS,
             "target_epoch", INT32, **SIGNED),
    describe("members assignment", MEMBERS_4X, "g c-1 /h c 1 5 t:{v} 5 t:0", MEMBERS,
             first_tp("assignment"), INT32),
    describe("state COORDINATOR (ID)", STATE_HEADER, "g k:9092 ({v}) range Stable 1 2 2",
             GROUP_STATES, "coordinator_id", INT32, **SIGNED),
    describe("state #MEMBERS", STATE_HEADER, "g k:9092 (1) range Stable {v} 2 2", GROUP_STATES,
             "member_count", INT32),
    describe("state GROUP-EPOCH", STATE_HEADER, "g k:9092 (1) range Stable 1 {v} 2",
             GROUP_STATES, "group_epoch", INT32, **SIGNED),
    describe("state TARGET-ASSIGNMENT-EPOCH", STATE_HEADER, "g k:9092 (1) range Stable 1 2 {v}",
             GROUP_STATES, "target_assignment_epoch", INT32, **SIGNED),
    # kafka-share-groups.sh --describe --verbose
    describe("share PARTITION", SHARE_OFFSETS, "g t {v} 3 10 1", OFFSETS, "partition", INT32),
    describe("share LEADER-EPOCH", SHARE_OFFSETS, "g t 0 {v} 10 1", OFFSETS, None, INT32,
             **SIGNED),
    describe("share START-OFFSET", SHARE_OFFSETS, "g t 0 3 {v} 1", OFFSETS, "start_offset",
             INT64),
    describe("share LAG", SHARE_OFFSETS, "g t 0 3 10 {v}", OFFSETS, "lag", INT64),
    describe("share MEMBER-EPOCH", SHARE_MEMBERS, "g m /h c 1 {v} t:0", MEMBERS, None, INT32,
             **SIGNED),
    describe("share assignment", SHARE_MEMBERS, "g m /h c 1 3 t:{v}", MEMBERS,
             first_tp("assignment"), INT32),
    describe("share state GROUP-EPOCH", SHARE_STATE, "g k:9092  (1) Stable {v} 2 1",
             GROUP_STATES, "group_epoch", INT32, **SIGNED),
    describe("share state ASSIGNMENT-EPOCH", SHARE_STATE, "g k:9092  (1) Stable 2 {v} 1",
             GROUP_STATES, None, INT32, **SIGNED),
    describe("share state #MEMBERS", SHARE_STATE, "g k:9092  (1) Stable 2 2 {v}", GROUP_STATES,
             "member_count", INT32),
    # kafka-streams-groups.sh --describe --verbose, and the pre-release task lines
    describe("streams CURRENT-OFFSET", STREAMS_OFFSETS, f"g t 0 {{v}} 3 {MAX64} {{rest}}",
             OFFSETS, "current_offset", INT64),
    describe("streams LOG-END-OFFSET", STREAMS_OFFSETS, "g t 0 0 3 {v} {v}", OFFSETS,
             "log_end_offset", INT64),
    describe("streams OFFSET-LAG", STREAMS_OFFSETS, "g t 0 - - {v} {v}", OFFSETS, "lag", INT64),
    describe("streams LEADER-EPOCH", STREAMS_OFFSETS, "g t 0 0 {v} 5 5", OFFSETS, None, INT32,
             **SIGNED),
    describe("streams TARGET-ASSIGNMENT-EPOCH", STREAMS_MEMBERS,
             "g {v} 1 m streams 12 p c ACTIVE: 0:[0]; ", MEMBERS, None, INT32, **SIGNED),
    describe("streams TOPOLOGY-EPOCH", STREAMS_MEMBERS,
             "g 12 {v} m streams 12 p c ACTIVE: 0:[0]; ", MEMBERS, None, INT32, **SIGNED),
    describe("streams MEMBER-EPOCH", STREAMS_MEMBERS,
             "g 12 1 m streams {v} p c ACTIVE: 0:[0]; ", MEMBERS, None, INT32, **SIGNED),
    describe("streams task partition", STREAMS_MEMBERS,
             "g 12 1 m streams 12 p c ACTIVE: 0:[{v}]; ", MEMBERS, first_tp("tasks"), INT32),
    other("streams task line partition", CAPTURE,
          view("GROUP MEMBER PROCESS CLIENT-ID", "g m p c\nACTIVE-TASKS:: 0: [[{v}]] "), 4,
          MEMBERS, first_tp("tasks"), INT32, row_line=3),
    # kafka-topics.sh --describe
    other("topics Partition", CAPTURE, topics(p="{v}"), 2, TOPIC_PARTITIONS, "partition",
          INT32),
    other("topics Leader", CAPTURE, topics(l="{v}"), 2, TOPIC_PARTITIONS, "leader", INT32,
          none=-1),
    other("topics Replicas", CAPTURE, topics(r="1,{v}"), 2, TOPIC_PARTITIONS,
          lambda r: r["replicas"][1], INT32),
    other("topics Isr", CAPTURE, topics(i="{v}"), 2, TOPIC_PARTITIONS, lambda r: r["isr"][0],
          INT32),
    # broker logs
    other("log generation", LOG, log_line(generation="{v}"), 1, COORDINATOR_EVENTS,
          "generation", INT32, **SIGNED),
    other("log broker id", LOG, log_line(broker="{v}"), 1, COORDINATOR_EVENTS, "broker",
          INT32, **SIGNED),
    # fleet-capture's jsonl
    exported("jsonl coordinator.id", GROUP_STATES, "coordinator_id", INT32, True,
             coordinator={"host": "k:9092", "id": "{v}"}),
    exported("jsonl group_epoch", GROUP_STATES, "group_epoch", INT32, True, group_epoch="{v}"),
    exported("jsonl target_assignment_epoch", GROUP_STATES, "target_assignment_epoch", INT32,
             True, target_assignment_epoch="{v}"),
    exported("jsonl member_epoch", MEMBERS, "member_epoch", INT32, True,
             members=[{**MEMBER, "member_epoch": "{v}"}]),
    exported("jsonl target_epoch", MEMBERS, "target_epoch", INT32, True,
             members=[{**MEMBER, "target_epoch": "{v}"}]),
    exported("jsonl generation", MEMBERS, "generation", INT32, True,
             members=[{**MEMBER, "generation": "{v}"}]),
    exported("jsonl assignment partition", MEMBERS, first_tp("assignment"), INT32,
             members=[{**MEMBER, "assignment": [["t", "{v}"]]}]),
    exported("jsonl offsets partition", OFFSETS, "partition", INT32,
             offsets=[{**OFFSET, "partition": "{v}", "current_offset": 1}]),
    exported("jsonl current_offset", OFFSETS, "current_offset", INT64,
             offsets=[{**OFFSET, "current_offset": "{v}", "log_end_offset": MAX64}]),
    exported("jsonl log_end_offset", OFFSETS, "log_end_offset", INT64,
             offsets=[{**OFFSET, "current_offset": 0, "log_end_offset": "{v}"}]),
    exported("jsonl lag", OFFSETS, lambda r: MAX64 - r["lag"], INT64,
             offsets=[{**OFFSET, "current_offset": "{v}", "log_end_offset": MAX64}]),
]  # fmt: skip


def check(field: Field, v: int) -> None:
    """The one row of `field`'s line, stored exactly, or that line quarantined whole."""
    result = parse_capture(field.relative, field.text(v).encode())
    assert result.reconciles(), result.reconciliation()
    row_line = field.row_line or field.line
    rows = [r for r in result.records(field.table) if r["line_number"] == row_line]
    quarantined = [q for q in result.quarantine if q["line_number"] == field.line]
    others = {
        t: n for t in (*result.rows, *result.batches) if (n := _line_rows(result, t, field.line))
    }
    if field.holds(v):
        assert quarantined == [], quarantined
        assert len(rows) == 1, (result.quarantine, result.notes)
        if field.stored is not None:
            assert field.stored(rows[0]) == (None if v == field.none else v)
    else:
        assert others == {}, f"{v} stored in {others}"
        assert len(quarantined) == 1, (v, result.quarantine, others)
        reason = quarantined[0]["reason"]
        assert str(v)[:20] in reason or _named(field, reason), reason


def _line_rows(result: ParseResult, table: str, line: int) -> int:
    return sum(r["line_number"] == line for r in result.records(table))


def _named(field: Field, reason: str) -> bool:
    """Whether the reason names what went wrong where the value itself is not quoted
    (a value past 10 digits is no task list at all; a JSON number past int64 is named
    by its key)."""
    key = field.name.split(" ", 1)[1].split(".")[-1]
    words = (key, key.replace(" ", "-"), "task", "assignment", "partition")
    return any(word.casefold() in reason.casefold() for word in words)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_every_numeric_field_at_the_edges(field: Field):
    """Given each field at 0, ±2^31, ±2^63, ±2^64 (each ±1, ±2) and far past, Then a
    value its column holds is its row's, and any other quarantines that line whole."""
    for v in EDGES:
        check(field, v)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(FIELDS), v=st.integers(min_value=-(1 << 70), max_value=1 << 70))
def test_every_numeric_field_anywhere(field: Field, v: int):
    """Given any field and any integer up to ±2^70, Then the same holds."""
    check(field, v)


def test_the_edges_hold_both_outcomes_for_every_field():
    """The table above is no vacuous test: every field has edges it stores and edges it
    quarantines."""
    for field in FIELDS:
        assert any(field.holds(v) for v in EDGES) and not all(field.holds(v) for v in EDGES)
