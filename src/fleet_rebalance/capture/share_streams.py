"""Share groups (KIP-932), streams groups (KIP-1071) and the group lists, as their tools
print them: the rows of the describe views that consumer groups' readers cannot take.

Read out of ShareGroupCommand.java, StreamsGroupCommand.java, GroupsCommand.java and
ConsumerGroupCommand.java of Kafka 4.1 - 4.4 (docs/formats-share-streams.md has the
formats and where each comes from). describe/ recognises the headers and calls these
builders for their rows; a row that does not fit is a RowProblem, quarantined with
the message. group_type says which kind of group a row is of where the capture says it:
by a header word only these tools print, or by the share tool's two spaces before the
coordinator's `(id)`; null where the header is the consumer tool's too.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from fleet_rebalance.capture.assignment_text import AssignmentTextError, parse_assignment
from fleet_rebalance.capture.numbers import INT32, INT64, NumberError, not_negative, parse_int
from fleet_rebalance.capture.tool_messages import ToolMessage
from fleet_rebalance.vocabulary import GroupType

# GroupType.toString (clients, 4.x): what TYPE columns print; Unknown says nothing.
PRINTED_TYPES = {kind.title(): kind for kind in GroupType}
UNKNOWN_TYPE = "Unknown"
# GroupState.toString (clients, 4.x), every group type's states.
GROUP_STATES = {
    "Unknown",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
    "NotReady",
}
MISSING = "-"  # MISSING_COLUMN_VALUE of both tools

# Header words only one of the new tools prints (describe.KNOWN_COLUMNS has them too).
SHARE_OFFSETS, STREAMS_OFFSETS = "START-OFFSET", "OFFSET-LAG"
STREAMS_MEMBER, STREAMS_TASKS = "MEMBER", "ASSIGNMENTS"
SHARE_MEMBER_EPOCH = "MEMBER-EPOCH"
SHARE_ASSIGNMENT_EPOCH = "ASSIGNMENT-EPOCH"  # share --state --verbose
STREAMS_ASSIGNOR = "ASSIGNOR"  # streams --state, 4.4 +
LIST_COLUMNS = {"GROUP", "TYPE", "STATE", "PROTOCOL"}
OFFSETS_COLUMNS = {SHARE_OFFSETS, STREAMS_OFFSETS, "LEADER-EPOCH"}
MEMBERS_COLUMNS = {
    STREAMS_MEMBER,
    "PROCESS",
    STREAMS_TASKS,
    "TARGET-ASSIGNMENT-EPOCH",
    "TOPOLOGY-EPOCH",
    "MEMBER-PROTOCOL",
    SHARE_MEMBER_EPOCH,
}
STATE_COLUMNS = {SHARE_ASSIGNMENT_EPOCH, STREAMS_ASSIGNOR, "TYPE", "PROTOCOL"}

# The share tool prints its coordinator as `host:port  (id)`, two spaces (4.1 - 4.4);
# the streams and consumer tools with one.
SHARE_COORDINATOR = re.compile(r"\S:\d+  \(-?\d+\)(?:\s|$)")

# What the tools print besides their tables, 4.1 - 4.4. `Error: ` is printError's.
MESSAGES = (
    ToolMessage(
        re.compile(r"^Error: (?:Share|Streams) group '(?P<group>.*)' does not exist\.$"),
        "4.1 .. 4.4 (stdout): state Dead, no table follows",
    ),
    ToolMessage(
        re.compile(r"^Share group '(?P<group>.*)' has no active members\.$"),
        "4.1 .. 4.4 (stderr): state Empty",
    ),
    ToolMessage(
        re.compile(r"^(?:Error: )?Streams group '(?P<group>.*)' has no active members\.$"),
        "4.1 .. 4.4 (stdout, printError: `Error: `); pre-release (stderr, without)",
    ),
    ToolMessage(
        re.compile(r"^Share group '(?P<group>.*)' has no offset information\.$"),
        "4.2 .. 4.4 (stdout): no offsets table follows",
    ),
)

TASK_KINDS = ("ACTIVE", "STANDBY", "WARMUP", "TARGET-ACTIVE", "TARGET-STANDBY", "TARGET-WARMUP")
TASK = re.compile(
    r"^(?P<sub>[^\s\[\];]+?):\[(?P<parts>(?:0|[1-9]\d{0,9})(?:,(?:0|[1-9]\d{0,9}))*)\];$"
)


# The pre-release layout (apache/kafka 023a7d58, in no release): after each member's row
# one line per kind, `ACTIVE-TASKS:: 0: [[0, 1],1: [[2]] ` (`ACTIVE-TASKS:: ] ` if none).
TASK_LINE = re.compile(
    r"^(?P<kind>(?:TARGET-)?(?:ACTIVE|STANDBY|WARMUP))-TASKS:: (?P<body>.*)\]$", re.ASCII
)
TASK_LINE_ITEM = re.compile(
    r"(?P<sub>[^\s:,\[\]]+): \[\[(?P<parts>(?:0|[1-9]\d{0,9})(?:, (?:0|[1-9]\d{0,9}))*)?\]"
)
TASK_LINE_KINDS = ("ACTIVE", "STANDBY", "WARMUP")
TARGET_TASK_LINE_KINDS = tuple(f"TARGET-{kind}" for kind in TASK_LINE_KINDS)


class RowProblem(ValueError):
    """A row that does not fit its header; the message is the quarantine reason."""


def group_type(text: str | None) -> str | None:
    """A group type as a capture spells it (GroupType's `Classic` or fleet-capture's
    `classic`), lower case; None for no value or `Unknown` (the broker did not say)."""
    if text is None or text.lower() == UNKNOWN_TYPE.lower():
        return None
    try:
        return GroupType(text.lower())
    except ValueError:
        raise RowProblem(
            f"unknown group type {text[:40]!r} (Kafka has {', '.join(GroupType)})"
        ) from None


def members_type(columns: list[str]) -> str | None:
    """The group type a members header says: MEMBER (streams) or MEMBER-EPOCH beside
    CONSUMER-ID (share); the share tool's plain header is the consumer tool's too."""
    if STREAMS_MEMBER in columns:
        return GroupType.STREAMS
    return GroupType.SHARE if SHARE_MEMBER_EPOCH in columns else None


def state_type(columns: list[str], line: str) -> str | None:
    """The group type of a state row: ASSIGNMENT-STRATEGY is the consumer tool's (type
    not said), ASSIGNOR or TARGET-ASSIGNMENT-EPOCH without it the streams tool's,
    ASSIGNMENT-EPOCH the share tool's; the plain `GROUP COORDINATOR (ID) STATE
    #MEMBERS` both print, the share tool with two spaces before `(id)`."""
    if "ASSIGNMENT-STRATEGY" in columns:
        return None
    if SHARE_ASSIGNMENT_EPOCH in columns:
        return GroupType.SHARE
    if STREAMS_ASSIGNOR in columns or "TARGET-ASSIGNMENT-EPOCH" in columns:
        return GroupType.STREAMS
    if set(columns) != {"GROUP", "COORDINATOR-(ID)", "STATE", "#MEMBERS"}:
        return None  # a column no tool prints (a damaged header): the layout says nothing
    return GroupType.SHARE if SHARE_COORDINATOR.search(line) else GroupType.STREAMS


