"""What a coordinator log says started a rebalance: a reason string -> a cause.

The reasons are the strings the group coordinators pass to prepareRebalance, read from
apache/kafka at each release (core/.../GroupCoordinator.scala 2.0 .. 3.9,
group-coordinator/.../GroupMetadataManager.java 3.7 .. 4.x), and the client reasons the
Java consumer sends with JoinGroup and LeaveGroup since 3.2 (KIP-800:
AbstractCoordinator, ConsumerCoordinator, ClassicKafkaConsumer):

- scale_out: `Adding new member $m [with group instance[ ]id None|Some(i)|null|i]`;
- scale_in: `[Rr]emoving member $m on LeaveGroup`, ``explicit `LeaveGroup` request for
  ($m, ...) members.``;
- session_timeout: `removing member $m on heartbeat expiration[.]`, and `Removing
  Set($m)|[$m] on pending sync request expiration` (no SyncGroup within the rebalance
  timeout after its JoinGroup response: the member stopped answering);
- leader_rejoin: `[Ll]eader $m re-joining group during $state`;
- metadata_change: `Updating metadata for [static ]member ...`, `Member $m [is ]joining
  group during ...`, `Group's selectedProtocol will change ...`, `Downgrade group $g
  from consumer to classic.`;
- unknown: `[Ee]rror ... when storing group assignment ...`, `Freshly-loaded group ...
  over capacity ...`, and no reason at all (2.0 and before).

A client reason after `; client reason: ` wins when it names the cause: `consumer poll
timeout has expired.` (the heartbeat thread's leave when max.poll.interval.ms passed)
is poll_timeout, `cached metadata has changed` (the leader saw a subscribed topic's
partitions change) partitions_added, `subscription has changed` and `the consumer
unsubscribed from all topics` subscription_changed. Others (`the consumer is being
closed`, `need to re-join with the given member-id: $m`, `rebalance failed due to
$Exception`, `not provided`) leave the coordinator's reading as it is.

KIP-848 groups log no reason with their epoch bump; the member lines before it decide
(member_cause): a member that joined is scale_out, one that left scale_in (or the cause
its client reason names), a member fenced because its session expired is
session_timeout, and one fenced because it did not revoke or join within the rebalance
timeout (which is max.poll.interval.ms for the consumer protocol and for classic members)
is poll_timeout.

deploy_restart is never read from one line: it takes the members capture (a member
replaced by a new id on the same host, client id or instance id; capture_causes.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fleet_rebalance.vocabulary import Cause, MemberEvent

CLIENT_REASON = "; client reason: "
# A member id in a reason, as Kafka prints it: any characters but blanks (a client.id,
# hence a member id, may hold `;`, `,` or `:`; the KIP-800 client reason is cut off at
# `; client reason: `, blanks and all, which no id contains). Never starting with `(`,
# which starts the generator's `(scale out)` notes.
MEMBER = r"(?P<member>[^\s(]\S*?)"
INSTANCE = r"(?: with group instance ?id (?P<instance>\S+?))?"
ID_SET = re.compile(r"^(?:\w*Set\((?P<scala>.*)\)|\[(?P<java>.*)\])$")

COORDINATOR_REASONS: list[tuple[str, re.Pattern]] = [
    (cause, re.compile(pattern))
    for cause, pattern in [
        (Cause.SCALE_OUT, rf"^Adding new member(?: {MEMBER})?{INSTANCE}(?: \(.*\))?\.?$"),
        (Cause.SCALE_IN, rf"^[Rr]emoving member(?: {MEMBER})? on LeaveGroup(?: \(.*\))?\.?$"),
        (Cause.SCALE_IN, r"^explicit `LeaveGroup` request for \((?P<members>.*)\) members\.?$"),
        (Cause.SESSION_TIMEOUT, rf"^removing member {MEMBER} on heartbeat expiration\.?$"),
        (
            Cause.SESSION_TIMEOUT,
            r"^Removing (?P<member_set>\S.*) on pending sync request expiration\.?$",
        ),
        (Cause.LEADER_REJOIN, rf"^[Ll]eader {MEMBER} re-joining group during "),
        (Cause.METADATA_CHANGE, r"^Updating metadata for (?:static )?member "),
        (Cause.METADATA_CHANGE, r"^Member \S+ (?:is )?joining group during "),
        (Cause.METADATA_CHANGE, r"^Group's selectedProtocol will change "),
        (Cause.METADATA_CHANGE, r"^Downgrade group \S+ from consumer to classic\.?$"),
        (Cause.UNKNOWN, r"^[Ee]rror(?: \S+)? when storing group assignment"),
        (Cause.UNKNOWN, r"^Freshly-loaded group "),
    ]
]
CLIENT_REASONS: list[tuple[str, re.Pattern]] = [
    (Cause.POLL_TIMEOUT, re.compile(r"^consumer poll timeout has expired")),
    (Cause.PARTITIONS_ADDED, re.compile(r"^cached metadata has changed")),
    (Cause.SUBSCRIPTION_CHANGED, re.compile(r"^subscription has changed")),
    (Cause.SUBSCRIPTION_CHANGED, re.compile(r"^the consumer unsubscribed from all topics")),
]
# KIP-848 fencing reasons (`... fenced from the group because <reason>.`) and the classic
# removals of members that never rejoined or synced.
FENCED_REASONS: list[tuple[str, re.Pattern]] = [
    (Cause.SESSION_TIMEOUT, re.compile(r"(?:the member|its) session expired")),
    (Cause.SESSION_TIMEOUT, re.compile(r"failed to sync within timeout")),
    (Cause.SESSION_TIMEOUT, re.compile(r"haven't sent their sync requests?")),
    (Cause.POLL_TIMEOUT, re.compile(r"failed to (?:revoke partitions|transition from epoch)")),
    (Cause.POLL_TIMEOUT, re.compile(r"failed to join within the rebalance timeout")),
    (Cause.POLL_TIMEOUT, re.compile(r"failed to join before (?:the )?rebalance timeout")),
    (Cause.POLL_TIMEOUT, re.compile(r"dynamic members who haven't joined")),
]
MEMBER_EVENT_CAUSES: dict[str, Cause] = {
    MemberEvent.JOINED: Cause.SCALE_OUT,
    MemberEvent.STATIC_JOINED: Cause.SCALE_OUT,
    MemberEvent.STATIC_REJOINED: Cause.DEPLOY_RESTART,
    MemberEvent.LEFT: Cause.SCALE_IN,
    MemberEvent.FAILED: Cause.SESSION_TIMEOUT,
    MemberEvent.FENCED: Cause.UNKNOWN,
}
# What a coordinator reason does to the members it names.
ACTIONS: dict[str, str] = {
    Cause.SCALE_OUT: "add",
    Cause.SCALE_IN: "remove",
    Cause.SESSION_TIMEOUT: "remove",
}


@dataclass(frozen=True)
class Reading:
    """A reason's cause, the member ids it names and what it does to them (`add`,
    `remove` or None: a leader or member that rejoins stays), and the instance id of a
    static member it adds (None for a dynamic one)."""

    cause: str
    members: tuple[str, ...] = ()
    action: str | None = None
    instance: str | None = None


def reason_cause(reason: str | None) -> Reading:
    """The cause a `Preparing to rebalance ... (reason: ...)` reason names."""
    if not reason:
        return Reading(Cause.UNKNOWN)
    coordinator, _, client = reason.partition(CLIENT_REASON)
    reading = Reading(Cause.UNKNOWN)
    for cause, pattern in COORDINATOR_REASONS:
        match = pattern.match(coordinator)
        if match:
            reading = Reading(cause, _named_members(match), ACTIONS.get(cause), _instance(match))
            break
    # A whole reason no coordinator pattern knows may itself be a client's reason.
    said = client if client else (reason if reading.cause == Cause.UNKNOWN else None)
    told = client_cause(said)
    if told is not None:
        return Reading(told, reading.members, reading.action, reading.instance)
    return reading


def client_cause(client_reason: str | None) -> str | None:
    """The cause a client's JoinGroup or LeaveGroup reason names, if it names one."""
    if not client_reason:
        return None
    return next((c for c, p in CLIENT_REASONS if p.match(client_reason)), None)


