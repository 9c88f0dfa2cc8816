"""One cycle of one cluster through the admin API -> ClusterSnapshot.

Order matters: committed offsets are read before log-end offsets, so a log end is
never older than the commit beside it (the lag a snapshot shows is never negative
because of the agent's own timing). Every call is batched and bounded: groups are
described `describe_groups` at a time, committed offsets are read with at most
`offsets_in_flight` requests outstanding (librdkafka takes one group per request), and
list_offsets takes `list_offsets_partitions` partitions per request.

What fails where: the listing failing (cluster unreachable) or the cycle deadline
passing raises ClusterUnavailable and nothing is written; a group whose describe or
offset fetch fails is kept as failed with its reason (GroupSnapshot.fail); a partition
whose log offsets cannot be read has null ones; topics that cannot be described leave
topics.txt out of that snapshot.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import OffsetSpec

from fleet_rebalance.agent.admin import (
    AdminClientLike,
    error_code,
    error_text,
    state_name,
    type_name,
)
from fleet_rebalance.agent.config import Batching, ClusterConfig, Timeouts
from fleet_rebalance.agent.errors import ClusterUnavailable
from fleet_rebalance.agent.snapshot import (
    BrokerSnapshot,
    ClusterSnapshot,
    Coordinator,
    GroupSnapshot,
    MemberSnapshot,
    PartitionInfo,
    TopicPartitionKey,
    TopicSnapshot,
)
from fleet_rebalance.vocabulary import GroupType

log = logging.getLogger("fleet_rebalance.agent.collect")
T = TypeVar("T")
# librdkafka's own request_timeout ends each call; this margin only covers its reply.
WAIT_MARGIN_S = 5.0
# Describing a group that was deleted since the listing: it is gone, not failed.
GONE_CODES = frozenset({KafkaError.GROUP_ID_NOT_FOUND})
GONE_STATES = frozenset({"Dead"})
UNKNOWN_STATE, RECONCILING = "Unknown", "Reconciling"


@dataclass
class Deadline:
    """The cycle's deadline; every wait is cut to what is left of it."""

    at: float
    clock: Callable[[], float] = time.monotonic

    def wait(self, request_s: float, stage: str, margin_s: float = WAIT_MARGIN_S) -> float:
        """Seconds to wait for a reply: the request's timeout plus `margin_s` (librdkafka
        ends the request itself), never past the deadline."""
        left = self.at - self.clock()
        if left <= 0:
            raise ClusterUnavailable(f"cycle deadline passed during {stage}")
        return min(left, request_s + margin_s)


def capture_cluster(
    admin: AdminClientLike,
    cluster: ClusterConfig,
    captured_at: dt.datetime,
    timeouts: Timeouts,
    batching: Batching,
    clock: Callable[[], float] = time.monotonic,
) -> ClusterSnapshot:
    deadline = Deadline(clock() + timeouts.cycle_s, clock)
    request_s = timeouts.request_s
    notes: list[str] = []
    listed = list_groups(admin, request_s, deadline, notes)
    wanted = {g: kind for g, kind in sorted(listed.items()) if cluster.groups.wants(g)}
    groups = describe_groups(admin, wanted, request_s, deadline, batching.describe_groups)
    gone = len(wanted) - len(groups)
    if gone:
        notes.append(f"{gone} group(s) gone since the listing")
    read_committed(admin, groups, request_s, deadline, batching.offsets_in_flight)
    try:
        topics = describe_topics(admin, request_s, deadline, batching.describe_topics)
    except ClusterUnavailable:
        raise
    except Exception as exc:  # any client failure leaves topics out, not the groups
        notes.append(f"topics not described: {error_text(exc)}")
        topics = None
    try:
        brokers = describe_brokers(admin, request_s, deadline)
    except ClusterUnavailable:
        raise
    except Exception as exc:  # as for topics: the racks are left out, not the groups
        notes.append(f"brokers not described: {error_text(exc)}")
        brokers = None
    partitions = sorted({tp for g in groups for tp in g.partitions()})
    step = batching.list_offsets_partitions
    log_end = log_offsets(admin, partitions, OffsetSpec.latest(), request_s, deadline, step)
    log_start = log_offsets(admin, partitions, OffsetSpec.earliest(), request_s, deadline, step)
    return ClusterSnapshot(
        cluster=cluster.name,
        captured_at=captured_at,
        groups=groups,
        topics=topics,
        brokers=brokers,
        log_end=log_end,
        log_start=log_start,
        notes=notes,
    )


