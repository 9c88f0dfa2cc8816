"""A broker log read into coordinator_events rows, every line accounted for.

An EVENTS line (messages.py) is a row; a member line that names no group (a few 2.x
and classic group lines) is still a row, with no group_id. `member_pending` is the
first step of a KIP-394 join: the member got an id and must rejoin with it; it is not
in the group yet and no rebalance starts (the second JoinGroup is `member_joined`).

The other lines of the coordinator loggers stay structural, each counted in the
file's notes under one of three keys: a message known to carry no membership fact
(KNOWN_NO_FACT: loading, offsets expiration, ...), a line naming a group that matches
no pattern (a Kafka version or message this module does not know: its events are
missed, so the count shows in ingested_files.reason and the run's log), or a line of
an unknown form naming no group.

Numbers (generation, epoch, broker id) are captured as whatever word stands in their
place and then read strictly (capture/numbers.py): a coordinator line with `generation
1_0` is quarantined, not read as generation 1 nor passed over as an unknown line.

A coordinator line that cannot be read whole is quarantined with the reason, never
passed over as structural (issue 36: its event would vanish without a word): one that
does not end with its `(logger)` (cut off, as a log's last line being written is, or
followed by other text), one holding a control character (NUL), one naming a
coordinator logger that is no whole log4j line. Trailing blanks are no damage: the line
is read without them.

Timestamps are the broker's local time as log4j printed them; they are read as UTC
unless the capture settings name another zone. Lines of other loggers and stack traces
are structural. Behind a docker-compose or grep prefix (log4j.py) only the file's one
prefix is read past; the stored `line` is the line as it is in the file.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.coordinator_log.log4j import LOG_LINES, line_prefix
from fleet_rebalance.capture.coordinator_log.messages import (
    COORDINATOR_LOGGERS,
    EVENTS,
    KNOWN_NO_FACT,
    NAMES_COORDINATOR,
    NAMES_GROUP,
    NEW_PREFIX,
    OLD_PREFIX,
    UNPREFIXED_EVENTS,
)
from fleet_rebalance.capture.numbers import INT32, NumberError, parse_int
from fleet_rebalance.capture.result import COORDINATOR_EVENTS, ParseResult
from fleet_rebalance.capture.text import BLANKS, UNPRINTED

NOT_LOG4J = (
    "coordinator line that is not a whole log4j line `[timestamp] LEVEL message (logger)`"
    " (damaged timestamp or level, or another prefix): its event cannot be read"
)
CUT_OR_TRAILING = (
    "coordinator line that does not end with its (logger): cut off, followed by other "
    "text, or a log4j layout without %c; its event cannot be read whole"
)
NO_FACT = "coordinator lines without a rebalance fact"
UNMATCHED_GROUP_LINE = "coordinator lines naming a group that match no pattern"
UNKNOWN_LINE = "coordinator lines of an unknown form naming no group"
BROKER_IN_PATH = re.compile(r"broker[-_]?(\d{1,10})(?!\d)", re.ASCII)
SET_WRAPPER = re.compile(r"^(?:\w*Set\((?P<scala>.*)\)|\[(?P<java>.*)\])$", re.ASCII)


def parse_coordinator_log(
    text_lines: list[str], result: ParseResult, context: ParseContext
) -> None:
    """Parse a broker log's lines into `result` (the parser of kind coordinator_log)."""
    zone = ZoneInfo(context.get("log_timezone") or "UTC")
    path_broker = _path_broker(context["common"]["source_file"])
    style = line_prefix(text_lines)
    log_line = LOG_LINES[style]
    for number, line in enumerate(text_lines, start=1):
        # Trailing blanks (a shipper's padding, an editor) are no part of the event.
        match = log_line.match(line.rstrip(BLANKS))
        if match and style:
            result.notes[f"log lines read past a {style} prefix"] += 1
        damage = _damage(match) if match else _not_log4j(line)
        if damage is not None:
            result.reject(number, line, damage)
            continue
        if match is None or match.group("logger") not in COORDINATOR_LOGGERS:
            result.structural += 1
            continue
        message = match.group("msg")
        prefix = OLD_PREFIX.match(message) or NEW_PREFIX.match(message)
        body = message[prefix.end() :] if prefix else message
        event = next(((name, m) for name, pattern in EVENTS if (m := pattern.match(body))), None)
        if event is None:
            result.structural += 1
            result.notes[_unmatched_note(body)] += 1
            continue
        try:
            logged = log4j_time(match.group("ts")).replace(tzinfo=zone).astimezone(dt.UTC)
        except (ValueError, OverflowError):
            result.reject(number, line, f"invalid log timestamp {match.group('ts')!r}")
            continue
        name, fields = event[0], event[1].groupdict()
        try:
            broker_id = parse_int(prefix.group("broker"), "broker id", INT32) if prefix else None
            generation = fields.get("generation")
            generation = parse_int(generation, "generation", INT32) if generation else None
        except NumberError as exc:
            result.reject(number, line, str(exc))
            continue
        for member in _members(fields):
            result.add(
                COORDINATOR_EVENTS,
                {
                    "cluster": context["common"]["cluster"],
                    "broker": broker_id if prefix else path_broker,
                    "logged_at": logged,
                    "event": name,
                    "group_id": fields.get("group"),
                    "generation": generation,
                    "member_id": member,
                    "reason": fields.get("reason"),
                    "line": line,
                    "log_date": logged.date(),
                    "source_file": context["common"]["source_file"],
                    "line_number": number,
                },
            )
        result.row_lines += 1


