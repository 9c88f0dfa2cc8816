"""kafka-consumer-groups.sh --describe: the offsets, members and state views.

Columns are mapped from each block's header line, never from fixed positions: widths
change per group block and values overflow them. Row values hold no spaces except in
the last column of some layouts (CLIENT-ID, OWNER, ASSIGNMENT) and in the coordinator
("host:port (id)"), so rows split on whitespace; a row with fewer values than its header
is quarantined, never shifted to fit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from fleet_rebalance.capture import lines as msg
from fleet_rebalance.capture.assignment_text import AssignmentTextError, parse_assignment
from fleet_rebalance.capture.result import (
    FAILED_CAPTURE,
    GROUP_STATES,
    MEMBERS,
    OFFSETS,
    ParseResult,
)

OFFSETS_VIEW, MEMBERS_VIEW, STATE_VIEW = "offsets", "members", "state"
KNOWN_COLUMNS = {
    OFFSETS_VIEW: {
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "OWNER",
        "LEADER-EPOCH",
    },
    MEMBERS_VIEW: {
        "GROUP",
        "CONSUMER-ID",
        "GROUP-INSTANCE-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        "ASSIGNMENT",
        "CURRENT-EPOCH",
        "CURRENT-ASSIGNMENT",
        "TARGET-EPOCH",
        "TARGET-ASSIGNMENT",
        "UPGRADED",
    },
    STATE_VIEW: {
        "GROUP",
        "COORDINATOR-(ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "#MEMBERS",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
    },
}
FREE_TEXT_LAST = {"CLIENT-ID", "OWNER", "ASSIGNMENT"}
MISSING = {"-", "unknown", "none", ""}
COORDINATOR_ID = re.compile(r"^\((-?\d+)\)$")


def header_view(line: str) -> tuple[str, list[str]] | None:
    """(view, column names) when line is a describe header; 0.9's is comma-separated."""
    text = line.strip()
    if ", " in text and text.startswith("GROUP, TOPIC"):
        columns = [c.strip().replace(" ", "-") for c in text.split(",")]
    else:
        columns = text.replace("COORDINATOR (ID)", "COORDINATOR-(ID)").split()
    names = set(columns)
    if "#PARTITIONS" in names and "CONSUMER-ID" in names:
        return MEMBERS_VIEW, columns
    if "COORDINATOR-(ID)" in names:
        return STATE_VIEW, columns
    if {"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET"} <= names:
        return OFFSETS_VIEW, columns
    return None


HEADER_WORDS = ("GROUP", "TOPIC", "COORDINATOR", "CONSUMER-ID")


def parse_describe(text_lines: list[str], result: ParseResult, context: dict[str, Any]) -> None:
    """Rows first: nearly every line is one, and the message and error classifiers only
    run for lines that do not parse as a row of the current header (a message never
    does: it fails the numeric columns or has the wrong number of values)."""
    view: str | None = None
    columns: list[str] = []
    comma = False
    in_error = False
    common = context["common"]
    for number, raw in enumerate(text_lines, start=1):
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if not stripped:
            result.structural += 1
            in_error = False
            continue
        if stripped.startswith(HEADER_WORDS):
            header = header_view(line)
            if header is not None:
                view, columns = header
                comma = ", " in stripped
                _note_unknown(view, columns, result)
                result.structural += 1
                in_error = False
                continue
        if view is None:
            problem = "row before any header line"
        elif not (in_error and line[:1] in "\t "):
            try:
                row = _ROW_BUILDERS[view](_split(stripped, columns, comma, view), context)
            except RowError as exc:
                problem = str(exc)
            else:
                if row is None:
                    result.structural += 1
                else:
                    row.update(common)
                    row["line_number"] = number
                    result.add(_TABLE[view], row)
                    result.row_lines += 1
                continue
        else:
            problem = "tool error stack trace"
        failure = msg.tool_error(stripped)
        if failure is not None:
            result.reject(number, line, f"tool error: {failure}")
            result.status = FAILED_CAPTURE
            in_error = True
        elif msg.is_stack_trace(line) or (in_error and line[:1] in "\t "):
            result.reject(number, line, "tool error stack trace")
            result.status = FAILED_CAPTURE
        elif msg.is_group_message(stripped) or msg.is_log_noise(stripped):
            result.structural += 1
        else:
            result.reject(number, line, problem)


