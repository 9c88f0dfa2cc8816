"""One cluster's capture as plain data, and its two files (pure: no client, no disk).

`groups.jsonl` is the jsonl capture format capture/jsonl.py parses: one object per
group. Its rows are what `kafka-consumer-groups.sh --describe --all-groups` (offsets
view), `--members` and `--state` print for the same moment: an offsets row per member
per assigned partition and per committed partition no member owns; CURRENT-OFFSET null
where nothing is committed. Keys the parser does not read ride along for people and
later readers (it ignores unknown keys): the group's type, `simple`, the coordinator's
rack, each consumer-protocol member's target assignment, each offset's leader epoch
and log start offset, `state_reported` (librdkafka's own state where the agent inferred
Reconciling) and `capture_error`.

A group the agent could not describe (or whose offsets it could not read) is written
with `capture_error` and nothing else: no members, no offsets, state null. The parser
turns it into no row at all (capture/jsonl.py), so the group is a gap there, never "all
members left"; the file's ingested_files.reason names the groups.

`topics.txt` is `kafka-topics.sh --describe`'s layout (FORMATS.md 2): Configs empty
(the agent does not read topic configs) and no Elr fields (the admin API has none).

`brokers.txt` is `kafka-configs.sh --describe --entity-type brokers --all`'s layout
(FORMATS.md 1.7) holding only each broker's `broker.rack` line, from the cluster
description's nodes (`null` for a node without a rack); `synonyms={}` because the
admin API's nodes do not say where the rack was configured.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

TopicPartitionKey = tuple[str, int]
GROUPS_FILE = "groups.jsonl"
TOPICS_FILE = "topics.txt"
BROKERS_FILE = "brokers.txt"
NIL_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID: the CLI prints no TopicId for it


@dataclass(frozen=True)
class Coordinator:
    host: str
    port: int
    id: int
    rack: str | None = None


@dataclass
class MemberSnapshot:
    member_id: str
    client_id: str | None
    host: str | None
    group_instance_id: str | None
    assignment: list[TopicPartitionKey]
    target_assignment: list[TopicPartitionKey] | None = None


@dataclass
class GroupSnapshot:
    group_id: str
    type: str | None = None
    simple: bool | None = None
    state: str | None = None
    # What the client reported when `state` was inferred from the members (collect.py).
    state_reported: str | None = None
    assignment_strategy: str | None = None
    coordinator: Coordinator | None = None
    members: list[MemberSnapshot] = field(default_factory=list)
    # (topic, partition) -> (committed offset, its leader epoch)
    committed: dict[TopicPartitionKey, tuple[int, int | None]] = field(default_factory=dict)
    error: str | None = None
    error_stage: str | None = None

    def fail(self, stage: str, reason: str) -> None:
        """Keep nothing but the reason: a half-described group must not look whole."""
        self.error, self.error_stage = reason, stage
        self.members, self.committed = [], {}
        self.state = self.state_reported = self.assignment_strategy = None

    def partitions(self) -> set[TopicPartitionKey]:
        owned = {tp for m in self.members for tp in m.assignment}
        return owned | set(self.committed)


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicSnapshot:
    name: str
    topic_id: str | None
    partitions: tuple[PartitionInfo, ...]


@dataclass(frozen=True)
class BrokerSnapshot:
    id: int
    rack: str | None


@dataclass
class ClusterSnapshot:
    cluster: str
    captured_at: dt.datetime
    groups: list[GroupSnapshot]
    topics: list[TopicSnapshot] | None  # None: the topics could not be described
    brokers: list[BrokerSnapshot] | None = None  # None: the cluster could not be described
    log_end: dict[TopicPartitionKey, int] = field(default_factory=dict)
    log_start: dict[TopicPartitionKey, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def failed_groups(self) -> int:
        return sum(g.error is not None for g in self.groups)


# groups.jsonl's objects, as written (FORMATS.md's jsonl capture format).
# A [topic, partition] pair.
PartitionRecord = list[str | int]


class CoordinatorRecord(TypedDict):
    host: str  # host:port
    id: int
    rack: str | None


class CaptureErrorRecord(TypedDict):
    stage: str | None  # which call failed: describe, offsets, ...
    reason: str


class MemberRecord(TypedDict):
    member_id: str
    group_instance_id: str | None
    client_id: str | None
    host: str | None
    assignment: list[PartitionRecord]
    target_assignment: NotRequired[list[PartitionRecord]]  # consumer-protocol members


class OffsetRecord(TypedDict):
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None
    leader_epoch: int | None
    log_start_offset: int | None
    log_end_offset_below_committed: NotRequired[int]


class GroupRecord(TypedDict):
    group_id: str
    cluster: str
    captured_at: str
    type: str | None
    # Either capture_error alone, or every key below it.
    capture_error: NotRequired[CaptureErrorRecord]
    simple: NotRequired[bool | None]
    state: NotRequired[str | None]
    assignment_strategy: NotRequired[str | None]
    coordinator: NotRequired[CoordinatorRecord | None]
    members: NotRequired[list[MemberRecord]]
    offsets: NotRequired[list[OffsetRecord]]
    state_reported: NotRequired[str]


def stamp(at: dt.datetime) -> str:
    """ISO-8601 UTC to the second, the form jsonl's captured_at is parsed from."""
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def group_lines(snapshot: ClusterSnapshot) -> Iterator[str]:
    """groups.jsonl, one line per group, sorted by group id."""
    at = stamp(snapshot.captured_at)
    for group in sorted(snapshot.groups, key=lambda g: g.group_id):
        record = group_record(group, snapshot.cluster, at, snapshot.log_end, snapshot.log_start)
        yield json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def group_record(
    group: GroupSnapshot,
    cluster: str,
    captured_at: str,
    log_end: dict[TopicPartitionKey, int],
    log_start: dict[TopicPartitionKey, int],
) -> GroupRecord:
    record: GroupRecord = {
        "group_id": group.group_id,
        "cluster": cluster,
        "captured_at": captured_at,
        "type": group.type,
    }
    if group.error is not None:
        record["capture_error"] = {"stage": group.error_stage, "reason": group.error}
        return record
    coordinator = group.coordinator
    record["simple"] = group.simple
    record["state"] = group.state
    record["assignment_strategy"] = group.assignment_strategy or None
    record["coordinator"] = (
        None
        if coordinator is None
        else {
            "host": f"{coordinator.host}:{coordinator.port}",
            "id": coordinator.id,
            "rack": coordinator.rack,
        }
    )
    record["members"] = [_member(m) for m in group.members]
    record["offsets"] = list(_offsets(group, log_end, log_start))
    if group.state_reported is not None:
        record["state_reported"] = group.state_reported
    return record


