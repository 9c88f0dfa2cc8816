"""A describe row's text as values by column name, or the reason it does not fit.

Row values hold no spaces except in the last column of some layouts (CLIENT-ID, OWNER,
ASSIGNMENT) and in the coordinator ("host:port (id)"), so rows split on whitespace; a
row with fewer values than its header is quarantined, never shifted to fit. The few
shapes Kafka prints one value short (an empty last column, an empty strategy, 0.10.2's
glued CONSUMER-ID and HOST) are read as Kafka meant them.
"""

from __future__ import annotations

import re

from fleet_rebalance.capture import share_streams as ss
from fleet_rebalance.capture.describe.headers import STATE_VIEW, View
from fleet_rebalance.capture.text import BLANKS, UNPRINTED
from fleet_rebalance.capture.text import tokens as row_tokens

FREE_TEXT_LAST = {"CLIENT-ID", "OWNER", "ASSIGNMENT", ss.STREAMS_TASKS}
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
ROW_LINE = "\0line"  # a state row's text beside its values (share_streams.state_type)


class RowError(ss.RowProblem):
    """A row that does not fit its header; the message is the quarantine reason."""


def printable(line: str) -> None:
    """A row holding a character the tool never prints (NUL, an escape sequence) is
    damaged: stored, the character would become part of an id."""
    control = UNPRINTED.search(line)
    if control is not None:
        raise RowError(f"control character {control.group()!r} in a row (Kafka prints none)")


def split(line: str, columns: list[str], comma: bool, view: View) -> dict[str, str]:
    """Column name -> value of a row under its header; RowError when it does not fit."""
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