def log4j_time(stamp: str) -> dt.datetime:
    """log4j's `yyyy-MM-dd HH:mm:ss,SSS` (LOG_BODY's ts: ASCII digits in place) as a naive
    datetime, read by position: strptime's value and its ValueError, without strptime's
    locale-aware regular expression, which cost more than the rest of an event's line."""
    return dt.datetime(
        int(stamp[0:4]),
        int(stamp[5:7]),
        int(stamp[8:10]),
        int(stamp[11:13]),
        int(stamp[14:16]),
        int(stamp[17:19]),
        int(stamp[20:23]) * 1000,
    )


def _damage(match: re.Match[str]) -> str | None:
    """Why a log4j line that is (or looks like) a coordinator line cannot be read: a
    control character in it, or an end that is not its `(logger)` (a line cut off, or
    text after the logger). Such a line is quarantined, never counted as a line without
    a fact: its event would be lost without a word."""
    message, logger = match.group("msg"), match.group("logger")
    coordinator = logger in COORDINATOR_LOGGERS or bool(NAMES_COORDINATOR.search(message))
    if logger is None:
        coordinator = coordinator or bool(
            OLD_PREFIX.match(message)
            or NEW_PREFIX.match(message)
            or UNPREFIXED_EVENTS.match(message)
        )
    if not coordinator:
        return None
    control = UNPRINTED.search(match.string)
    if control is not None:
        return f"control character {control.group()!r} in a coordinator log line"
    if logger not in COORDINATOR_LOGGERS:
        return CUT_OR_TRAILING
    return None


def _not_log4j(line: str) -> str | None:
    """Why a line that names a coordinator logger but is no log4j line (its timestamp or
    level damaged, another tool's prefix) is quarantined: its event would be lost."""
    if NAMES_COORDINATOR.search(line) is None:
        return None
    return NOT_LOG4J


def _members(fields: dict[str, str | None]) -> list[str | None]:
    """The member ids a line names: one (or none), or each member of a set removed at
    once, a row each."""
    listed = fields.get("member_set")
    if listed is None:
        return [fields.get("member") or fields.get("instance")]
    wrapped = SET_WRAPPER.match(listed)
    inner = next((part for part in wrapped.groups() if part is not None), "") if wrapped else ""
    return [member for member in inner.split(", ") if member] or [None]


def _unmatched_note(body: str) -> str:
    """The notes key a coordinator line that is no event is counted under."""
    if KNOWN_NO_FACT.match(body):
        return NO_FACT
    return UNMATCHED_GROUP_LINE if NAMES_GROUP.search(body) else UNKNOWN_LINE


def _path_broker(path: str) -> int | None:
    """The broker id a log's path names (`broker-3/`, `broker_03`), when it fits an int."""
    match = BROKER_IN_PATH.search(path)
    broker = int(match.group(1)) if match else None
    return broker if broker is not None and broker < 2**31 else None