def _member(member: MemberSnapshot) -> MemberRecord:
    record: MemberRecord = {
        "member_id": member.member_id,
        "group_instance_id": member.group_instance_id,
        "client_id": member.client_id,
        "host": member.host,
        "assignment": [list(tp) for tp in sorted(member.assignment)],
    }
    if member.target_assignment is not None:
        record["target_assignment"] = [list(tp) for tp in sorted(member.target_assignment)]
    return record


def _offsets(
    group: GroupSnapshot,
    log_end: dict[TopicPartitionKey, int],
    log_start: dict[TopicPartitionKey, int],
) -> Iterator[OffsetRecord]:
    """The offsets view's rows: each member's assigned partitions, then the committed
    partitions nobody owns (consumer_id/host/client_id null, the CLI's `-`)."""
    owned: set[TopicPartitionKey] = set()
    for member in group.members:
        for tp in sorted(member.assignment):
            owned.add(tp)
            yield _offset(tp, group, log_end, log_start, member)
    for tp in sorted(set(group.committed) - owned):
        yield _offset(tp, group, log_end, log_start, None)


def _offset(
    tp: TopicPartitionKey,
    group: GroupSnapshot,
    log_end: dict[TopicPartitionKey, int],
    log_start: dict[TopicPartitionKey, int],
    member: MemberSnapshot | None,
) -> OffsetRecord:
    current, epoch = group.committed.get(tp, (None, None))
    end = log_end.get(tp)
    row: OffsetRecord = {
        "topic": tp[0],
        "partition": tp[1],
        "current_offset": current,
        "log_end_offset": end,
        "consumer_id": member.member_id if member else None,
        "host": member.host if member else None,
        "client_id": member.client_id if member else None,
        "leader_epoch": epoch,
        "log_start_offset": log_start.get(tp),
    }
    if current is not None and end is not None and end < current:
        # A log truncated below the commit: the CLI prints a negative LAG, the jsonl
        # parser refuses the whole group for it; keep the group, drop the log end.
        row["log_end_offset"] = None
        row["log_end_offset_below_committed"] = end
    return row


def topics_lines(topics: list[TopicSnapshot]) -> Iterator[str]:
    """topics.txt: kafka-topics.sh --describe's header and partition lines, by name."""
    for topic in sorted(topics, key=lambda t: t.name):
        partitions = sorted(topic.partitions, key=lambda p: p.partition)
        factor = len(partitions[0].replicas) if partitions else 0
        topic_id = (
            f"\tTopicId: {topic.topic_id}"
            if topic.topic_id and topic.topic_id != NIL_TOPIC_ID
            else ""
        )
        yield (
            f"Topic: {topic.name}{topic_id}\tPartitionCount: {len(partitions)}"
            f"\tReplicationFactor: {factor}\tConfigs: "
        )
        for p in partitions:
            leader = "none" if p.leader is None or p.leader < 0 else str(p.leader)
            yield (
                f"\tTopic: {topic.name}\tPartition: {p.partition}\tLeader: {leader}"
                f"\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(p.isr)}"
            )


def brokers_lines(brokers: list[BrokerSnapshot]) -> Iterator[str]:
    """brokers.txt: kafka-configs.sh --all's block per broker, its broker.rack line only."""
    for broker in sorted(brokers, key=lambda b: b.id):
        rack = "null" if broker.rack is None else broker.rack
        yield f"All configs for broker {broker.id} are:"
        yield f"  broker.rack={rack} sensitive=false synonyms={{}}"


def _ids(brokers: tuple[int, ...]) -> str:
    return ",".join(str(b) for b in brokers)