def member_cause(event: str, reason: str | None) -> str:
    """The cause a coordinator_events member row stands for (KIP-848 epochs, and classic
    generations whose reason is not logged)."""
    told = client_cause(reason)
    if event == MemberEvent.LEFT and told is not None:
        return told
    if event in (MemberEvent.FAILED, MemberEvent.FENCED) and reason:
        fenced = next((c for c, p in FENCED_REASONS if p.search(reason)), None)
        if fenced is not None:
            return fenced
    return MEMBER_EVENT_CAUSES.get(event, Cause.UNKNOWN)


def _named_members(match: re.Match) -> tuple[str, ...]:
    fields = match.groupdict()
    if fields.get("member"):
        return (fields["member"],)
    listed = fields.get("members") or fields.get("member_set")
    if not listed:
        return ()
    wrapped = ID_SET.match(listed)
    inner = next((g for g in wrapped.groups() if g is not None), "") if wrapped else listed
    return tuple(m for m in inner.split(", ") if m)


def _instance(match: re.Match) -> str | None:
    """`Some(i)` (Scala), `i` (Java) or None: `None` / `null` are a dynamic member."""
    instance = match.groupdict().get("instance")
    if instance is None or instance in ("None", "null"):
        return None
    some = re.fullmatch(r"Some\((.*)\)", instance)
    return some.group(1) if some else instance
