"""The domain's words, each spelled once: the values the tables' cause, event kind, change
and status columns hold (DESIGN.md). A StrEnum member is the string itself, so a
column, a dict key, a comparison and an f-string take it as it is."""

from __future__ import annotations

from enum import StrEnum


class Cause(StrEnum):
    """Why a rebalance happened (rebalance_events.cause): from the coordinator's
    reason (replay/log_causes.py) or the members capture (replay/capture_causes.py)."""

    DEPLOY_RESTART = "deploy_restart"
    SESSION_TIMEOUT = "session_timeout"
    POLL_TIMEOUT = "poll_timeout"
    SCALE_OUT = "scale_out"
    SCALE_IN = "scale_in"
    SUBSCRIPTION_CHANGED = "subscription_changed"
    PARTITIONS_ADDED = "partitions_added"
    LEADER_REJOIN = "leader_rejoin"
    METADATA_CHANGE = "metadata_change"
    UNKNOWN = "unknown"


class MemberEvent(StrEnum):
    """What a coordinator line did to one member (coordinator_events.event)."""

    PENDING = "member_pending"
    JOINED = "member_joined"
    STATIC_JOINED = "static_member_joined"
    STATIC_REJOINED = "static_member_rejoined"
    LEFT = "member_left"
    FAILED = "member_failed"
    FENCED = "member_fenced"


class Change(StrEnum):
    """What a group should change (group_health.recommendation), cheapest first among
    the candidates; the faults are named whatever they cost. rack_aware saves bytes read
    across zones, not pauses (metrics/rack_aware_rules.py)."""

    KEEP = "keep"
    CONSUMER_CONFIG = "consumer_config"
    STATIC_MEMBERSHIP = "static_membership"
    ASSIGNOR = "assignor"
    PROTOCOL_MIGRATION = "protocol_migration"
    RACK_AWARE = "rack_aware"
    FIX_CRASH_LOOP = "fix_crash_loop"
    STUCK_PARTITION = "stuck_partition"


class GroupType(StrEnum):
    """A group's protocol: Kafka's GroupType as the tables hold it (members.group_type,
    protocol_migration_plan.protocol), lower case."""

    CLASSIC = "classic"
    CONSUMER = "consumer"
    SHARE = "share"
    STREAMS = "streams"


class RebalanceProtocol(StrEnum):
    """How an assignor's members give partitions up (ConsumerPartitionAssignor's
    RebalanceProtocol, lower case): all of them at each rebalance, or only those that
    move. An assignor plug-in's `protocol` is one of these (CONTRACT.md)."""

    EAGER = "eager"
    COOPERATIVE = "cooperative"


class Status(StrEnum):
    """Burrow's partition and group statuses (consumer_status; its rules are written
    once, in docs/metrics.md), in rank order."""

    OK = "OK"
    WARN = "WARN"
    ERR = "ERR"
    STOP = "STOP"
    STALL = "STALL"
    REWIND = "REWIND"


class ZoneSource(StrEnum):
    """How a consumer's availability zone was found (metrics/cross_zone_rules.py): its
    own client.rack, or the configured CIDR (zones.consumer_cidrs) holding its host."""

    CLIENT_RACK = "client.rack"
    CIDR = "cidr"
