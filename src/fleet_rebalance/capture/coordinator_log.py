"""Group-coordinator lines of a broker's server.log (FORMATS 3), both coordinators.

Numbers (generation, epoch, broker id) are captured as whatever word stands in their
place and then read strictly (capture/numbers.py): a coordinator line with `generation
1_0` is quarantined, not read as generation 1 nor passed over as an unknown line.

Timestamps are the broker's local time as log4j printed them; they are read as UTC
unless the capture settings name another zone. Other lines (other loggers, stack traces,
coordinator messages that carry no rebalance fact) are counted as structural.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

from fleet_rebalance.capture.numbers import INT32, NumberError, parse_int
from fleet_rebalance.capture.result import COORDINATOR_EVENTS, ParseResult

LOG_LINE = re.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (?P<level>[A-Z]+) "
    r"(?P<msg>.*?)(?: \((?P<logger>[\w.$]+)\))?$",
    re.ASCII,
)
OLD_PREFIX = re.compile(r"^\[GroupCoordinator (?P<broker>[^\]\s]+)\]: ", re.ASCII)
NEW_PREFIX = re.compile(
    r"^\[GroupCoordinator id=(?P<broker>[^\]\s]+)(?: topic=\S+ partition=\d+)?\] ", re.ASCII
)
G = r"(?P<group>\S+?)"
EVENTS: list[tuple[str, re.Pattern]] = [
    (name, re.compile(pattern, re.ASCII))
    for name, pattern in [
        (
            "prepare_rebalance",
            rf"^Preparing to rebalance group {G} in state \S+ with old generation "
            r"(?P<generation>[^\s.]+)(?: \(__consumer_offsets-\d+\))? \(reason: "
            r"(?P<reason>.*)\)\.?$",
        ),
        (
            "prepare_rebalance",
            rf"^Preparing to re(?:balance|stabilize) group {G} with old generation "
            r"(?P<generation>[^\s.]+)(?: \(__consumer_offsets-\d+\))?$",
        ),
        (
            "stabilized",
            rf"^Stabilized group {G} generation (?P<generation>[^\s.]+)"
            r"(?: \(__consumer_offsets-\d+\))?(?: with (?P<members>\d+) members)?\.?$",
        ),
        (
            "assignment_received",
            rf"^Assignment received from leader(?: (?P<member>\S+))? for group "
            rf"{G} for generation (?P<generation>[^\s.]+)",
        ),
        ("group_empty", rf"^Group {G} with generation (?P<generation>[^\s.]+) is now empty"),
        (
            "member_left",
            rf"^Member MemberMetadata\(memberId=(?P<member>[^,]+),.*\) has left group {G}"
            r" through explicit `LeaveGroup`(?: request)?(?:; client reason: "
            r"(?P<reason>.*))?$",
        ),
        (
            "member_left",
            rf"^\[Group {G}\] Member (?P<member>\S+) has left group through explicit "
            r"`LeaveGroup` request(?:; client reason: (?P<reason>.*))?$",
        ),
        (
            "member_failed",
            rf"^Member (?P<member>\S+) in group {G} has failed, removing it from the "
            r"group\.?$",
        ),
        (
            "member_joined",
            rf"^Dynamic member with unknown member id joins group {G} in \S+ state\. "
            r"Created a new member id (?P<member>\S+?) and request",
        ),
        (
            "static_member_rejoined",
            rf"^Static member with groupInstanceId=(?P<instance>\S+) and "
            rf"unknown member id joins group {G} in \S+ state\. Replacing "
            r"previously mapped member (?P<member>\S+) with this",
        ),
        (
            "static_member_joined",
            rf"^Static member with groupInstanceId=(?P<instance>\S+) and unknown"
            rf" member id joins group {G} in \S+ state\. Created a new member id"
            r" (?P<member>\S+) for this member",
        ),
        (
            "member_fenced",
            r"^Request memberId=(?P<member>\S+) for static member with groupInstanceId="
            r"(?P<instance>\S+) is fenced by current memberId=\S+ during operation "
            r"(?P<reason>\S+)",
        ),
        ("member_joined", rf"^\[GroupId {G}\] Member (?P<member>\S+) joins the consumer group"),
        (
            "static_member_joined",
            rf"^\[GroupId {G}\] Static member (?P<member>\S+) with instance id "
            r"(?P<instance>\S+) joins the consumer group",
        ),
        (
            "static_member_rejoined",
            rf"^\[GroupId {G}\] Static member with instance id "
            r"(?P<instance>\S+) re-joins the consumer group using the consumer "
            r"protocol\. Created a new member (?P<member>\S+) to replace",
        ),
        ("epoch_bumped", rf"^\[GroupId {G}\] Bumped group epoch to (?P<generation>[^\s.]+)\.$"),
        (
            "target_assignment",
            rf"^\[GroupId {G}\] Computed a new target assignment for epoch "
            r"(?P<generation>[^\s.]+) with '(?P<reason>[^']+)' assignor",
        ),
        (
            "member_left",
            rf"^\[GroupId {G}\] (?:Static )?Member (?P<member>\S+)(?: with instance id "
            r"\S+)? (?:temporarily )?left the consumer group\.$",
        ),
        (
            "member_fenced",
            rf"^\[GroupId {G}\] Member (?P<member>\S+) fenced from the group because "
            r"(?P<reason>.*?)\.?$",
        ),
    ]
]
COORDINATOR_LOGGERS = (
    "kafka.coordinator.group.GroupCoordinator",
    "org.apache.kafka.coordinator.group.GroupMetadataManager",
)
BROKER_IN_PATH = re.compile(r"broker[-_]?(\d{1,10})(?!\d)", re.ASCII)


def is_log_line(line: str) -> bool:
    return bool(LOG_LINE.match(line))


def parse_coordinator_log(
    text_lines: list[str], result: ParseResult, context: dict[str, Any]
) -> None:
    zone = ZoneInfo(context.get("log_timezone") or "UTC")
    path_broker = _path_broker(context["common"]["source_file"])
    for number, raw in enumerate(text_lines, start=1):
        line = raw
        match = LOG_LINE.match(line)
        if match is None or match.group("logger") not in COORDINATOR_LOGGERS:
            result.structural += 1
            continue
        message = match.group("msg")
        prefix = OLD_PREFIX.match(message) or NEW_PREFIX.match(message)
        body = message[prefix.end() :] if prefix else message
        event = next(((name, m) for name, pattern in EVENTS if (m := pattern.match(body))), None)
        if event is None:
            result.structural += 1
            result.notes["coordinator lines without a rebalance fact"] += 1
            continue
        try:
            logged = dt.datetime.strptime(match.group("ts"), "%Y-%m-%d %H:%M:%S,%f")
            logged = logged.replace(tzinfo=zone).astimezone(dt.UTC)
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
        result.add(
            COORDINATOR_EVENTS,
            {
                "cluster": context["common"]["cluster"],
                "broker": broker_id if prefix else path_broker,
                "logged_at": logged,
                "event": name,
                "group_id": fields.get("group"),
                "generation": generation,
                "member_id": fields.get("member") or fields.get("instance"),
                "reason": fields.get("reason"),
                "line": line,
                "log_date": logged.date(),
                "source_file": context["common"]["source_file"],
                "line_number": number,
            },
        )
        result.row_lines += 1


def _path_broker(path: str) -> int | None:
    """The broker id a log's path names (`broker-3/`, `broker_03`), when it fits an int."""
    match = BROKER_IN_PATH.search(path)
    broker = int(match.group(1)) if match else None
    return broker if broker is not None and broker < 2**31 else None