def is_list_header(columns: list[str]) -> bool:
    """`GROUP TYPE PROTOCOL` (kafka-groups.sh --list), `GROUP TYPE [STATE]` and `GROUP
    STATE` (kafka-consumer-groups.sh --list --type/--state; --state of the others)."""
    return (
        len(columns) >= 2
        and columns[0] == "GROUP"
        and len(set(columns)) == len(columns)
        and set(columns) <= LIST_COLUMNS
    )


def number(values: dict[str, str], column: str, bits: int = INT64) -> int | None:
    text = values.get(column)
    if text is None or text in (MISSING, ""):  # "": pre-release streams LEADER-EPOCH
        return None
    try:
        return parse_int(text, column, bits)
    except NumberError as exc:
        raise RowProblem(str(exc)) from None


def _partition(values: dict[str, str]) -> int:
    partition = number(values, "PARTITION", INT32)
    if partition is None or partition < 0:
        raise RowProblem(f"invalid PARTITION {values.get('PARTITION')!r}")
    return partition


def _topic(values: dict[str, str]) -> str:
    topic = values.get("TOPIC")
    if not topic or topic == MISSING:
        raise RowProblem("no TOPIC in an offsets row (the tool prints one per partition)")
    return topic


def offsets_row(values: dict[str, str]) -> dict[str, Any]:
    """A share (START-OFFSET) or streams (OFFSET-LAG) offsets row, without group_id.

    Share: START-OFFSET is the share-partition start offset (the first record not yet
    acknowledged), no committed offset: it goes to start_offset and current_offset stays
    null, so no reader of current_offset can take it for a commit. LAG (4.2 +) as
    printed. Streams: OFFSET-LAG as printed; --verbose adds CURRENT-OFFSET (the
    group's commit, `-` for none) and LOG-END-OFFSET; without a commit the tool's lag is
    LOG-END-OFFSET minus the log start offset, so only lag <= LOG-END-OFFSET holds."""
    row: dict[str, Any] = {"topic": _topic(values), "partition": _partition(values)}
    number(values, "LEADER-EPOCH", INT32)  # not stored, but a bad one is a damaged row
    if SHARE_OFFSETS in values:
        start, lag = (_offset(values, column) for column in (SHARE_OFFSETS, "LAG"))
        row.update(start_offset=start, lag=lag, group_type=GroupType.SHARE)
        return row
    current, end = _offset(values, "CURRENT-OFFSET"), _offset(values, "LOG-END-OFFSET")
    lag = _offset(values, STREAMS_OFFSETS)
    if lag is None:
        raise RowProblem("OFFSET-LAG is '-': the streams tool always prints a number")
    if current is not None and (end is None or lag != end - current):
        raise RowProblem(
            f"OFFSET-LAG {lag} disagrees with LOG-END-OFFSET - CURRENT-OFFSET "
            f"({values.get('LOG-END-OFFSET')} - {current})"
        )
    if current is None and end is not None and lag > end:
        raise RowProblem(f"OFFSET-LAG {lag} past LOG-END-OFFSET {end} without a commit")
    row.update(current_offset=current, log_end_offset=end, lag=lag, group_type=GroupType.STREAMS)
    return row


