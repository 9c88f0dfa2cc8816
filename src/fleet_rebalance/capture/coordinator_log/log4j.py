"""log4j lines of a broker's server.log, bare or behind another tool's prefix.

A log shown through `docker-compose logs` (`kafka_1  | [...] INFO ...`) or grep over
several files (`server.log.2026-11-20-09:[...] INFO ...`) carries that prefix on every
line: the file's first log line decides which prefix (if any) its lines have.
"""

from __future__ import annotations

import re

LOG_START = r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (?P<level>[A-Z]+) "
LOG_BODY = LOG_START + r"(?P<msg>.*?)(?: \((?P<logger>[\w.$]+)\))?$"
# What other tools put before each log4j line: docker-compose's service column (the
# name padded with spaces, then `| `) and grep's file name when it searched several files.
# Neither can start with `[`, so a plain log line never reads as a prefixed one.
LINE_PREFIXES = {
    "docker-compose": r"[A-Za-z0-9][\w.-]* +\| ",
    "grep": r"[^\s:|\[][^\s:]*:",
}


def _by_prefix(pattern: str) -> dict[str | None, re.Pattern[str]]:
    """`pattern` at a line's start, bare (None) and behind each of LINE_PREFIXES."""
    prefixes: list[tuple[str | None, str]] = [(None, ""), *LINE_PREFIXES.items()]
    return {style: re.compile(f"^(?:{prefix})" + pattern, re.ASCII) for style, prefix in prefixes}


# The whole line, as the reader matches it, by prefix style.
LOG_LINES = _by_prefix(LOG_BODY)
# A line is a log line when it starts as one: the message and the optional logger match
# whatever follows on a line (a line holds no newline). Testing the start alone spares
# kind detection a scan of every log line's message.
LOG_STARTS = _by_prefix(LOG_START)


def is_log_line(line: str) -> bool:
    """A log4j line, bare or behind a docker-compose or grep prefix."""
    return any(pattern.match(line) for pattern in LOG_STARTS.values())


def line_prefix(text_lines: list[str]) -> str | None:
    """The prefix style of a log's lines, decided by its first log line: None (bare
    log4j lines), "docker-compose" or "grep"."""
    for line in text_lines:
        for style, pattern in LOG_STARTS.items():
            if pattern.match(line):
                return style
    return None
