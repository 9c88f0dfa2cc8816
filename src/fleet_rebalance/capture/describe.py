"""kafka-consumer-groups.sh --describe: the offsets, members and state views.

Columns are mapped from each block's header line, never from fixed positions: widths
change per group block and values overflow them. Row values hold no spaces except in
the last column of some layouts (CLIENT-ID, OWNER, ASSIGNMENT) and in the coordinator
("host:port (id)"), so rows split on whitespace; a row with fewer values than its header
is quarantined, never shifted to fit. The tool's messages among the tables are
structural, or quarantined where the tool printed one instead of a row (lines.py). The
layouts without GROUP column (0.10.2-2.2) take the group from the capture path, else
from the tool's message right above the table when the file names one group only.
A row whose GROUP is `-` (the tool's no-value mark, no group id), whose numeric cell
(the 4.x epochs included) is no Kafka integer, whose UPGRADED is not true, false or `-`,
or that holds a control character is quarantined with the reason, never stored.
kafka-share-groups.sh and kafka-streams-groups.sh views and the group lists are
recognised here by their headers too; share_streams.py reads their rows.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture import lines as msg
from fleet_rebalance.capture import share_streams as ss
from fleet_rebalance.capture.assignment_text import AssignmentTextError, parse_assignment
from fleet_rebalance.capture.bulk_view import BulkView
from fleet_rebalance.capture.members_bulk import BulkMembers
from fleet_rebalance.capture.numbers import INT32, INT64, NumberError, parse_int
from fleet_rebalance.capture.result import (
    FAILED_CAPTURE,
    GROUP_STATES,
    MEMBERS,
    OFFSETS,
    ParseResult,
)
from fleet_rebalance.capture.text import BLANKS, UNPRINTED
from fleet_rebalance.capture.text import tokens as row_tokens

OFFSETS_VIEW, MEMBERS_VIEW, STATE_VIEW = "offsets", "members", "state"
# Columns the offsets view must have for the bulk path (GROUP may come from the path).
OFFSETS_REQUIRED = (
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
)
KNOWN_COLUMNS = {
    OFFSETS_VIEW: {"GROUP", *OFFSETS_REQUIRED, "OWNER", "LEADER-EPOCH", *ss.OFFSETS_COLUMNS},
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
        *ss.MEMBERS_COLUMNS,
    },
    STATE_VIEW: {
        "GROUP",
        "COORDINATOR-(ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "#MEMBERS",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        *ss.STATE_COLUMNS,
    },
}
FREE_TEXT_LAST = {"CLIENT-ID", "OWNER", "ASSIGNMENT", ss.STREAMS_TASKS}
# KIP-1099 (4.x --members --verbose): member epochs, `-` for classic groups.
EPOCH_COLUMNS = ("CURRENT-EPOCH", "TARGET-EPOCH")
UPGRADED = "UPGRADED"  # 4.x, mixed groups only (members.upgraded)
UPGRADED_VALUES = {"true": True, "false": False}
MISSING = {"-", ""}
OLD_MISSING = {*MISSING, "unknown", "none"}
COORDINATOR_ID = re.compile(r"^\((-?\d+)\)$", re.ASCII)
# Group states (FORMATS 1.1) whose classic groups print an empty ASSIGNMENT-STRATEGY.
NO_STRATEGY_STATES = {
    "Empty",
    "PreparingRebalance",
    "CompletingRebalance",
    "AwaitingSync",
    "Dead",
    "Unknown",
    "Assigning",
    "Reconciling",
}


def header_view(line: str) -> tuple[str, list[str]] | None:
    """(view, column names) when line is a describe header; 0.9's is comma-separated."""
    # Kafka pads each group's block to its own widths: cached on the words, not the line.
    header = _header_view(" ".join(line.split()))
    return None if header is None else (header[0], list(header[1]))


