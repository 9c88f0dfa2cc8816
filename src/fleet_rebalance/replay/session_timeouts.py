"""Each consumer's session.timeout.ms, where the coordinator's log gives it.

The coordinator expires a member when no heartbeat came for its session timeout, so a
member it expired was silent for at least that long before the expiry line: its absence
runs from its last heartbeat, not from the line (rebalance_events.py adds it to `away_ms`).

Where Kafka writes it (apache/kafka): the old GroupCoordinator (2.x-3.9) prints a
member as `MemberMetadata(memberId=$m, groupInstanceId=$i, clientId=$c, clientHost=$h,
sessionTimeoutMs=$t, rebalanceTimeoutMs=$r, supportedProtocols=...)`
(core/.../MemberMetadata.scala toString) in its clean-leave line (`Member
MemberMetadata(...) has left group $g through explicit LeaveGroup`, 3.0+). Its expiry
line (`Member $m in group $g has failed, removing it from the group`), the new
coordinator's classic and KIP-848 lines (4.x GroupMetadataManager) and the capture
views print none; a KIP-848 member's is the brokers' group.consumer.session.timeout.ms.
A consumer's earlier incarnation (same member id, group.instance.id or client.id: one
process configuration) that left cleanly tells it; otherwise the conf's
`metrics.session_timeout_ms` (Kafka's Java consumer default since 3.0, KIP-735, as
librdkafka's and KIP-848's broker default: 45000) stands in, marked as assumed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.replay.identities import Identity

MEMBER_METADATA = re.compile(
    r"MemberMetadata\(memberId=(?P<member>[^,]+), groupInstanceId=(?P<instance>[^,]+), "
    r"clientId=(?P<client>.*?), clientHost=[^,]*, sessionTimeoutMs=(?P<session>\d+),"
)


@dataclass(frozen=True)
class SessionTimeout:
    ms: int
    assumed: bool  # True: no log line gave it, the conf's default stands in


@dataclass
class SessionTimeouts:
    """The session timeouts a group's log lines give, by member id, instance id and
    client id; `default` for a consumer they do not name."""

    default: int = MetricsConfig().session_timeout_ms
    by_member: dict[str, int] = field(default_factory=dict)
    by_instance: dict[str, int] = field(default_factory=dict)
    by_client: dict[str, int] = field(default_factory=dict)

    @classmethod
    def logged(cls, rows: Iterable[Mapping[str, Any]], default: int) -> SessionTimeouts:
        """From coordinator_events rows (their `line`), the latest line of each wins."""
        found = cls(default)
        for row in sorted(rows, key=lambda r: r["logged_at"]):
            match = MEMBER_METADATA.search(row.get("line") or "")
            if match is None:
                continue
            ms = int(match["session"])
            found.by_member[match["member"]] = ms
            instance = re.fullmatch(r"Some\((.*)\)", match["instance"])
            if instance is not None:
                found.by_instance[instance.group(1)] = ms
            found.by_client[match["client"]] = ms
        return found

    def of(self, member_id: str, identity: Identity) -> SessionTimeout:
        """The member's own logged timeout, else its group.instance.id's, else its
        client.id's, else the default (assumed)."""
        for table, key in (
            (self.by_member, member_id),
            (self.by_instance, identity.instance_id),
            (self.by_client, identity.client_id),
        ):
            if key is not None and key in table:
                return SessionTimeout(table[key], False)
        return SessionTimeout(self.default, True)