class RowError(ValueError):
    """A row that does not fit its header; the message is the quarantine reason."""


def _note_unknown(view: str, columns: list[str], result: ParseResult) -> None:
    for column in columns:
        if column not in KNOWN_COLUMNS[view]:
            result.notes[f"unknown {view} column {column} (kept by name)"] += 1


def _split(line: str, columns: list[str], comma: bool, view: str) -> dict[str, str]:
    if comma:
        tokens = [t.strip() for t in line.split(",")]
    elif view == STATE_VIEW:
        return _split_state(line.split(), columns)
    else:
        tokens = line.split()
    if len(tokens) == len(columns) - 1 and "CONSUMER-ID" in columns and "HOST" in columns:
        tokens = _unglue_host(tokens, columns)
    if len(tokens) < len(columns):
        raise RowError(
            f"missing column: {len(tokens)} values for {len(columns)} columns ({' '.join(columns)})"
        )
    if len(tokens) > len(columns):
        if columns[-1] not in FREE_TEXT_LAST:
            raise RowError(
                f"{len(tokens)} values for {len(columns)} columns; a value with "
                "spaces in a middle column?"
            )
        tokens = [*tokens[: len(columns) - 1], " ".join(tokens[len(columns) - 1 :])]
    return dict(zip(columns, tokens, strict=True))


def _unglue_host(tokens: list[str], columns: list[str]) -> list[str]:
    """0.10.2-1.0 print CONSUMER-ID with %-50s and no separator: long ids touch the host."""
    i = columns.index("CONSUMER-ID")
    if columns[i + 1 : i + 2] == ["HOST"] and i < len(tokens) and "/" in tokens[i][1:]:
        consumer, host = tokens[i].split("/", 1)
        return [*tokens[:i], consumer, "/" + host, *tokens[i + 1 :]]
    return tokens


def _split_state(tokens: list[str], columns: list[str]) -> dict[str, str]:
    """GROUP, 'host:port (id)' (two tokens), then the rest; an empty ASSIGNMENT-STRATEGY
    (non-Stable classic groups, <= 3.9) leaves one value fewer."""
    values: dict[str, str] = {}
    position = 0
    if columns and columns[0] == "GROUP":
        if not tokens:
            raise RowError("empty state row")
        values["GROUP"] = tokens[0]
        position = 1
    end = next((i for i in range(position, len(tokens)) if COORDINATOR_ID.match(tokens[i])), None)
    if end is None:
        raise RowError("no coordinator '(id)' in state row")
    values["COORDINATOR-(ID)"] = " ".join(tokens[position : end + 1])
    rest = tokens[end + 1 :]
    after = columns[columns.index("COORDINATOR-(ID)") + 1 :]
    if len(rest) == len(after) - 1 and "ASSIGNMENT-STRATEGY" in after:
        rest = [
            *rest[: after.index("ASSIGNMENT-STRATEGY")],
            "",
            *rest[after.index("ASSIGNMENT-STRATEGY") :],
        ]
    if len(rest) != len(after):
        raise RowError(
            f"state row has {len(rest)} values after the coordinator for "
            f"{len(after)} columns ({' '.join(after)})"
        )
    values.update(zip(after, rest, strict=True))
    return values


def _value(values: dict[str, str], column: str) -> str | None:
    value = values.get(column)
    return None if value is None or value in MISSING else value


def _long(values: dict[str, str], column: str) -> int | None:
    return _number(values.get(column), column)


def _group(values: dict[str, str], context: dict[str, Any]) -> str:
    group = values.get("GROUP") or context.get("group")
    if not group:
        raise RowError(
            "no GROUP column in this layout and no group in the capture path "
            "(set capture.path_pattern with a (?P<group>...) part)"
        )
    return group


def _number(text: str | None, column: str) -> int | None:
    if text is None or text in MISSING:
        return None
    try:
        return int(text)
    except ValueError:
        raise RowError(f"{column} is not a number: {text!r}") from None