@functools.lru_cache(maxsize=1024)
def _header_view(text: str) -> tuple[str, tuple[str, ...]] | None:
    if ", " in text and text.startswith("GROUP, TOPIC"):
        columns = [c.strip().replace(" ", "-") for c in text.split(",")]
    else:
        columns = text.replace("COORDINATOR (ID)", "COORDINATOR-(ID)").split()
    names = set(columns)
    if "#PARTITIONS" in names and "CONSUMER-ID" in names:
        return MEMBERS_VIEW, tuple(columns)
    if {ss.STREAMS_MEMBER, "PROCESS", "CLIENT-ID"} <= names:
        return MEMBERS_VIEW, tuple(columns)
    if "COORDINATOR-(ID)" in names:
        return STATE_VIEW, tuple(columns)
    if {"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET"} <= names:
        return OFFSETS_VIEW, tuple(columns)
    if {"TOPIC", "PARTITION"} <= names and names & {ss.SHARE_OFFSETS, ss.STREAMS_OFFSETS}:
        return OFFSETS_VIEW, tuple(columns)
    if ss.is_list_header(columns):  # group lists feed group_states: the state kind
        return STATE_VIEW, tuple(columns)
    return None


HEADER_WORDS = ("GROUP", "TOPIC", "COORDINATOR", "CONSUMER-ID")
GROUP_FROM_MESSAGE = "rows without GROUP column attributed to the group the tool's message names:"


HEADER_START = r"^(?:GROUP|TOPIC|COORDINATOR|CONSUMER-ID)"


def parse_describe(text_lines: list[str], result: ParseResult, context: dict[str, Any]) -> None:
    """Lines are classified in bulk: blank lines, headers (each line's header is the
    latest one above it) and offsets rows of a common layout, which Arrow's kernels
    convert a layout at a time. Every other line (other views and shapes, messages, tool
    errors, rows the bulk pass rejects) takes the per-line path, in line order, with its
    own header; a blank line or a header ends a tool error's stack trace."""
    count = len(text_lines)
    if not count:
        return
    lines = pa.array(text_lines, pa.string())
    stripped = pc.utf8_trim(lines, BLANKS)
    blank = pc.equal(stripped, "").to_numpy(zero_copy_only=False)
    # Bulk kernels split on any whitespace, row_tokens on spaces and tabs: lines with
    # other characters than printable ASCII, spaces and tabs take the per-line path.
    plain = pc.invert(pc.match_substring_regex(stripped, r"[^\x20-\x7e\t]"))
    plain = plain.to_numpy(zero_copy_only=False)
    maybe = pc.match_substring_regex(stripped, HEADER_START).to_numpy(zero_copy_only=False)
    state = _DescribeState(result, context)
    bulk = {OFFSETS_VIEW: _FastOffsets(result, context), MEMBERS_VIEW: BulkMembers(result, context)}
    is_header = np.zeros(count, dtype=bool)
    headers: dict[int, tuple[str, list[str], bool]] = {}
    for index in np.flatnonzero(maybe):
        header = header_view(text_lines[index])
        if header is not None:
            is_header[index] = True
            comma = ", " in text_lines[index].strip()
            headers[index] = (header[0], header[1], comma)
            _note_unknown(header[0], header[1], result)
    result.structural += int(blank.sum()) + len(headers)
    warned = pc.match_substring(stripped, "is rebalancing.").to_numpy(zero_copy_only=False)
    result.rebalancing = {
        group
        for index in np.flatnonzero(warned)
        if (group := msg.rebalancing_group(text_lines[index].strip(BLANKS))) is not None
    }
    positions = np.arange(count)
    header_of = np.maximum.accumulate(np.where(is_header, positions, -1))
    segment = np.cumsum(blank | is_header)
    content = ~(blank | is_header)
    named = {} if context.get("group") else _groups_from_messages(text_lines, content, headers)
    for group in named.values():
        result.notes[f"{GROUP_FROM_MESSAGE} {group!r}"] += 1
    by_layout: dict[tuple[str, tuple[str, ...], str | None], list[int]] = {}
    for h, (view, columns, comma) in headers.items():
        group = named.get(h, context.get("group"))
        layout = bulk[view].layout_for(columns, comma, group) if view in bulk else None
        if layout:
            by_layout.setdefault((view, layout, group), []).append(h)
    bulk_headers = [h for owners in by_layout.values() for h in owners]
    eligible = content & plain & np.isin(header_of, bulk_headers)
    rejected: set[int] = set()
    for (view, layout, group), owners in by_layout.items():
        rows = np.flatnonzero(eligible & np.isin(header_of, owners))
        if len(rows):
            rejected |= bulk[view].convert(
                layout, group, pa.array(rows + 1, pa.int32()), stripped.take(pa.array(rows))
            )
    per_line = sorted(
        set(np.flatnonzero(content & ~eligible).tolist()) | {number - 1 for number in rejected}
    )
    previous_segment = None
    contexts = {h: {**context, "group": group} for h, group in named.items()}
    for index in per_line:
        owner = int(header_of[index])
        if owner >= 0:
            state.view, state.columns, state.comma = headers[owner]
        else:
            state.view, state.columns, state.comma = None, [], False
        state.context, state.owner = contexts.get(owner, context), owner
        if segment[index] != previous_segment:
            state.in_error = False
            previous_segment = segment[index]
        raw = text_lines[index]
        state.line(index + 1, raw, raw.strip(BLANKS))
    state.tasks.finish(result.notes)
    result.quarantine.sort(key=lambda q: q["line_number"] or 0)


