"""Lines every kafka-consumer-groups.sh capture may hold besides its tables."""

from __future__ import annotations

import re

# Informational messages the tool prints per group (stdout or stderr, 0.9 .. 4.x).
GROUP_MESSAGES = [
    re.compile(r"^(?:Error: )?(?:The )?[Cc]onsumer group '(?P<group>.*)' does not exist\.$"),
    re.compile(r"^Consumer group '(?P<group>.*)' has no active members\.$"),
    re.compile(r"^(?:Warning: )?Consumer group '(?P<group>.*)' is rebalancing\.$"),
    re.compile(
        r"^Consumer group `(?P<group>.*)` (?:does not exist or is rebalancing|does not "
        r"exist|is rebalancing)\.$"
    ),
    re.compile(r"^Note: This will (?:only show|not show) information about .*$"),
]
TOOL_ERROR = re.compile(r"^Error: (?:Executing consumer group command failed due to )?(?P<msg>.+)$")
STACK_TRACE = re.compile(
    r"^(?:\s+at \S|\s*\.\.\. \d+ (?:more|common frames omitted)|Caused by: |Suppressed: |"
    r"(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)(?::.*)?$)"
)
# log4j (WARN lines interleaved with 2>&1), SLF4J noise.
LOG_NOISE = re.compile(
    r"^(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] )?(?:TRACE|DEBUG|INFO|WARN|"
    r"ERROR) |^SLF4J: |^log4j:"
)


def is_group_message(line: str) -> bool:
    return any(p.match(line) for p in GROUP_MESSAGES)


def tool_error(line: str) -> str | None:
    """The failure message of a tool error line, or None."""
    if is_group_message(line):
        return None
    match = TOOL_ERROR.match(line)
    return match.group("msg") if match else None


def is_stack_trace(line: str) -> bool:
    return bool(STACK_TRACE.match(line))


def is_log_noise(line: str) -> bool:
    return bool(LOG_NOISE.match(line))