def list_groups(
    admin: AdminClientLike, request_s: float, deadline: Deadline, notes: list[str]
) -> dict[str, str | None]:
    """Every group id the cluster lists, with its type (classic | consumer) where the
    broker says; ClusterUnavailable when it cannot be listed."""
    try:
        future = admin.list_consumer_groups(request_timeout=request_s)
        result = future.result(timeout=deadline.wait(request_s, "the group listing"))
    except ClusterUnavailable:
        raise
    except FutureTimeout:
        raise ClusterUnavailable("the group listing timed out") from None
    except Exception as exc:  # whatever the client raised, the cluster is down
        raise ClusterUnavailable(f"groups not listed: {error_text(exc)}") from None
    errors = [error_text(e) for e in result.errors or []]
    valid = {
        listing.group_id: type_name(getattr(listing, "type", None))
        for listing in result.valid or []
    }
    if errors and not valid:
        # librdkafka reports an unreachable cluster as a listing with errors only.
        raise ClusterUnavailable(f"groups not listed: {'; '.join(sorted(set(errors)))}")
    if errors:
        # Some brokers' ListGroups failed: their groups are absent (a gap), not gone.
        notes.append(f"listing incomplete: {'; '.join(sorted(set(errors)))}")
    return valid


def describe_groups(
    admin: AdminClientLike,
    listed: dict[str, str | None],
    request_s: float,
    deadline: Deadline,
    batch: int,
) -> list[GroupSnapshot]:
    """`listed` (group id -> type) described `batch` groups per request."""
    groups: list[GroupSnapshot] = []
    for chunk in _chunks(list(listed), batch):
        futures = admin.describe_consumer_groups(chunk, request_timeout=request_s)
        for group_id in chunk:
            group = GroupSnapshot(group_id=group_id, type=listed[group_id])
            try:
                description = futures[group_id].result(
                    timeout=deadline.wait(request_s, "the group descriptions")
                )
            except ClusterUnavailable:
                raise
            except FutureTimeout:
                group.fail("describe", "no reply within the request timeout")
                groups.append(group)
                continue
            except Exception as exc:  # a group's failure is written, not raised
                if error_code(exc) in GONE_CODES:
                    continue
                group.fail("describe", error_text(exc))
                groups.append(group)
                continue
            _fill(group, description)
            if group.state not in GONE_STATES:
                groups.append(group)
    return groups


def _fill(group: GroupSnapshot, description: Any) -> None:
    group.type = type_name(getattr(description, "type", None)) or group.type
    group.simple = description.is_simple_consumer_group
    group.state = state_name(description.state)
    group.assignment_strategy = description.partition_assignor or None
    node = description.coordinator
    if node is not None:
        group.coordinator = Coordinator(node.host, node.port, node.id, getattr(node, "rack", None))
    group.members = [
        MemberSnapshot(
            member_id=m.member_id,
            client_id=m.client_id,
            host=m.host,
            group_instance_id=m.group_instance_id,
            assignment=_tps(m.assignment),
            target_assignment=_tps(m.target_assignment)
            if getattr(m, "target_assignment", None) is not None
            else None,
        )
        for m in description.members
    ]
    if group.type == GroupType.CONSUMER and group.state == UNKNOWN_STATE and _reconciling(group):
        # librdkafka (2.16) has no Assigning/Reconciling and reports both as Unknown;
        # KIP-848 calls a group whose members have not all reached their target
        # assignment Reconciling, and replay must not read it as a settled snapshot.
        group.state, group.state_reported = RECONCILING, UNKNOWN_STATE


def _reconciling(group: GroupSnapshot) -> bool:
    return any(
        m.target_assignment is not None and sorted(m.assignment) != sorted(m.target_assignment)
        for m in group.members
    )


def _tps(assignment: Any) -> list[TopicPartitionKey]:
    if assignment is None:
        return []
    return [(tp.topic, tp.partition) for tp in assignment.topic_partitions or []]