def _groups_from_messages(
    text_lines: list[str], content: np.ndarray, headers: dict[int, tuple[str, list[str], bool]]
) -> dict[int, str]:
    """Header line -> group for the blocks of a layout without GROUP column (0.10.2 -
    2.2) that the tool's own message right above names: those releases describe one
    group per run and print `Consumer group 'x' has no active members.` (or `is
    rebalancing`, or the --zookeeper offset errors) just before its table. Only when
    the file's messages name exactly one group, and for headers whose columns are all
    known (an unknown one may be a damaged GROUP); else the rows keep the path hint."""
    groupless = [
        h
        for h, (view, columns, _) in headers.items()
        if "GROUP" not in columns and set(columns) <= KNOWN_COLUMNS[view]
    ]
    if not groupless:
        return {}
    found = {
        int(i): message
        for i in np.flatnonzero(content)
        if (message := msg.tool_message(text_lines[i].strip(BLANKS))) is not None
    }
    names = {msg.named_group(message) for message in found.values()} - {None}
    if len(names) != 1:
        return {}
    return {h: group for h in groupless if (group := _announced(h, found, text_lines))}


def _announced(header: int, found: dict[int, msg.Found], text_lines: list[str]) -> str | None:
    """The group the nearest message above a header line announces; blank lines, log
    noise and messages naming no group may sit between, nothing else."""
    for index in range(header - 1, -1, -1):
        line = text_lines[index].strip(BLANKS)
        if not line or msg.is_log_noise(line):
            continue
        message = found.get(index)
        group = msg.named_group(message)
        if message is None or (group is not None and not message[0].announces):
            return None
        if group is not None:
            return group
    return None


class _DescribeState:
    """The per-line path: any row shape, messages, tool errors, quarantine reasons."""

    def __init__(self, result: ParseResult, context: dict[str, Any]) -> None:
        self.result, self.context = result, context
        self.view: str | None = None
        self.columns: list[str] = []
        self.comma = False
        self.in_error = False
        self.owner = -1  # the line's header line (index), -1 before any
        self.tasks = ss.TaskLines()

    def line(self, number: int, line: str, stripped: str) -> None:
        result = self.result
        in_trace = self.in_error and line[:1] in "\t "
        if not in_trace and self._message(number, line, stripped):
            return
        if not in_trace and ss.STREAMS_MEMBER in self.columns and self._task_line(number, line):
            return
        if self.view is None:
            problem = "row before any header line"
        elif not in_trace:
            try:
                values = _split(stripped, self.columns, self.comma, self.view)
                if self.view == STATE_VIEW:
                    values[ROW_LINE] = stripped
                row = _ROW_BUILDERS[self.view](values, self.context)
                _printable(stripped)
            except ss.RowProblem as exc:
                problem = str(exc)
            else:
                if row is None:
                    result.structural += 1
                else:
                    row.update(self.context["common"])
                    row["line_number"] = number
                    result.add(_TABLE[self.view], row)
                    result.row_lines += 1
                    if self.view == MEMBERS_VIEW:
                        self.tasks.member(self.owner, row, self.columns)
                return
        else:
            problem = "tool error stack trace"
        failure = msg.tool_error(stripped)
        if failure is not None:
            result.reject(number, line, f"tool error: {failure}")
            result.status = FAILED_CAPTURE
            self.in_error = True
        elif msg.is_stack_trace(line) or in_trace:
            result.reject(number, line, "tool error stack trace")
            result.status = FAILED_CAPTURE
        elif msg.is_log_noise(stripped):
            result.structural += 1
        else:
            result.reject(number, line, problem)

    def _task_line(self, number: int, line: str) -> bool:
        """A pre-release streams task line: its tasks join the member row above (the
        line counts as parsed), or it is quarantined with the reason."""
        try:
            taken = self.tasks.take(self.owner, line.strip(BLANKS))
        except ss.RowProblem as exc:
            self.result.reject(number, line, str(exc))
            return True
        self.result.row_lines += taken
        return taken

    def _message(self, number: int, line: str, stripped: str) -> bool:
        """A tool message: structural (with a note when a row shows a value as unknown
        because of it), or quarantined when the tool printed it instead of a row."""
        found = msg.tool_message(stripped) or msg.tool_message(stripped, ss.MESSAGES)
        if found is None:
            return False
        message = found[0]
        if message.lost_row:
            self.result.reject(number, line, f"tool message: {stripped} ({message.lost_row})")
        else:
            self.result.structural += 1
            if message.note:
                self.result.notes[message.note] += 1
        return True