def _offset(values: dict[str, str], column: str) -> int | None:
    """An offset or lag column: `-` for unknown, never negative (NumberError)."""
    return not_negative(number(values, column), column)


def share_member(values: dict[str, str]) -> dict[str, Any]:
    """A share --members row (either layout), without group_id."""
    count = number(values, "#PARTITIONS", INT32)
    if count is None or count < 0:
        raise RowProblem(f"invalid #PARTITIONS {values.get('#PARTITIONS')!r}")
    number(values, SHARE_MEMBER_EPOCH, INT32)  # not stored, but a bad one is damage
    text = values.get("ASSIGNMENT", "")
    try:
        pairs, groups = parse_assignment(text) if text else ([], None)
    except AssignmentTextError as exc:
        raise RowProblem(str(exc)) from None
    if pairs is None or groups is not None:
        raise RowProblem(f"share ASSIGNMENT not in the tool's `topic:0,1;t:2` form: {text[:60]!r}")
    if len(pairs) != count:
        raise RowProblem(f"assignment lists {len(pairs)} partitions, #PARTITIONS says {count}")
    return {
        "consumer_id": _text(values, "CONSUMER-ID"),
        "host": _text(values, "HOST"),
        "client_id": _text(values, "CLIENT-ID"),
        "partition_count": count,
        "assignment": [{"topic": t, "partition": p} for t, p in pairs],
        "group_type": GroupType.SHARE,
    }


