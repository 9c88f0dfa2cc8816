"""Group-coordinator lines of a broker's server.log (FORMATS 3), both coordinators.

Every line of GroupCoordinator.scala (1.0 .. 3.9) and of the new coordinator (3.7 ..
4.x: GroupMetadataManager, classic.ClassicGroup) that records a member joining,
leaving, failing or being fenced, or a generation / epoch changing, is an event row
(EVENTS, read from each release's source; the event names are the values of
`coordinator_events.event`). A member line that names no group (a few 2.x and classic
group lines) is still a row, with no group_id. `member_pending` is the first step of a
KIP-394 join: the member got an id and must rejoin with it; it is not in the group yet
and no rebalance starts (the second JoinGroup is `member_joined`).

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
are structural.

A log shown through `docker-compose logs` (`kafka_1  | [...] INFO ...`) or grep over
several files (`server.log.2026-11-20-09:[...] INFO ...`) carries that prefix on every
line: the file's first log line decides which prefix (if any) its lines have, and only
that one is read past, line by line; the stored `line` is the line as it is in the file.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

from fleet_rebalance.capture.numbers import INT32, NumberError, parse_int
from fleet_rebalance.capture.result import COORDINATOR_EVENTS, ParseResult
from fleet_rebalance.capture.text import BLANKS, UNPRINTED

LOG_BODY = (
    r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (?P<level>[A-Z]+) "
    r"(?P<msg>.*?)(?: \((?P<logger>[\w.$]+)\))?$"
)
LOG_LINE = re.compile("^" + LOG_BODY, re.ASCII)
# What other tools put before each log4j line: docker-compose's service column (the
# name padded with spaces, then `| `) and grep's file name when it searched several files.
# Neither can start with `[`, so a plain log line never reads as a prefixed one.
LINE_PREFIXES = {
    "docker-compose": r"[A-Za-z0-9][\w.-]* +\| ",
    "grep": r"[^\s:|\[][^\s:]*:",
}
PREFIXED_LOG_LINES = {
    style: re.compile(f"^(?:{prefix})" + LOG_BODY, re.ASCII)
    for style, prefix in LINE_PREFIXES.items()
}
OLD_PREFIX = re.compile(r"^\[GroupCoordinator (?P<broker>[^\]\s]+)\]: ", re.ASCII)
NEW_PREFIX = re.compile(
    r"^\[GroupCoordinator id=(?P<broker>[^\]\s]+)(?: topic=\S+ partition=\d+)?\] ", re.ASCII
)
G = r"(?P<group>\S+?)"
# The whole word up to a blank or a sentence's final `.`: `generation 1.0.` is read as
# `1.0` (then refused as no integer), never as generation 1.
GEN = r"(?P<generation>\S+?)(?=\.?(?: |$))"
STATE = r"(?:\S+ state|state \S+)"  # `in Stable state`; the 3.7+ classic join: `in state Stable`
KIP848 = rf"\[GroupId {G}\]"
ANY_GROUP = r"\[GroupId \S+?\]"
CLIENT_REASON = r"(?:; client reason: (?P<reason>.*))?"
# A Scala Set (`Set(a, b)`, `HashSet(...)`) or a Java collection (`[a, b]`) of member ids.
MEMBER_SET = r"(?P<member_set>\w*Set\(.*\)|\[.*\])"
LEAVE_GROUP = r"through explicit `LeaveGroup` request"

EVENTS: list[tuple[str, re.Pattern]] = [
    (name, re.compile(pattern, re.ASCII))
    for name, pattern in [
        # -- generations of classic groups (both coordinators)
        (
            "prepare_rebalance",
            rf"^Preparing to rebalance group {G} in state \S+ with old generation {GEN}"
            r"(?: \(__consumer_offsets-\d+\))? \(reason: (?P<reason>.*)\)\.?$",
        ),
        (
            "prepare_rebalance",  # 2.0 and before: no state, no reason
            rf"^Preparing to re(?:balance|stabilize) group {G} with old generation {GEN}"
            r"(?: \(__consumer_offsets-\d+\))?$",
        ),
        (
            "stabilized",
            rf"^Stabilized group {G} generation {GEN}"
            r"(?: \(__consumer_offsets-\d+\))?(?: with (?P<members>\d+) members)?\.?$",
        ),
        (
            "assignment_received",
            rf"^Assignment received from leader(?: (?P<member>\S+))? for group "
            rf"{G} for generation {GEN}",
        ),
        ("group_empty", rf"^Group {G} with generation {GEN} is now empty"),
        # -- joins, old coordinator (2.3 .. 3.9) and classic groups of the new one
        (
            "member_pending",  # KIP-394 first JoinGroup (DEBUG in 2.4 .. 2.8)
            rf"^Dynamic member with unknown member id (?:re)?joins group {G} in {STATE}\. "
            r"Created a new member id (?P<member>\S+) and request(?:ing)? the member to "
            r"rejoin with this id\.$",
        ),
        (
            "member_joined",  # a JoinGroup that needs no member id (old clients)
            rf"^Dynamic [Mm]ember with unknown member id (?:re)?joins group {G} in {STATE}\. "
            r"Created a new member id (?P<member>\S+) (?:for this member and add|and added "
            r"the member) to the group\.$",
        ),
        (
            "member_joined",  # the second JoinGroup of a pending member
            rf"^(?:Pending dynamic member with id|Dynamic Member with specific member id) "
            rf"(?P<member>\S+) joins group {G} in \S+ state\. Adding to the group now\.$",
        ),
        (
            "static_member_joined",  # 2.5 .. 2.8
            rf"^Static Member with unknown member id joins group {G} in \S+ state\. "
            r"Created a new member id (?P<member>\S+) for this member and add to the group\.$",
        ),
        (
            "static_member_joined",  # 2.5 .. 2.8, after the line above; instance is Some(i)
            rf"^Adding new static member (?P<instance>\S+) to group {G} with member id "
            r"(?P<member>\S+?)\.$",
        ),
        (
            "static_member_joined",
            rf"^Static member with groupInstanceId=(?P<instance>\S+) and unknown member id "
            rf"joins group {G} in \S+ state\. Created a new member id (?P<member>\S+) for "
            r"this member and add(?:ed)? to the group\.$",
        ),
        (
            "static_member_rejoined",  # the old member id: the new one is not in the line
            rf"^Static member with groupInstanceId=(?P<instance>\S+) and unknown member id "
            rf"joins group {G} in \S+ state\. Replacing previously mapped member "
            r"(?P<member>\S+) with this groupInstanceId\.$",
        ),
        (
            "static_member_rejoined",  # 2.3 .. 2.4 name no group, 2.5 .. 2.8 do
            rf"^Static member (?P<instance>\S+) (?:of group {G} )?with unknown member id "
            r"rejoins, assigning new member id (?P<member>\S+), while old member (?:id )?"
            r"\S+ will be removed\.$",
        ),
        # -- leaves
        (
            "member_left",  # 1.0 .. 2.1 DEBUG, 2.2 .. 2.3 INFO
            rf"^Member (?P<member>\S+) in group {G} has left, removing it from the group$",
        ),
        (
            "member_left",  # 2.4 .. 2.8; the instance is None or Some(i)
            r"^Member\[group\.instance\.id (?P<instance>[^,\]]+), member\.id "
            rf"(?P<member>[^\]\s]+)\] in group {G} has left, removing it from the group$",
        ),
        ("member_left", rf"^Pending member (?P<member>\S+) is leaving group {G}\.$"),
        (
            "member_left",  # 3.0 .. 3.9
            rf"^Pending member with memberId=(?P<member>\S+) has left group {G} {LEAVE_GROUP}$",
        ),
        (
            "member_left",  # 3.0 .. 3.9 (3.0/3.1: `... request`, 3.2+: client reason)
            rf"^Member MemberMetadata\(memberId=(?P<member>[^,]+),.*\) has left group {G}"
            r" through explicit `LeaveGroup`(?: request)?" + CLIENT_REASON + "$",
        ),
        (
            "member_left",  # new coordinator, classic members (group spelled two ways)
            rf"^\[Group(?:Id)? {G}\] (?:(?:Pending|Dynamic|Static) )?[Mm]ember (?P<member>\S+)"
            rf"(?: with instance id (?P<instance>\S+))? has left group {LEAVE_GROUP}"
            + CLIENT_REASON
            + "$",
        ),
        # -- failures
        (
            "member_failed",
            rf"^Member (?P<member>\S+) in group {G} has failed, removing it from the group\.?$",
        ),
        (
            "member_failed",  # a pending member that never sent its second JoinGroup
            rf"^Pending member (?P<member>\S+) in group {G} has been removed after session "
            r"timeout expiration\.$",
        ),
        (
            "member_failed",  # one row per member of the set
            rf"^Group {G} (?P<reason>removed? dynamic members who haven't joined): "
            + MEMBER_SET
            + "$",
        ),
        (
            "member_failed",  # DEBUG, 2.8.2 +
            rf"^Group {G} (?P<reason>removed members who haven't sent their sync requests?):"
            r" " + MEMBER_SET + "$",
        ),
        (
            "member_failed",  # GroupMetadata (2.3 .. 3.9), ClassicGroup: no group named
            r"^Group leader \[member(?:\.id|Id): (?P<member>[^,\]\s]+), group(?:\.instance\."
            r"id|InstanceId): [^\]]*\] (?P<reason>failed to join before (?:the )?rebalance "
            r"timeout)",
        ),
        # -- fenced static members
        (
            "member_fenced",  # 3.0 + (GroupCoordinator), ClassicGroup (`existing`, no group)
            r"^Request memberId=(?P<member>\S+) for static member with groupInstanceId="
            r"(?P<instance>\S+) is fenced by (?:current|existing) memberId=\S+ during "
            r"operation (?P<reason>\S+)$",
        ),
        (
            "member_fenced",  # GroupMetadata 2.3 .. 2.8: no group named
            r"^given member\.id (?P<member>\S+) is identified as a known static member "
            r"[^,\s]+, ?but not matching the expected member\.id \S+?(?: during "
            r"(?P<reason>\S+), will respond with instance fenced error)?$",
        ),
        # -- KIP-848 (and share / streams) groups of the new coordinator
        (
            "member_pending",  # a classic member joining a consumer group
            rf"^{KIP848} Dynamic member with unknown member id joins the consumer group\. "
            r"Created a new member id (?P<member>\S+) and requesting the member to rejoin "
            r"with this id\.$",
        ),
        (
            "member_joined",
            rf"^{KIP848} Member (?P<member>\S+) joins the (?:consumer|share) group"
            r"(?: using the \S+ protocol)?\.$",
        ),
        (
            "member_joined",
            rf"^{KIP848}\[MemberId (?P<member>\S+?)\] Member joins the streams group\.$",
        ),
        (
            "static_member_joined",
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) "
            r"joins the consumer group(?: using the \S+ protocol)?\.$",
        ),
        (
            "static_member_rejoined",  # 3.7
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) "
            r"re-joins the consumer group\.$",
        ),
        (
            "static_member_rejoined",  # 3.8: `with unknown member id and instance id`
            rf"^{KIP848} Static member with (?:unknown member id and )?instance id "
            r"(?P<instance>\S+) re-joins the consumer group(?: using the \S+ protocol)?\. "
            r"Created a new member (?P<member>\S+) to replace the existing member \S+?\.$",
        ),
        (
            "epoch_bumped",  # 4.1 + add the metadata hash; streams add more
            rf"^{KIP848}(?:\[MemberId (?P<member>\S+?)\])? Bumped (?:streams )?group epoch to "
            rf"{GEN}(?: with .*)?\.$",
        ),
        (
            "target_assignment",
            rf"^{KIP848} Computed a new target assignment for epoch {GEN} with "
            r"'(?P<reason>[^']+)' assignor",
        ),
        (
            "member_left",
            rf"^{KIP848} (?:Static [Mm]ember|Member) (?P<member>\S+)(?: with instance id \S+)?"
            r" (?:(?P<reason>temporarily) )?left the (?:consumer|share) group\.$",
        ),
        (
            "member_left",
            rf"^{KIP848}\[MemberId \S+?\] Member (?P<member>\S+) left the streams group\.$",
        ),
        # -- streams groups' static members (4.1 +, read from the 4.4 coordinator jar)
        (
            "static_member_joined",
            rf"^{KIP848}\[MemberId \S+?\] Static member (?P<member>\S+) with instance id "
            r"(?P<instance>\S+) joins the streams group\.$",
        ),
        (
            "static_member_rejoined",
            rf"^{KIP848}\[MemberId \S+?\] Static member with instance id (?P<instance>\S+) "
            r"re-joins the streams group using the \S+ protocol\. Created a new member "
            r"(?P<member>\S+) to replace the existing member \S+?\.$",
        ),
        (
            "member_left",
            rf"^{KIP848}\[MemberId \S+?\] Static member (?P<member>\S+) with instance id "
            r"(?P<instance>\S+) (?:(?P<reason>temporarily) )?left the streams group\.$",
        ),
        (
            "member_fenced",
            rf"^{KIP848} (?:Streams )?[Mm]ember (?P<member>\S+) fenced from the group because "
            r"(?P<reason>.*?)\.?$",
        ),
        (
            "member_fenced",  # a static member's request refused (FENCED_INSTANCE_ID)
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) is "
            r"fenced by existing member \S+?\.$",
        ),
        (
            "member_fenced",  # UNRELEASED_INSTANCE_ID (`is is owned` up to 4.0)
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) "
            r"cannot join the group because (?P<reason>the instance id is (?:is )?owned by "
            r"member \S+?)\.$",
        ),
    ]
]

# Coordinator messages that carry no membership or generation fact (every release's
# INFO/WARN/ERROR ones, and the DEBUG ones a debug-enabled broker prints), matched at
# the start of the message.
KNOWN_NO_FACT = re.compile(
    "^(?:"
    + "|".join(
        [
            # GroupCoordinator.scala 1.0 .. 3.9
            r"(?:Starting up|Startup complete|Shutting down|Shutdown complete)\.$",
            r"(?:Loading|Unloading) group metadata for \S+ with generation ",
            r"(?:Elected as|Resigned as) the group coordinator for partition ",
            r"Failed to (?:write empty|persist) metadata for group ",
            r"The following groups were deleted: ",
            r"The following offsets of the group \S+ were deleted: ",
            r"Removed \d+ offsets associated with deleted partitions: ",
            r"Attempt to add rejoining member \S+ of group \S+ in unexpected group state ",
            r"Member id \S+ was not found in \S+ during heartbeat (?:expiration|completion)",
            r"Received notification of heartbeat expiration for member \S+ after group ",
            r"Static member (?:joins during \S+ stage|which joins during Stable stage and "
            r"doesn't affect) ",
            r"Group \S+ is dead, skipping rebalance stage",
            r"Group \S+ could not complete rebalance because no members rejoined",
            r"Setting empty assignments for members ",
            r"Sending empty assignment to member ",
            r"Received unexpected notification of sync expiration ",
            r"Received notification of sync expiration for an unknown classic group ",
            r"Member \S+ has already been removed from the group\.$",
            r"Could not fetch offsets for group ",
            r"Creating simple consumer group \S+ via manual offset commit\.$",
            # GroupMetadata.scala 2.x .. 3.9 (loading; offsets; callbacks)
            r"Loaded member .* in group \S+ with generation ",
            r"Static member .* of group \S+ loaded with member id ",
            r"Failed to parse Consumer Protocol ",
            r"Failed to invoke (?:join|sync) callback for ",
            r"TxnOffsetCommit for producer ",
            r"Expired offsets from group ",
            # new coordinator 3.7 .. 4.x: loading and unloading, group type changes
            r"Loaded (?:classic|consumer|share|streams) group \S+ with \d+ members\.$",
            r"Loaded member \S+ in (?:classic|consumer|share|streams) group \S+\.$",
            r"(?:Loaded|Removed) group \S+ with an unknown group type ",
            r"onUnloaded group with an unknown group type ",
            r"\[GroupId=\S+\] Unload(?:ing|ed) group metadata for ",
            r"Cannot (?:downgrade|upgrade) (?:the )?(?:consumer|classic) group ",
            r"Skip downgrading the consumer group ",
            r"Cannot complete join phase of group ",
            r"Cannot find the group, skipping ",
            rf"{ANY_GROUP} Converted the (?:empty )?\S+ group to a \S+ group\.$",
            # KIP-848 subscriptions, reconciliation (INFO in 3.8/3.9, DEBUG in 4.x), timers
            rf"{ANY_GROUP}(?:\[MemberId \S+?\])? Computed new (?:subscription metadata|metadata "
            r"hash): ",
            rf"{ANY_GROUP} Member \S+ updated its (?:subscribed topics|subscribed regex|member "
            r"metdata) to",
            rf"{ANY_GROUP} Member \S+ (?:new assignment state: |transitioned from )",
            rf"{ANY_GROUP} Could not fence ",
            rf"{ANY_GROUP} Ignoring (?:rebalance|revocation) timeout for ",
            rf"{ANY_GROUP} Couldn't update regular expression due to: ",
            rf"{ANY_GROUP} Received (?:updated regular expressions|result of regular expression)",
            rf"{ANY_GROUP} Failed to compute a new target assignment ",
            rf"{ANY_GROUP}\[MemberId \S+?\] (?:Configuring the topology|Assignment configurations "
            r"changed|Member initialized the topology|Member joined with (?:stale|currently "
            r"initialized) topology|Member's new assignment state: )",
            # streams groups, 4.4: metadata, shutdown requests (each member's leave is its
            # own line), the task assignor's and task-to-process bookkeeping warnings
            rf"{ANY_GROUP}\[MemberId \S+?\] (?:Member updated its member metadata to |Shutdown "
            r"requested for the streams application\.$)",
            rf"{ANY_GROUP} (?:Clearing shutdown requested for the streams application\.$|"
            r"Requested topology description push at topology epoch |The configured task "
            r"assignor '|The refined assignment does not hand out |Cannot remove the process "
            r"ID |Setting the process ID of |Size of assignment epochs |updatedMember is "
            r"unexpectedly null )",
            rf"{ANY_GROUP} (?:Skipping delayed target assignment|Cannot compute delayed target "
            r"assignment|Group not found during initial rebalance)",
            # share groups' state partitions
            r"Initializing topic .* for share group ",
            r"Some topics for share group id ",
            r"Existing deleting entries found in share group ",
            r"Share\w+ tombstone ",
        ]
    )
    + ")",
    re.ASCII,
)
NAMES_GROUP = re.compile(r"\bgroup(?:Id)?\b", re.ASCII | re.IGNORECASE)
# GroupMetadata's event lines carry no `[GroupCoordinator ...]` prefix.
UNPREFIXED_EVENTS = re.compile(r"^(?:Group leader \[member|given member\.id )", re.ASCII)
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
COORDINATOR_LOGGERS = (
    "kafka.coordinator.group.GroupCoordinator",
    "kafka.coordinator.group.GroupMetadata",
    "kafka.coordinator.group.GroupMetadata$",
    "org.apache.kafka.coordinator.group.GroupMetadataManager",
    "org.apache.kafka.coordinator.group.classic.ClassicGroup",
    "org.apache.kafka.coordinator.group.generic.GenericGroup",
)
# A coordinator logger named as log4j prints it, `(kafka.coordinator.group.X)`, anywhere in
# a line: with text after it the line's real end is not its logger.
NAMES_COORDINATOR = re.compile(
    r"\((?:" + "|".join(re.escape(name) for name in COORDINATOR_LOGGERS) + r")\)", re.ASCII
)
BROKER_IN_PATH = re.compile(r"broker[-_]?(\d{1,10})(?!\d)", re.ASCII)
SET_WRAPPER = re.compile(r"^(?:\w*Set\((?P<scala>.*)\)|\[(?P<java>.*)\])$", re.ASCII)


def is_log_line(line: str) -> bool:
    """A log4j line, bare or behind a docker-compose or grep prefix."""
    return bool(LOG_LINE.match(line)) or any(p.match(line) for p in PREFIXED_LOG_LINES.values())


def line_prefix(text_lines: list[str]) -> str | None:
    """The prefix style of a log's lines, decided by its first log line: None (bare
    log4j lines), "docker-compose" or "grep"."""
    for line in text_lines:
        if LOG_LINE.match(line):
            return None
        for style, pattern in PREFIXED_LOG_LINES.items():
            if pattern.match(line):
                return style
    return None


def parse_coordinator_log(
    text_lines: list[str], result: ParseResult, context: dict[str, Any]
) -> None:
    zone = ZoneInfo(context.get("log_timezone") or "UTC")
    path_broker = _path_broker(context["common"]["source_file"])
    style = line_prefix(text_lines)
    log_line = PREFIXED_LOG_LINES[style] if style else LOG_LINE
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