OFFSETS_FIELDS = (
    "group_id",
    "topic",
    "partition",
    "current_offset",
    "log_end_offset",
    "lag",
    "consumer_id",
    "host",
    "client_id",
    "line_number",
)


class _FastOffsets(BulkView):
    """The offsets view's common case in Arrow's kernels: split on whitespace, take the
    columns, check the numbers and the lag, cast. One pass per header layout per file."""

    table, required = OFFSETS, OFFSETS_REQUIRED

    def convert(
        self, layout: tuple[str, ...], group: str | None, numbers: pa.Array, lines: pa.Array
    ) -> set[int]:
        index = {name: i for i, name in enumerate(layout)}
        width = len(layout)
        tokens = pc.utf8_split_whitespace(lines)
        ok = pc.equal(pc.list_value_length(tokens), width)
        shaped = pc.all(ok).as_py()
        if not shaped:
            tokens, numbers_ok = tokens.filter(ok), numbers.filter(ok)
        else:
            numbers_ok = numbers
        bad = set() if shaped else set(numbers.filter(pc.invert(ok)).to_pylist())
        count = len(tokens)
        if not count:
            return bad

        def column(name: str) -> pa.Array:
            return pc.list_element(tokens, index[name])

        topic, part = column("TOPIC"), column("PARTITION")
        current, end, lag = (column(c) for c in ("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"))
        good = pc.and_(pc.not_equal(topic, "-"), _digits(part, 9))
        if "GROUP" in index:  # `-` is no group id: the per-line path says so
            good = pc.and_(good, pc.not_equal(column("GROUP"), "-"))
        for values in (current, end, lag):
            good = pc.and_(
                good,
                pc.or_(pc.equal(values, "-"), _signed_digits(values, 18)),
            )
        dash = pa.scalar(None, pa.string())
        current_i, end_i, lag_i = (
            pc.cast(pc.if_else(pc.and_(good, pc.not_equal(v, "-")), v, dash), pa.int64())
            for v in (current, end, lag)
        )
        both = pc.and_(pc.is_valid(current_i), pc.is_valid(end_i))
        consistent = pc.if_else(
            both,
            pc.and_(
                pc.greater_equal(end_i, current_i),
                pc.fill_null(pc.equal(lag_i, pc.subtract(end_i, current_i)), True),
            ),
            pc.is_null(lag_i),
        )
        good = pc.and_(good, consistent)
        if not pc.all(good).as_py():
            bad |= set(numbers_ok.filter(pc.invert(good)).to_pylist())

        def text(name: str) -> pa.Array:
            values = column(name)
            return pc.if_else(pc.equal(values, "-"), dash, values)

        group_ids = column("GROUP") if "GROUP" in index else pa.array([group] * count, pa.string())
        batch = pa.RecordBatch.from_arrays(
            [
                group_ids,
                topic,
                _int32(part, good),
                current_i,
                end_i,
                lag_i,
                text("CONSUMER-ID"),
                text("HOST"),
                text("CLIENT-ID"),
                numbers_ok,
            ],
            names=list(OFFSETS_FIELDS),
        ).filter(good)
        self.append(batch)
        return bad