def streams_member(values: dict[str, str]) -> dict[str, Any]:
    """A streams --members row, without group_id. Tasks are `subtopology:[partitions]`
    per kind, not topic partitions: they go to `tasks`; assignment and #partitions stay
    null (the view names no topic). PROCESS (the Streams process id), MEMBER-PROTOCOL
    and the epochs are checked, not stored (docs/formats-share-streams.md)."""
    for column in ("TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", SHARE_MEMBER_EPOCH):
        number(values, column, INT32)
    protocol = values.get("MEMBER-PROTOCOL")
    if protocol is not None and protocol not in (GroupType.CLASSIC, GroupType.STREAMS):
        raise RowProblem(f"MEMBER-PROTOCOL {protocol[:40]!r} is neither classic nor streams")
    member = _text(values, STREAMS_MEMBER)
    if member is None:
        raise RowProblem("no MEMBER id in a streams members row")
    return {
        "consumer_id": member,
        "host": None,
        "client_id": _text(values, "CLIENT-ID"),
        "partition_count": None,
        "assignment": None,
        "tasks": parse_tasks(values.get(STREAMS_TASKS, "")),
        "group_type": GroupType.STREAMS,
    }


def parse_tasks(text: str) -> list[dict[str, Any]]:
    """`ACTIVE: 0:[0,1]; 1:[2]; STANDBY: 0:[3]; ` (StreamsGroupCommand.prepareTaskType,
    4.1 +) as {kind, subtopology, partition} rows: kinds in the tool's order, each once
    and with one task at least (an empty kind is not printed); "" is no task at all."""
    tasks: list[dict[str, Any]] = []
    kind, previous, pending = None, -1, False
    for token in text.split():
        name = token[:-1]
        if token.endswith(":") and name in TASK_KINDS:
            position = TASK_KINDS.index(name)
            if position <= previous or pending:
                raise RowProblem(f"task kinds out of the tool's order or empty: {text[:80]!r}")
            kind, previous, pending = name.lower(), position, True
            continue
        match = TASK.match(token)
        if kind is None or match is None:
            raise RowProblem(f"not a task list `KIND: sub:[p,...]; ...`: {text[:80]!r}")
        for part in match.group("parts").split(","):
            partition = parse_int(part, "task partition", INT32)  # NumberError past 2^31
            tasks.append({"kind": kind, "subtopology": match.group("sub"), "partition": partition})
        pending = False
    if pending:
        raise RowProblem(f"task kind without tasks (the tool prints none): {text[:80]!r}")
    return tasks


def task_line(line: str) -> tuple[str, list[dict[str, Any]]] | None:
    """(kind, tasks) of a pre-release task line (stripped), None for another line:
    `KIND-TASKS:` + `: ` (the colon twice) + per task `sub: [` + List.toString of its
    partitions, joined by `,`, then `] ` (printTaskType then: the brackets do not pair)."""
    match = TASK_LINE.match(line)
    if match is None:
        return None
    kind, body = match.group("kind"), match.group("body")
    items = list(TASK_LINE_ITEM.finditer(body))
    if ",".join(item.group(0) for item in items) != body:
        raise RowProblem(f"not a task line `{kind}-TASKS:: sub: [[p, ...]]`: {line[:80]!r}")
    tasks: list[dict[str, Any]] = [
        {"kind": kind.lower(), "subtopology": item.group("sub"), "partition": int(part)}
        for item in items
        for part in filter(None, (item.group("parts") or "").split(", "))
    ]
    if any(part >= 1 << 31 for part in (t["partition"] for t in tasks)):
        raise RowProblem(f"task partition does not fit a 32-bit integer column: {line[:80]!r}")
    return kind, tasks