def read_committed(
    admin: AdminClientLike,
    groups: list[GroupSnapshot],
    request_s: float,
    deadline: Deadline,
    in_flight: int,
) -> None:
    """Fill each described group's committed offsets; a failure fails the group (its
    members without offsets would make ingest infer subscriptions from nothing)."""
    pending: deque[tuple[GroupSnapshot, Future]] = deque()

    def settle(group: GroupSnapshot, future: Future) -> None:
        try:
            result = future.result(timeout=deadline.wait(request_s, "the committed offsets"))
        except ClusterUnavailable:
            raise
        except FutureTimeout:
            group.fail("offsets", "no reply within the request timeout")
            return
        except Exception as exc:  # a group's failure is written, not raised
            group.fail("offsets", error_text(exc))
            return
        for tp in result.topic_partitions or []:
            if tp.error is None and tp.offset >= 0:
                epoch = (
                    tp.leader_epoch
                    if tp.leader_epoch is not None and tp.leader_epoch >= 0
                    else None
                )
                group.committed[(tp.topic, tp.partition)] = (tp.offset, epoch)

    for group in groups:
        if group.error is not None:
            continue
        request = [ConsumerGroupTopicPartitions(group.group_id)]
        futures = admin.list_consumer_group_offsets(request, request_timeout=request_s)
        pending.append((group, futures[group.group_id]))
        if len(pending) >= in_flight:
            settle(*pending.popleft())
    while pending:
        settle(*pending.popleft())


def describe_topics(
    admin: AdminClientLike, request_s: float, deadline: Deadline, batch: int
) -> list[TopicSnapshot]:
    # list_topics is synchronous: its timeout is the whole wait.
    metadata = admin.list_topics(timeout=deadline.wait(request_s, "the topic listing", 0.0))
    names = sorted(metadata.topics)
    topics: list[TopicSnapshot] = []
    for chunk in _chunks(names, batch):
        futures = admin.describe_topics(TopicCollection(chunk), request_timeout=request_s)
        for name in chunk:
            try:
                description = futures[name].result(
                    timeout=deadline.wait(request_s, "the topic descriptions")
                )
            except ClusterUnavailable:
                raise
            except Exception as exc:  # a deleted topic: leave it out
                log.debug("topic %s not described: %s", name, error_text(exc))
                continue
            topics.append(
                TopicSnapshot(
                    name=description.name,
                    topic_id=kafka_uuid(description.topic_id),
                    partitions=tuple(
                        PartitionInfo(
                            partition=p.id,
                            leader=p.leader.id if p.leader is not None else None,
                            replicas=tuple(n.id for n in p.replicas),
                            isr=tuple(n.id for n in p.isr),
                        )
                        for p in description.partitions
                    ),
                )
            )
    return topics


def describe_brokers(
    admin: AdminClientLike, request_s: float, deadline: Deadline
) -> list[BrokerSnapshot]:
    """Every node of the cluster description with its rack (client.rack's counterpart)."""
    future = admin.describe_cluster(request_timeout=request_s)
    described = future.result(timeout=deadline.wait(request_s, "the cluster description"))
    return sorted((BrokerSnapshot(n.id, n.rack) for n in described.nodes), key=lambda b: b.id)


def kafka_uuid(uuid: Any) -> str | None:
    """A topic id as Kafka prints it (Uuid.toString: URL-safe base64, no padding);
    confluent-kafka's str() gives standard base64 ('+', '/' where Kafka has '-', '_')."""
    if uuid is None:
        return None
    return str(uuid).rstrip("=").replace("+", "-").replace("/", "_")


def log_offsets(
    admin: AdminClientLike,
    partitions: list[TopicPartitionKey],
    spec: Any,
    request_s: float,
    deadline: Deadline,
    batch: int,
) -> dict[TopicPartitionKey, int]:
    """The offsets `spec` names (latest: log end, earliest: log start) per partition;
    partitions the broker could not answer for are left out (null in the snapshot)."""
    found: dict[TopicPartitionKey, int] = {}
    for chunk in _chunks(partitions, batch):
        request = {TopicPartition(t, p): spec for t, p in chunk}
        futures = admin.list_offsets(request, request_timeout=request_s)
        for tp, future in futures.items():
            try:
                info = future.result(timeout=deadline.wait(request_s, "the log offsets"))
            except ClusterUnavailable:
                raise
            except Exception:  # unknown partition: its offset stays null
                continue
            if info.offset >= 0:
                found[(tp.topic, tp.partition)] = info.offset
    return found


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