def _digits(values: pa.Array, most: int) -> pa.Array:
    """1 to `most` ASCII digits without a leading zero (numbers.CANONICAL, and fits an
    int32/int64 cast); cheaper than a regex. Longer numbers take the per-line path."""
    return pc.and_(
        pc.and_(pc.string_is_ascii(values), pc.utf8_is_digit(values)),
        pc.and_(
            pc.less_equal(pc.utf8_length(values), most),
            pc.or_(pc.equal(values, "0"), pc.invert(pc.starts_with(values, "0"))),
        ),
    )


def _signed_digits(values: pa.Array, most: int) -> pa.Array:
    """_digits with an optional minus sign (never `-0`)."""
    negative = pc.starts_with(values, "-")
    magnitude = pc.if_else(negative, pc.utf8_slice_codeunits(values, 1), values)
    return pc.and_(_digits(magnitude, most), pc.invert(pc.and_(negative, pc.equal(magnitude, "0"))))


def _int32(values: pa.Array, good: pa.Array) -> pa.Array:
    return pc.cast(pc.if_else(good, values, pa.scalar("0", pa.string())), pa.int32())


class RowError(ss.RowProblem):
    """A row that does not fit its header; the message is the quarantine reason."""


def _printable(line: str) -> None:
    """A row holding a character the tool never prints (NUL, an escape sequence) is
    damaged: stored, the character would become part of an id."""
    control = UNPRINTED.search(line)
    if control is not None:
        raise RowError(f"control character {control.group()!r} in a row (Kafka prints none)")


def _note_unknown(view: str, columns: list[str], result: ParseResult) -> None:
    for column in columns:
        if column not in KNOWN_COLUMNS[view]:
            result.notes[f"unknown {view} column {column} (kept by name)"] += 1


def _split(line: str, columns: list[str], comma: bool, view: str) -> dict[str, str]:
    if comma:
        tokens = [t.strip(BLANKS) for t in line.split(",")]
        if len(tokens) > len(columns) and columns[-1] in FREE_TEXT_LAST:
            tokens = [t.strip(BLANKS) for t in line.split(",", len(columns) - 1)]
    elif view == STATE_VIEW and "COORDINATOR-(ID)" not in columns:
        return ss.split_list(row_tokens(line), columns)
    elif view == STATE_VIEW:
        return _split_state(row_tokens(line), columns)
    else:
        tokens = row_tokens(line)
    if len(tokens) == len(columns) - 1 and _empty_assignment(tokens, columns):
        tokens = [*tokens, ""]
    if len(tokens) == len(columns) - 1 and columns[-2:] == ["LEADER-EPOCH", ss.STREAMS_OFFSETS]:
        tokens = [*tokens[:-1], "", tokens[-1]]  # pre-release streams: LEADER-EPOCH ""
    if len(tokens) == len(columns) - 1 and "CONSUMER-ID" in columns and "HOST" in columns:
        tokens = _unglue_host(tokens, columns)
    if len(tokens) < len(columns):
        raise _missing_column(len(tokens), columns)
    if len(tokens) > len(columns):
        if columns[-1] not in FREE_TEXT_LAST:
            raise RowError(
                f"{len(tokens)} values for {len(columns)} columns; a value with "
                "spaces in a middle column?"
            )
        tokens = row_tokens(line, len(columns) - 1)  # the last value verbatim, spaces and all
    return dict(zip(columns, tokens, strict=True))


ROW_LINE = "\0line"  # a state row's text beside its values (share_streams.state_type)