def _offsets_row(values: dict[str, str], context: dict[str, Any]) -> dict[str, Any] | None:
    get = values.get
    topic = get("TOPIC")
    if topic is None or topic in MISSING:
        return None  # 0.10.2-1.0 print a '-' row for a member without partitions
    partition = _number(get("PARTITION"), "PARTITION")
    if partition is None or partition < 0:
        raise RowError(f"invalid PARTITION {get('PARTITION')!r}")
    current = _number(get("CURRENT-OFFSET"), "CURRENT-OFFSET")
    end = _number(get("LOG-END-OFFSET"), "LOG-END-OFFSET")
    lag = _number(get("LAG"), "LAG")
    if current is not None and end is not None:
        if lag is not None and lag != end - current:
            raise RowError(
                f"LAG {lag} disagrees with LOG-END-OFFSET - CURRENT-OFFSET = {end - current}"
            )
        if end - current < 0:
            raise RowError(
                f"negative lag {end - current}: committed offset past the log end "
                "(log truncated?); kept out of the lag statistics"
            )
    elif lag is not None:
        raise RowError(f"LAG {lag} printed without both offsets")
    consumer, host, client = get("CONSUMER-ID"), get("HOST"), get("CLIENT-ID")
    owner = get("OWNER")
    if owner is not None:  # <= 0.10.1: clientId + "_" + clientHost
        owner = None if owner in MISSING else owner
        client, _, host = owner.rpartition("_") if owner and "_/" in owner else (owner, "", None)
        consumer = owner
    return {
        "group_id": _group(values, context),
        "topic": topic,
        "partition": partition,
        "current_offset": current,
        "log_end_offset": end,
        "lag": lag,
        "consumer_id": None if consumer in MISSING else consumer,
        "host": None if host in MISSING else host,
        "client_id": None if client in MISSING else client,
    }


def _members_row(values: dict[str, str], context: dict[str, Any]) -> dict[str, Any]:
    count = _long(values, "#PARTITIONS")
    text = values.get("CURRENT-ASSIGNMENT", values.get("ASSIGNMENT"))
    pairs: list[tuple[str, int]] | None = None
    groups: list[list[int]] | None = None
    if text is not None:
        try:
            pairs, groups = parse_assignment(text)
        except AssignmentTextError as exc:
            raise RowError(str(exc)) from None
    listed = len(pairs) if pairs is not None else sum(map(len, groups or []))
    if text is not None and count is not None and listed != count:
        raise RowError(f"assignment lists {listed} partitions, #PARTITIONS says {count}")
    return {
        "group_id": _group(values, context),
        "consumer_id": _value(values, "CONSUMER-ID"),
        "group_instance_id": _value(values, "GROUP-INSTANCE-ID"),
        "host": _value(values, "HOST"),
        "client_id": _value(values, "CLIENT-ID"),
        "partition_count": count,
        "assignment": (
            [{"topic": t, "partition": p} for t, p in pairs] if pairs is not None else None
        ),
        "subscription": None,
        "subscription_inferred": None,
        "assignment_groups": groups,
    }


def _state_row(values: dict[str, str], context: dict[str, Any]) -> dict[str, Any]:
    coordinator = values["COORDINATOR-(ID)"]
    host, _, ident = coordinator.rpartition(" ")
    strategy = _value(values, "ASSIGNMENT-STRATEGY")
    return {
        "group_id": _group(values, context),
        "coordinator_host": host.strip() or None,
        "coordinator_id": int(COORDINATOR_ID.match(ident).group(1)),
        "assignment_strategy": strategy,
        "state": _value(values, "STATE"),
        "member_count": _long(values, "#MEMBERS"),
    }


_ROW_BUILDERS = {OFFSETS_VIEW: _offsets_row, MEMBERS_VIEW: _members_row, STATE_VIEW: _state_row}
_TABLE = {OFFSETS_VIEW: OFFSETS, MEMBERS_VIEW: MEMBERS, STATE_VIEW: GROUP_STATES}


def iter_headers(text_lines: list[str]) -> Iterator[str]:
    for line in text_lines:
        header = header_view(line)
        if header:
            yield header[0]
