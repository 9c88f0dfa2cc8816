"""What the group coordinators log, read from each Kafka release's source (FORMATS 3).

EVENTS: every line of GroupCoordinator.scala (1.0 .. 3.9) and of the new coordinator
(3.7 .. 4.x: GroupMetadataManager, classic.ClassicGroup) that records a member joining,
leaving, failing or being fenced, or a generation / epoch changing, with the event
name it is stored under (`coordinator_events.event`). KNOWN_NO_FACT: the messages of
the same loggers known to carry no membership fact. Numbers are captured as whatever
word stands in their place, to be read strictly by the reader.
"""

from __future__ import annotations

import re

from fleet_rebalance.vocabulary import MemberEvent

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
            MemberEvent.PENDING,  # KIP-394 first JoinGroup (DEBUG in 2.4 .. 2.8)
            rf"^Dynamic member with unknown member id (?:re)?joins group {G} in {STATE}\. "
            r"Created a new member id (?P<member>\S+) and request(?:ing)? the member to "
            r"rejoin with this id\.$",
        ),
        (
            MemberEvent.JOINED,  # a JoinGroup that needs no member id (old clients)
            rf"^Dynamic [Mm]ember with unknown member id (?:re)?joins group {G} in {STATE}\. "
            r"Created a new member id (?P<member>\S+) (?:for this member and add|and added "
            r"the member) to the group\.$",
        ),
        (
            MemberEvent.JOINED,  # the second JoinGroup of a pending member
            rf"^(?:Pending dynamic member with id|Dynamic Member with specific member id) "
            rf"(?P<member>\S+) joins group {G} in \S+ state\. Adding to the group now\.$",
        ),
        (
            MemberEvent.STATIC_JOINED,  # 2.5 .. 2.8
            rf"^Static Member with unknown member id joins group {G} in \S+ state\. "
            r"Created a new member id (?P<member>\S+) for this member and add to the group\.$",
        ),
        (
            MemberEvent.STATIC_JOINED,  # 2.5 .. 2.8, after the line above; instance is Some(i)
            rf"^Adding new static member (?P<instance>\S+) to group {G} with member id "
            r"(?P<member>\S+?)\.$",
        ),
        (
            MemberEvent.STATIC_JOINED,
            rf"^Static member with groupInstanceId=(?P<instance>\S+) and unknown member id "
            rf"joins group {G} in \S+ state\. Created a new member id (?P<member>\S+) for "
            r"this member and add(?:ed)? to the group\.$",
        ),
        (
            MemberEvent.STATIC_REJOINED,  # the old member id: the new one is not in the line
            rf"^Static member with groupInstanceId=(?P<instance>\S+) and unknown member id "
            rf"joins group {G} in \S+ state\. Replacing previously mapped member "
            r"(?P<member>\S+) with this groupInstanceId\.$",
        ),
        (
            MemberEvent.STATIC_REJOINED,  # 2.3 .. 2.4 name no group, 2.5 .. 2.8 do
            rf"^Static member (?P<instance>\S+) (?:of group {G} )?with unknown member id "
            r"rejoins, assigning new member id (?P<member>\S+), while old member (?:id )?"
            r"\S+ will be removed\.$",
        ),
        # -- leaves
        (
            MemberEvent.LEFT,  # 1.0 .. 2.1 DEBUG, 2.2 .. 2.3 INFO
            rf"^Member (?P<member>\S+) in group {G} has left, removing it from the group$",
        ),
        (
            MemberEvent.LEFT,  # 2.4 .. 2.8; the instance is None or Some(i)
            r"^Member\[group\.instance\.id (?P<instance>[^,\]]+), member\.id "
            rf"(?P<member>[^\]\s]+)\] in group {G} has left, removing it from the group$",
        ),
        (MemberEvent.LEFT, rf"^Pending member (?P<member>\S+) is leaving group {G}\.$"),
        (
            MemberEvent.LEFT,  # 3.0 .. 3.9
            rf"^Pending member with memberId=(?P<member>\S+) has left group {G} {LEAVE_GROUP}$",
        ),
        (
            MemberEvent.LEFT,  # 3.0 .. 3.9 (3.0/3.1: `... request`, 3.2+: client reason)
            rf"^Member MemberMetadata\(memberId=(?P<member>[^,]+),.*\) has left group {G}"
            r" through explicit `LeaveGroup`(?: request)?" + CLIENT_REASON + "$",
        ),
        (
            MemberEvent.LEFT,  # new coordinator, classic members (group spelled two ways)
            rf"^\[Group(?:Id)? {G}\] (?:(?:Pending|Dynamic|Static) )?[Mm]ember (?P<member>\S+)"
            rf"(?: with instance id (?P<instance>\S+))? has left group {LEAVE_GROUP}"
            + CLIENT_REASON
            + "$",
        ),
        # -- failures
        (
            MemberEvent.FAILED,
            rf"^Member (?P<member>\S+) in group {G} has failed, removing it from the group\.?$",
        ),
        (
            MemberEvent.FAILED,  # a pending member that never sent its second JoinGroup
            rf"^Pending member (?P<member>\S+) in group {G} has been removed after session "
            r"timeout expiration\.$",
        ),
        (
            MemberEvent.FAILED,  # one row per member of the set
            rf"^Group {G} (?P<reason>removed? dynamic members who haven't joined): "
            + MEMBER_SET
            + "$",
        ),
        (
            MemberEvent.FAILED,  # DEBUG, 2.8.2 +
            rf"^Group {G} (?P<reason>removed members who haven't sent their sync requests?):"
            r" " + MEMBER_SET + "$",
        ),
        (
            MemberEvent.FAILED,  # GroupMetadata (2.3 .. 3.9), ClassicGroup: no group named
            r"^Group leader \[member(?:\.id|Id): (?P<member>[^,\]\s]+), group(?:\.instance\."
            r"id|InstanceId): [^\]]*\] (?P<reason>failed to join before (?:the )?rebalance "
            r"timeout)",
        ),
        # -- fenced static members
        (
            MemberEvent.FENCED,  # 3.0 + (GroupCoordinator), ClassicGroup (`existing`, no group)
            r"^Request memberId=(?P<member>\S+) for static member with groupInstanceId="
            r"(?P<instance>\S+) is fenced by (?:current|existing) memberId=\S+ during "
            r"operation (?P<reason>\S+)$",
        ),
        (
            MemberEvent.FENCED,  # GroupMetadata 2.3 .. 2.8: no group named
            r"^given member\.id (?P<member>\S+) is identified as a known static member "
            r"[^,\s]+, ?but not matching the expected member\.id \S+?(?: during "
            r"(?P<reason>\S+), will respond with instance fenced error)?$",
        ),
        # -- KIP-848 (and share / streams) groups of the new coordinator
        (
            MemberEvent.PENDING,  # a classic member joining a consumer group
            rf"^{KIP848} Dynamic member with unknown member id joins the consumer group\. "
            r"Created a new member id (?P<member>\S+) and requesting the member to rejoin "
            r"with this id\.$",
        ),
        (
            MemberEvent.JOINED,
            rf"^{KIP848} Member (?P<member>\S+) joins the (?:consumer|share) group"
            r"(?: using the \S+ protocol)?\.$",
        ),
        (
            MemberEvent.JOINED,
            rf"^{KIP848}\[MemberId (?P<member>\S+?)\] Member joins the streams group\.$",
        ),
        (
            MemberEvent.STATIC_JOINED,
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) "
            r"joins the consumer group(?: using the \S+ protocol)?\.$",
        ),
        (
            MemberEvent.STATIC_REJOINED,  # 3.7
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) "
            r"re-joins the consumer group\.$",
        ),
        (
            MemberEvent.STATIC_REJOINED,  # 3.8: `with unknown member id and instance id`
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
            MemberEvent.LEFT,
            rf"^{KIP848} (?:Static [Mm]ember|Member) (?P<member>\S+)(?: with instance id \S+)?"
            r" (?:(?P<reason>temporarily) )?left the (?:consumer|share) group\.$",
        ),
        (
            MemberEvent.LEFT,
            rf"^{KIP848}\[MemberId \S+?\] Member (?P<member>\S+) left the streams group\.$",
        ),
        # -- streams groups' static members (4.1 +, read from the 4.4 coordinator jar)
        (
            MemberEvent.STATIC_JOINED,
            rf"^{KIP848}\[MemberId \S+?\] Static member (?P<member>\S+) with instance id "
            r"(?P<instance>\S+) joins the streams group\.$",
        ),
        (
            MemberEvent.STATIC_REJOINED,
            rf"^{KIP848}\[MemberId \S+?\] Static member with instance id (?P<instance>\S+) "
            r"re-joins the streams group using the \S+ protocol\. Created a new member "
            r"(?P<member>\S+) to replace the existing member \S+?\.$",
        ),
        (
            MemberEvent.LEFT,
            rf"^{KIP848}\[MemberId \S+?\] Static member (?P<member>\S+) with instance id "
            r"(?P<instance>\S+) (?:(?P<reason>temporarily) )?left the streams group\.$",
        ),
        (
            MemberEvent.FENCED,
            rf"^{KIP848} (?:Streams )?[Mm]ember (?P<member>\S+) fenced from the group because "
            r"(?P<reason>.*?)\.?$",
        ),
        (
            MemberEvent.FENCED,  # a static member's request refused (FENCED_INSTANCE_ID)
            rf"^{KIP848} Static member (?P<member>\S+) with instance id (?P<instance>\S+) is "
            r"fenced by existing member \S+?\.$",
        ),
        (
            MemberEvent.FENCED,  # UNRELEASED_INSTANCE_ID (`is is owned` up to 4.0)
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
