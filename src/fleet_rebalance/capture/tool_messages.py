"""Lines the Kafka tools print besides their tables, by the releases that print them.

Read out of ConsumerGroupCommand.scala (0.9.0.1 .. 3.7), ConsumerGroupCommand.java
(3.8 .. 4.x) and TopicCommand (shared/FORMATS.md names the files). A tool message is
structural: it says why a table is missing or explains a value a row shows as unknown.
Only a message printed in place of a row the tool then left out is quarantined, as a
tool message, so the lost row shows. Tool failures (`Error: Executing consumer group
command failed due to ...` and the stack trace after it) make a failed capture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ToolMessage:
    """One message: its text, the releases that print it, and what it means for rows."""

    pattern: re.Pattern[str]
    releases: str
    # Printed right before the table of the group it names (a layout without GROUP
    # column can take the group from it, describe/message_groups.py).
    announces: bool = False
    # Why the line is quarantined: the tool printed it instead of a row.
    lost_row: str | None = None
    # Worth a note in ingested_files.reason: a row shows a value as unknown because of it.
    note: str | None = None


# A line's message and its match (the group it names, if any).
Found = tuple[ToolMessage, re.Match[str]]
OFFSET_NOT_FETCHED = "tool could not fetch a committed offset (its row shows none)"
# The tool's warning above a group it described mid-rebalance (0.10.2 .. 4.x, stderr).
REBALANCING = re.compile(r"^(?:Warning: )?Consumer group '(?P<group>.*)' is rebalancing\.$")
# kafka-consumer-groups.sh --describe, 0.9 .. 4.x. Groups are quoted '...' from 0.10.2
# (`...` before); `Error: ` is printError's prefix from 0.10.2.
CONSUMER_GROUP_MESSAGES = (
    # No such group (`The consumer group`) or state Dead: no table follows.
    ToolMessage(
        re.compile(r"^(?:Error: )?(?:The )?[Cc]onsumer group '(?P<group>.*)' does not exist\.$"),
        "0.10.2 .. 4.x (stdout)",
    ),
    ToolMessage(
        re.compile(r"^Consumer group '(?P<group>.*)' has no active members\.$"),
        "0.10.2 .. 4.x (stderr)",
        announces=True,
    ),
    ToolMessage(
        REBALANCING,
        "0.10.2 .. 4.x (stderr)",
        announces=True,
    ),
    ToolMessage(
        re.compile(
            r"^Consumer group `(?P<group>.*)` (?:does not exist or is rebalancing|does not "
            r"exist|is rebalancing)\.$"
        ),
        "0.9, 0.10.0 (`does not exist or is rebalancing`), 0.10.1; no table follows",
    ),
    ToolMessage(
        re.compile(r"^Note: This will (?:only show|not show) information about .*$"),
        "0.10.2 .. 1.1 (stderr, first line)",
    ),
    ToolMessage(
        re.compile(
            r"^The --new-consumer option is deprecated and will be removed in a future "
            r"major release\..*$"
        ),
        "1.0, 1.1 (stderr)",
    ),
    ToolMessage(
        re.compile(r"^No topic available for consumer group provided$"),
        "0.9 .. 0.10.1 (--zookeeper)",
    ),
    # The partition's row is still printed, its offset `unknown` (<= 0.10.1) or `-`.
    ToolMessage(
        re.compile(
            r"^Could not fetch offset from (?:zookeeper|kafka) for group (?P<group>.+) "
            r"partition \[.*\] due to .*\.$"
        ),
        "0.9 .. 0.10.1 (--zookeeper, between the header and the rows)",
        note=OFFSET_NOT_FETCHED,
    ),
    ToolMessage(
        re.compile(
            r"^Error: Could not fetch offset from (?:zookeeper|kafka) for group "
            r"'(?P<group>.*)' partition '\[.*\]' due to .*\.$"
        ),
        "0.10.2 .. 1.1 (--zookeeper, before the group's table)",
        announces=True,
        note=OFFSET_NOT_FETCHED,
    ),
    # No leader known for the partition: the tool prints no row for it.
    ToolMessage(
        re.compile(r"^(?:Error: )?No broker for partition '?(?P<partition>.*?)'?$"),
        "0.9 .. 0.10.1 (`t-0`), 0.10.2 .. 1.1 (`Error: ... 't-0'`), --zookeeper",
        lost_row="the tool printed no row for that partition",
    ),
)
# kafka-topics.sh --describe.
TOPIC_MESSAGES = (
    ToolMessage(re.compile(r"^Topic (?P<topic>\S+) doesn't exist!$"), "0.9 .. 2.8 (--zookeeper)"),
)
TOOL_ERROR = re.compile(
    r"^Error(?::| while executing (?:consumer group|topic|config) command(?: :)?) "
    r"(?:Executing consumer group command failed due to )?(?P<msg>.+)$"
)
STACK_TRACE = re.compile(
    r"^(?:\s+at \S|\s*\.\.\. \d+ (?:more|common frames omitted)|Caused by: |Suppressed: |"
    r"(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)(?::.*)?$)"
)
# log4j (WARN lines interleaved with 2>&1), SLF4J noise.
LOG_NOISE = re.compile(
    r"^(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] )?(?:TRACE|DEBUG|INFO|WARN|"
    r"ERROR) |^SLF4J: |^log4j:"
)


def tool_message(
    line: str, messages: tuple[ToolMessage, ...] = CONSUMER_GROUP_MESSAGES
) -> Found | None:
    """The message `line` (stripped) is, with its match; None for any other line."""
    for message in messages:
        match = message.pattern.match(line)
        if match:
            return message, match
    return None


def rebalancing_group(line: str) -> str | None:
    """The group a `Consumer group 'g' is rebalancing.` warning names (the tool prints
    it above the group's table when the group was mid-rebalance as it described it)."""
    match = REBALANCING.match(line)
    return match.group("group") if match else None


def named_group(found: Found | None) -> str | None:
    """The group a tool message names, if it names one."""
    return found[1].groupdict().get("group") if found is not None else None


def tool_error(line: str) -> str | None:
    """The failure message of a tool error line, or None (a tool message starting with
    `Error: ` is not a failure of the tool)."""
    if tool_message(line) is not None:
        return None
    match = TOOL_ERROR.match(line)
    return match.group("msg") if match else None


def is_stack_trace(line: str) -> bool:
    return bool(STACK_TRACE.match(line))


def is_log_noise(line: str) -> bool:
    return bool(LOG_NOISE.match(line))


def only_messages(text_lines: list[str]) -> bool:
    """Blank lines, tool messages and log noise only, one message at least: what the
    tools print for groups (or topics) they have no table for."""
    seen = False
    for line in text_lines:
        stripped = line.strip()
        if not stripped or is_log_noise(stripped):
            continue
        if tool_message(stripped) is None and tool_message(stripped, TOPIC_MESSAGES) is None:
            return False
        seen = True
    return seen