def _empty_assignment(tokens: list[str], columns: list[str]) -> bool:
    """Whether a members row one value short printed an empty last column: streams
    members without tasks (ASSIGNMENTS ""), and share members without partitions in
    the layout only the share tool prints (MEMBER-EPOCH before ASSIGNMENT, #PARTITIONS
    0). The plain share layout is the consumer tool's too, whose empty ASSIGNMENT is
    `-`: a row short there may be a truncated one, so it is quarantined."""
    if columns[-1] == ss.STREAMS_TASKS:
        return True
    if columns[-2:] != [ss.SHARE_MEMBER_EPOCH, "ASSIGNMENT"]:
        return False
    return tokens[columns.index("#PARTITIONS")] == "0"


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
    if end - position > 1:  # Kafka prints host:port (id); more words are a shifted row
        raise RowError(
            f"coordinator is not 'host:port (id)': {' '.join(tokens[position : end + 1])!r}"
        )
    values["COORDINATOR-(ID)"] = " ".join(tokens[position : end + 1])
    rest = tokens[end + 1 :]
    after = columns[columns.index("COORDINATOR-(ID)") + 1 :]
    empty = _without_strategy(rest, after) if len(rest) == len(after) - 1 else None
    if empty is not None:
        rest = [*rest[: after.index(empty)], "", *rest[after.index(empty) :]]
    if len(rest) < len(after):
        raise _missing_column(position + 1 + len(rest), columns)
    if len(rest) > len(after):
        raise RowError(
            f"state row has {len(rest)} values after the coordinator for "
            f"{len(after)} columns ({' '.join(after)})"
        )
    values.update(zip(after, rest, strict=True))
    return values


def _without_strategy(rest: list[str], after: list[str]) -> str | None:
    """The column a state row one value short printed empty, or None: Kafka (<= 3.9)
    prints an empty ASSIGNMENT-STRATEGY only for a classic group that is not Stable, so
    the value in the STATE place must name such a state; the streams tool (4.4 +) an
    empty ASSIGNOR for a group without one, any state. Otherwise the row lost a value
    (a truncated `... range Stable`), and is not shifted to fit."""
    if "STATE" not in after:
        return None
    state = after.index("STATE")
    for column, states in (
        ("ASSIGNMENT-STRATEGY", NO_STRATEGY_STATES),
        (ss.STREAMS_ASSIGNOR, ss.GROUP_STATES),
    ):
        if column in after and after.index(column) < state and rest[state - 1] in states:
            return column
    return None


def _missing_column(values: int, columns: list[str]) -> RowError:
    """A row with fewer values than its header: truncated, or a value lost in the
    middle; which one cannot be told, so no value is read from it."""
    shown = " ".join(columns).replace("COORDINATOR-(ID)", "COORDINATOR (ID)")
    return RowError(f"missing column: {values} values for {len(columns)} columns ({shown})")


def _value(values: dict[str, str], column: str) -> str | None:
    value = values.get(column)
    return None if value is None or value in _missing(values) else value


def _group(values: dict[str, str], context: dict[str, Any]) -> str:
    if values.get("GROUP") == "-":
        raise RowError("GROUP is '-', the tool's placeholder for no value: no group id")
    group = values.get("GROUP") or context.get("group")
    if not group:
        raise RowError(
            "no GROUP column in this layout and no group in the capture path "
            "(set capture.path_pattern with a (?P<group>...) part)"
        )
    return group


def _number(values: dict[str, str], column: str, bits: int = INT64) -> int | None:
    text = values.get(column)
    if text is None or text in _missing(values):
        return None
    try:
        return parse_int(text, column, bits)
    except NumberError as exc:
        raise RowError(str(exc)) from None


def _missing(values: dict[str, str]) -> set[str]:
    """Spellings of "no value": `-` since 0.10.2; 0.9-0.10.1 (the OWNER layouts) also
    printed `unknown` for an offset and `none` for no owner. Elsewhere those words are
    text (a client may be called `none`)."""
    return OLD_MISSING if "OWNER" in values else MISSING