class TaskLines:
    """The pre-release streams layout's task lines, each added to the tasks of the
    member row above it in its block, in the tool's kind order; a member left without
    all its lines (a cut capture) keeps what was read, with a note."""

    def __init__(self) -> None:
        self.owner: int | None = None
        self.row: dict[str, Any] | None = None
        self.expected: list[str] = []
        self.cut = 0

    def member(self, owner: int, row: dict[str, Any], columns: list[str]) -> None:
        """A members row was stored: a streams one of the pre-release layout takes the
        task lines below it."""
        self._close()
        self.owner, self.row, self.expected = None, None, []
        if row.get("group_type") == GroupType.STREAMS and STREAMS_TASKS not in columns:
            verbose = "MEMBER-PROTOCOL" in columns
            self.owner, self.row = owner, row
            self.expected = [*TASK_LINE_KINDS, *(TARGET_TASK_LINE_KINDS if verbose else ())]

    def take(self, owner: int, line: str) -> bool:
        """Whether `line` is a task line, added to its member; RowProblem if it is one
        that fits no member."""
        found = task_line(line)
        if found is None:
            return False
        kind, tasks = found
        if self.row is None or owner != self.owner:
            raise RowProblem("task line without a streams member row above it in its block")
        if not self.expected or self.expected[0] != kind:
            raise RowProblem(f"{kind}-TASKS line out of the tool's order (or repeated)")
        self.expected.pop(0)
        self.row["tasks"].extend(tasks)
        return True

    def finish(self, notes: Counter) -> None:
        self._close()
        self.row, self.expected = None, []
        if self.cut:
            notes["streams members without all their task lines (tasks kept as read)"] += self.cut

    def _close(self) -> None:
        if self.row is not None and self.expected:
            self.cut += 1


def list_row(values: dict[str, str]) -> dict[str, Any]:
    """A group list row, without group_id: TYPE and STATE as the list says; PROTOCOL
    (the protocol type, `consumer` for classic and consumer groups) is not stored."""
    state = values.get("STATE")
    if state is not None and state not in GROUP_STATES:
        raise RowProblem(f"unknown group STATE {state[:40]!r}")
    kind = values.get("TYPE") or None
    if kind is not None and kind not in PRINTED_TYPES and kind != UNKNOWN_TYPE:
        raise RowProblem(f"unknown group TYPE {kind[:40]!r} (GroupType prints Classic, ...)")
    return {
        "coordinator_host": None,
        "coordinator_id": None,
        "assignment_strategy": None,
        "state": None if state == UNKNOWN_TYPE else state,
        "member_count": None,
        "group_type": group_type(kind),
    }


def split_list(tokens: list[str], columns: list[str]) -> dict[str, str]:
    """kafka-groups.sh prints an absent TYPE or PROTOCOL as "" (a shorter row): the
    value left is the TYPE when GroupType prints it, else the PROTOCOL."""
    if len(tokens) == len(columns):
        return dict(zip(columns, tokens, strict=True))
    if columns == ["GROUP", "TYPE", "PROTOCOL"] and len(tokens) in (1, 2):
        rest = tokens[1:]
        if rest and (rest[0] in PRINTED_TYPES or rest[0] == UNKNOWN_TYPE):
            return {"GROUP": tokens[0], "TYPE": rest[0], "PROTOCOL": ""}
        return {"GROUP": tokens[0], "TYPE": "", "PROTOCOL": rest[0] if rest else ""}
    raise RowProblem(f"{len(tokens)} values for {len(columns)} columns ({' '.join(columns)})")


def _text(values: dict[str, str], column: str) -> str | None:
    value = values.get(column)
    return None if value is None or value in (MISSING, "") else value
