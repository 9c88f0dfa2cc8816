"""The group coordinator's log lines for one simulated rebalance, as each release writes
them (shared/FORMATS.md 3): every line an INFO-level broker of that release writes for
it, member lines included, not only the generation markers.

- 3.6 and 3.9 brokers run the old coordinator (`kafka.coordinator.group.GroupCoordinator`,
  prefix `[GroupCoordinator <id>]: `, `(__consumer_offsets-<p>)` in the generation lines);
  KIP-394's second JoinGroup line is DEBUG there, so a new member shows as its pending
  line and the `Adding new member` reason. The MemberMetadata leave line follows the
  Preparing line.
- 4.1 brokers run the new coordinator (`GroupMetadataManager`, prefix `[GroupCoordinator
  id=<id> topic=__consumer_offsets partition=<p>] `, trailing dots, `null` for a dynamic
  member's instance id). The leave line comes before the Preparing line, whose reason is
  ``explicit `LeaveGroup` request for (<ids>) members.``
- KIP-848 groups (4.1): a member line, then `Bumped group epoch to e with metadata hash
  h.` and `Computed a new target assignment for epoch e ...`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from fleet_rebalance.assignors.java import string_hash
from fleet_rebalance.generate.render import KafkaVersion

SCALA = "kafka.coordinator.group.GroupCoordinator"
JAVA = "org.apache.kafka.coordinator.group.GroupMetadataManager"
# What a broker logs every hour whatever its groups do (so every hour has a file).
OLD_HOUSEKEEPING = "kafka.coordinator.group.GroupMetadataManager"
NEW_HOUSEKEEPING = "org.apache.kafka.coordinator.group.GroupCoordinatorShard"
JOIN_PHASE = dt.timedelta(milliseconds=2800)  # Preparing -> Stabilized
# Epoch bump -> target assignment (the members then reconcile on their heartbeats,
# which a 4.x coordinator logs at DEBUG only).
TARGET = dt.timedelta(milliseconds=3)
SYNC = dt.timedelta(milliseconds=35)  # Stabilized -> the leader's assignment
STEP = dt.timedelta(milliseconds=3)  # between lines of one request


def log_line(at: dt.datetime, level: str, message: str, logger: str) -> str:
    stamp = at.strftime("%Y-%m-%d %H:%M:%S,") + f"{at.microsecond // 1000:03d}"
    return f"[{stamp}] {level} {message} ({logger})"


@dataclass(frozen=True)
class Coordinator:
    """The coordinator of one group: its release, broker and __consumer_offsets partition."""

    version: KafkaVersion
    broker: int
    partition: int
    group: str
    kip848: bool

    @property
    def new(self) -> bool:
        return self.version == "4.1"

    def line(self, at: dt.datetime, message: str) -> str:
        if self.new:
            prefix = (
                f"[GroupCoordinator id={self.broker} topic=__consumer_offsets "
                f"partition={self.partition}] "
            )
            return log_line(at, "INFO", prefix + message, JAVA)
        return log_line(at, "INFO", f"[GroupCoordinator {self.broker}]: {message}", SCALA)

    @property
    def _offsets(self) -> str:
        return "" if self.new else f" (__consumer_offsets-{self.partition})"

    @property
    def _dot(self) -> str:
        return "." if self.new else ""

    # -- member lines, before (or, for the old coordinator's leave, after) the rebalance --
    def pending(self, at: dt.datetime, member: str) -> list[str]:
        """A new member's first JoinGroup (KIP-394) or a KIP-848 member joining."""
        if self.kip848:
            return [
                self.line(
                    at,
                    f"[GroupId {self.group}] Member {member} joins the consumer group using "
                    "the consumer protocol.",
                )
            ]
        request = "requesting" if self.new else "request"
        lines = [
            self.line(
                at,
                f"Dynamic member with unknown member id joins group {self.group} in Stable "
                f"state. Created a new member id {member} and {request} the member to rejoin "
                "with this id.",
            )
        ]
        if self.new:  # DEBUG in the old coordinator
            lines.append(
                self.line(
                    at + STEP,
                    f"Pending dynamic member with id {member} joins group {self.group} in "
                    "Stable state. Adding to the group now.",
                )
            )
        return lines

    def join_reason(self, member: str, instance: str | None = None) -> str:
        """The old coordinator prints the instance id as a Scala Option, the new one as a
        Java String (GroupCoordinator.scala addMemberAndRebalance, GroupMetadataManager
        addMemberThenRebalanceOrCompleteJoin). A dynamic member's second JoinGroup
        (KIP-394) gives its reason; a static member's first gives none, which the brokers
        print as `not provided` (JoinGroupRequest.joinReason)."""
        option = f"Some({instance})" if instance else "None"
        shown = (instance or "null") if self.new else option
        client_reason = (
            "not provided" if instance else f"need to re-join with the given member-id: {member}"
        )
        return (
            f"Adding new member {member} with group instance id {shown}; client reason: "
            f"{client_reason}"
        )

    def failed(self, at: dt.datetime, member: str) -> list[str]:
        """A member whose session expired (no heartbeat within session.timeout.ms)."""
        if self.kip848:
            return [
                self.line(
                    at,
                    f"[GroupId {self.group}] Member {member} fenced from the group because "
                    "the member session expired.",
                )
            ]
        return [
            self.line(
                at,
                f"Member {member} in group {self.group} has failed, removing it from the "
                f"group{self._dot}",
            )
        ]

    def expiry_reason(self, member: str) -> str:
        return f"removing member {member} on heartbeat expiration{self._dot}"

    def left(self, at: dt.datetime, member: LeavingMember, client_reason: str) -> list[str]:
        """An explicit LeaveGroup: the new coordinator's line (before the rebalance) or the
        old one's MemberMetadata line (after it; see leave_after)."""
        if self.kip848:
            return [
                self.line(
                    at, f"[GroupId {self.group}] Member {member.member_id} left the consumer group."
                )
            ]
        if self.new:
            return [
                self.line(
                    at,
                    f"[Group {self.group}] Member {member.member_id} has left group through "
                    f"explicit `LeaveGroup` request; client reason: {client_reason}",
                )
            ]
        return []

    def leave_after(self, at: dt.datetime, member: LeavingMember, client_reason: str) -> list[str]:
        if self.new or self.kip848:
            return []
        return [
            self.line(
                at,
                f"Member MemberMetadata(memberId={member.member_id}, groupInstanceId=None, "
                f"clientId={member.client_id}, clientHost={member.host}, sessionTimeoutMs=45000, "
                f"rebalanceTimeoutMs=300000, supportedProtocols=List({member.strategy})) has "
                f"left group {self.group} through explicit `LeaveGroup`; client reason: "
                f"{client_reason}",
            )
        ]

    def leave_reason(self, member: str, client_reason: str) -> str:
        if self.new:
            return f"explicit `LeaveGroup` request for ({member}) members."
        return f"Removing member {member} on LeaveGroup; client reason: {client_reason}"

    # -- the generation ------------------------------------------------------------------
    def generation(
        self,
        at: dt.datetime,
        generation: int,
        reason: str,
        members: int,
        leader: str,
        ends: dt.datetime | None = None,
        static: int = 0,
    ) -> tuple[list[str], dt.datetime]:
        """The rebalance's lines from its start at `at`, and when it ended (`ends`, else
        after the usual join phase); `static` of the `members` have a group.instance.id."""
        end = ends or at + (TARGET if self.kip848 else JOIN_PHASE)
        if self.kip848:
            return [
                self.line(
                    at,
                    f"[GroupId {self.group}] Bumped group epoch to {generation} with metadata "
                    f"hash {_metadata_hash(self.group, generation)}.",
                ),
                self.line(
                    end,
                    f"[GroupId {self.group}] Computed a new target assignment for epoch "
                    f"{generation} with 'uniform' assignor in 3ms.",
                ),
            ], end
        lines = [
            self.line(
                at,
                f"Preparing to rebalance group {self.group} in state PreparingRebalance with "
                f"old generation {generation - 1}{self._offsets} (reason: {reason}){self._dot}",
            )
        ]
        if members == 0:
            lines.append(
                self.line(
                    end,
                    f"Group {self.group} with generation {generation} is now empty"
                    f"{self._offsets}{self._dot}",
                )
            )
            return lines, end
        lines += [
            self.line(
                end,
                f"Stabilized group {self.group} generation {generation}{self._offsets} with "
                f"{members} members{self._dot}",
            ),
            self.line(
                end + SYNC,
                f"Assignment received from leader {leader} for group {self.group} for "
                f"generation {generation}. The group has {members} members, {static} of which "
                "are static.",
            ),
        ]
        return lines, end

    def static_join(self, at: dt.datetime, instance: str, member: str) -> list[str]:
        """A static member joining with an instance id the group does not hold (its old
        member expired): a new member id, then a rebalance (classic groups)."""
        added = "added" if self.new else "add"
        return [
            self.line(
                at,
                f"Static member with groupInstanceId={instance} and unknown member id joins "
                f"group {self.group} in Stable state. Created a new member id {member} for "
                f"this member and {added} to the group.",
            )
        ]

    def static_rejoin(self, at: dt.datetime, instance: str, old: str) -> list[str]:
        """A static member back with a new id within its session timeout: no rebalance
        (the 4.1 KIP-848 group logs nothing at INFO for it)."""
        if self.kip848:
            return []
        return [
            self.line(
                at,
                f"Static member with groupInstanceId={instance} and unknown member id joins "
                f"group {self.group} in Stable state. Replacing previously mapped member "
                f"{old} with this groupInstanceId.",
            )
        ]


@dataclass(frozen=True)
class LeavingMember:
    member_id: str
    client_id: str
    host: str
    strategy: str


def housekeeping(version: KafkaVersion, broker: int, at: dt.datetime) -> str:
    """The offsets-expiration line every broker writes (every 10 minutes by default):
    a coordinator logger's line with no membership fact."""
    if version == "4.1":
        return log_line(
            at,
            "INFO",
            f"[GroupCoordinator id={broker} topic=__consumer_offsets partition=0] Generated 0 "
            "tombstone records while cleaning up group metadata in 0 milliseconds.",
            NEW_HOUSEKEEPING,
        )
    return log_line(
        at,
        "INFO",
        f"[GroupMetadataManager brokerId={broker}] Removed 0 expired offsets in 0 milliseconds.",
        OLD_HOUSEKEEPING,
    )


def _metadata_hash(group: str, generation: int) -> int:
    """A stable stand-in for the subscribed topics' metadata hash (4.1 logs a long)."""
    return string_hash(f"{group}/{generation}") & 0x7FFFFFFF