def _offsets_row(values: dict[str, str], context: dict[str, Any]) -> dict[str, Any] | None:
    if ss.SHARE_OFFSETS in values or ss.STREAMS_OFFSETS in values:
        return {"group_id": _group(values, context), **ss.offsets_row(values)}
    get = values.get
    missing = _missing(values)
    topic = get("TOPIC")
    if topic is None or topic in missing:
        return None  # 0.10.2-1.0 print a '-' row for a member without partitions
    partition = _number(values, "PARTITION", INT32)
    if partition is None or partition < 0:
        raise RowError(f"invalid PARTITION {get('PARTITION')!r}")
    current = _number(values, "CURRENT-OFFSET")
    end = _number(values, "LOG-END-OFFSET")
    lag = _number(values, "LAG")
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
        owner = None if owner in missing else owner
        # The host is InetAddress.toString(), "/10.0.0.9": the owner splits at its "_/".
        cut = owner.rfind("_/") if owner else -1
        client, host = (owner[:cut], owner[cut + 1 :]) if cut >= 0 else (owner, None)
        consumer = owner
    return {
        "group_id": _group(values, context),
        "topic": topic,
        "partition": partition,
        "current_offset": current,
        "log_end_offset": end,
        "lag": lag,
        "consumer_id": None if consumer in missing else consumer,
        "host": None if host in missing else host,
        "client_id": None if client in missing else client,
    }


def _members_row(values: dict[str, str], context: dict[str, Any]) -> dict[str, Any]:
    kind = ss.members_type(list(values))
    if kind == ss.STREAMS:
        return {"group_id": _group(values, context), **ss.streams_member(values)}
    if kind == ss.SHARE:
        return {"group_id": _group(values, context), **ss.share_member(values)}
    count = _number(values, "#PARTITIONS", INT32)
    if count is not None and count < 0:
        raise RowError(f"negative #PARTITIONS {count}")
    member_epoch, target_epoch = (_number(values, column, INT32) for column in EPOCH_COLUMNS)
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
        "member_epoch": member_epoch,
        "target_epoch": target_epoch,
        "upgraded": _upgraded(values),
    }


def _upgraded(values: dict[str, str]) -> bool | None:
    """UPGRADED, which 4.x prints only for a group with both classic and consumer members:
    MemberDescription.upgraded() as Java prints it (`true`, `false`), `-` if unknown."""
    text = values.get(UPGRADED)
    if text is None or text in MISSING:
        return None
    if text not in UPGRADED_VALUES:
        raise RowError(f"UPGRADED is {text[:40]!r}, not true, false or '-'")
    return UPGRADED_VALUES[text]


def _state_row(values: dict[str, str], context: dict[str, Any]) -> dict[str, Any]:
    line = values.pop(ROW_LINE, "")
    if "COORDINATOR-(ID)" not in values:  # a group list
        return {"group_id": _group(values, context), **ss.list_row(values)}
    coordinator = values["COORDINATOR-(ID)"]
    host, _, ident = coordinator.rpartition(" ")
    # The streams tool's ASSIGNOR (4.4 +) is the group's server-side assignor, as the
    # consumer tool's ASSIGNMENT-STRATEGY is for a consumer-protocol group.
    strategy = _value(values, "ASSIGNMENT-STRATEGY") or _value(values, ss.STREAMS_ASSIGNOR)
    _number(values, ss.SHARE_ASSIGNMENT_EPOCH, INT32)  # not stored; a bad one is damage
    return {
        "group_id": _group(values, context),
        "coordinator_host": host.strip() or None,
        "coordinator_id": _coordinator_id(ident),
        "assignment_strategy": strategy,
        "state": _value(values, "STATE"),
        "member_count": _number(values, "#MEMBERS", INT32),
        "group_type": ss.state_type(list(values), line),
        "group_epoch": _number(values, "GROUP-EPOCH", INT32),
        "target_assignment_epoch": _number(values, "TARGET-ASSIGNMENT-EPOCH", INT32),
    }


def _coordinator_id(ident: str) -> int:
    """The `(3)` of `kafka-3:9092 (3)`: a broker id, an int."""
    try:
        return parse_int(COORDINATOR_ID.match(ident).group(1), "COORDINATOR (ID)", INT32)
    except NumberError as exc:
        raise RowError(str(exc)) from None


_ROW_BUILDERS = {OFFSETS_VIEW: _offsets_row, MEMBERS_VIEW: _members_row, STATE_VIEW: _state_row}
_TABLE = {OFFSETS_VIEW: OFFSETS, MEMBERS_VIEW: MEMBERS, STATE_VIEW: GROUP_STATES}
