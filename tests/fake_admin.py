"""An in-memory cluster behind the AdminClient calls the agent makes, answering with
confluent-kafka's own result classes: the unit tests' and the benchmark's stand-in for
a live cluster (no broker, no network). Trouble is scripted: `down_cycles` failed
listings, `delay_s` per call (the caller waits: a slow cluster), `latency_s` per reply
(futures complete later on a timer thread, as librdkafka's do: concurrent requests
overlap), `describe_errors` / `offset_errors` per group.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import random
import threading
import time
import zlib
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    Node,
    TopicPartition,
    TopicPartitionInfo,
    Uuid,
)
from confluent_kafka.admin import (
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ListConsumerGroupsResult,
    ListOffsetsResultInfo,
    MemberAssignment,
    MemberDescription,
    TopicDescription,
)

TP = tuple[str, int]
BROKERS = (1, 2, 3)


@dataclass
class FakeMember:
    member_id: str
    client_id: str
    host: str
    assignment: list[TP]
    group_instance_id: str | None = None
    target_assignment: list[TP] | None = None


@dataclass
class FakeGroup:
    group_id: str
    type: ConsumerGroupType = ConsumerGroupType.CLASSIC
    state: ConsumerGroupState = ConsumerGroupState.STABLE
    assignor: str = "range"
    coordinator: int = 1
    members: list[FakeMember] = field(default_factory=list)
    committed: dict[TP, int] = field(default_factory=dict)


@dataclass
class FakeCluster:
    topics: dict[str, int] = field(default_factory=dict)  # name -> partition count
    groups: dict[str, FakeGroup] = field(default_factory=dict)
    log_end: dict[TP, int] = field(default_factory=dict)
    log_start: dict[TP, int] = field(default_factory=dict)
    down_cycles: int = 0  # how many group listings fail before the cluster answers
    listing_errors: list[int] = field(default_factory=list)  # brokers whose ListGroups fails
    delay_s: float = 0.0  # slept in every call: a slow cluster
    latency_s: float = 0.0  # each reply arrives this much later, requests overlapping
    describe_errors: dict[str, int] = field(default_factory=dict)  # group -> KafkaError code
    offset_errors: dict[str, int] = field(default_factory=dict)
    racks: dict[int, str | None] = field(default_factory=lambda: {b: f"rack-{b}" for b in BROKERS})
    describe_cluster_error: int | None = None  # a KafkaError code
    calls: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_group(self, group: FakeGroup) -> FakeGroup:
        self.groups[group.group_id] = group
        return group


def _settle(future: Future, value: Any, error: BaseException | None) -> None:
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _done(value: Any = None, error: BaseException | None = None) -> Future:
    future: Future = Future()
    _settle(future, value, error)
    return future


class _Replies:
    """Completes futures at their due time on one daemon thread."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Future, Any, BaseException | None]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        threading.Thread(target=self._run, name="fake-admin-replies", daemon=True).start()

    def later(self, delay: float, value: Any = None, error: BaseException | None = None) -> Future:
        future: Future = Future()
        with self._wake:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), future,
                                       value, error))  # fmt: skip
            self._wake.notify()
        return future

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, future, value, error = heapq.heappop(self._due)
            _settle(future, value, error)


def _failure(code: int) -> KafkaException:
    return KafkaException(KafkaError(code))


def _listing_result(
    valid: list[ConsumerGroupListing], errors: list[KafkaError]
) -> ListConsumerGroupsResult:
    """ListConsumerGroupsResult as librdkafka builds it: its errors are bare KafkaError
    objects (not exceptions), which error_text reads."""
    # confluent-kafka annotates `errors` as list[Exception]; its C code fills it with
    # KafkaError, which is no Exception subclass.
    return ListConsumerGroupsResult(valid=valid, errors=errors)  # type: ignore[arg-type]


@functools.cache
def _node(broker: int) -> Node:
    return Node(broker, "127.0.0.1", 9090 + broker, rack=f"rack-{broker}")


class FakeAdmin:
    """The six AdminClient calls (admin.AdminClientLike) over one FakeCluster."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self._replies = _Replies() if cluster.latency_s > 0 else None

    def _reply(self, value: Any = None, error: BaseException | None = None) -> Future:
        if self._replies is None:
            return _done(value, error)
        return self._replies.later(self.cluster.latency_s, value, error)

    def _call(self, name: str) -> None:
        with self.cluster._lock:
            self.cluster.calls.append(name)
        if self.cluster.delay_s:
            time.sleep(self.cluster.delay_s)

    def list_consumer_groups(self, **_: Any) -> Future:
        self._call("list_consumer_groups")
        with self.cluster._lock:
            if self.cluster.down_cycles > 0:
                # What librdkafka returns for an unreachable cluster: errors, no groups.
                self.cluster.down_cycles -= 1
                down = [KafkaError(KafkaError._TRANSPORT)]
                return self._reply(_listing_result([], down))
        listings = [
            ConsumerGroupListing(g.group_id, False, g.state, g.type)
            for g in self.cluster.groups.values()
        ]
        errors = [KafkaError(code) for code in self.cluster.listing_errors]
        return self._reply(_listing_result(listings, errors))

    def describe_consumer_groups(self, group_ids: list[str], **_: Any) -> dict[str, Future]:
        self._call("describe_consumer_groups")
        return {g: self._describe(g) for g in group_ids}

    def _describe(self, group_id: str) -> Future:
        if group_id in self.cluster.describe_errors:
            return self._reply(error=_failure(self.cluster.describe_errors[group_id]))
        group = self.cluster.groups.get(group_id)
        if group is None:
            return self._reply(error=_failure(KafkaError.GROUP_ID_NOT_FOUND))
        members = [
            MemberDescription(
                m.member_id,
                m.client_id,
                m.host,
                MemberAssignment([TopicPartition(t, p) for t, p in m.assignment]),
                m.group_instance_id,
                None
                if m.target_assignment is None
                else MemberAssignment([TopicPartition(t, p) for t, p in m.target_assignment]),
            )
            for m in group.members
        ]
        return self._reply(
            ConsumerGroupDescription(
                group.group_id,
                False,
                members,
                group.assignor,
                group.state,
                _node(group.coordinator),
                type=group.type,
            )
        )

    def list_consumer_group_offsets(self, requests: list[Any], **_: Any) -> dict[str, Future]:
        self._call("list_consumer_group_offsets")
        (request,) = requests  # librdkafka takes one group per request
        group_id = request.group_id
        if group_id in self.cluster.offset_errors:
            return {group_id: self._reply(error=_failure(self.cluster.offset_errors[group_id]))}
        group = self.cluster.groups[group_id]
        partitions = [
            TopicPartition(t, p, offset, leader_epoch=3)
            for (t, p), offset in sorted(group.committed.items())
        ]
        return {group_id: self._reply(ConsumerGroupTopicPartitions(group_id, partitions))}

    def list_offsets(self, topic_partition_offsets: dict[Any, Any], **_: Any) -> dict[Any, Future]:
        self._call("list_offsets")
        futures = {}
        for tp, spec in topic_partition_offsets.items():
            offsets = self.cluster.log_start if "Earliest" in type(spec).__name__ else None
            offsets = self.cluster.log_end if offsets is None else offsets
            key = (tp.topic, tp.partition)
            if key not in offsets:
                futures[tp] = self._reply(error=_failure(KafkaError.UNKNOWN_TOPIC_OR_PART))
            else:
                futures[tp] = self._reply(ListOffsetsResultInfo(offsets[key], -1, 0))
        return futures

    def list_topics(self, *_: Any, **__: Any) -> Any:
        self._call("list_topics")
        return SimpleNamespace(topics={name: None for name in self.cluster.topics})

    def describe_cluster(self, **_: Any) -> Future:
        self._call("describe_cluster")
        if self.cluster.describe_cluster_error is not None:
            return self._reply(error=_failure(self.cluster.describe_cluster_error))
        nodes = [Node(b, "127.0.0.1", 9090 + b, rack) for b, rack in self.cluster.racks.items()]
        return self._reply(SimpleNamespace(nodes=nodes))

    def describe_topics(self, topics: Any, **_: Any) -> dict[str, Future]:
        self._call("describe_topics")
        futures = {}
        for name in topics.topic_names:
            count = self.cluster.topics[name]
            partitions = [
                TopicPartitionInfo(
                    p,
                    _node(BROKERS[p % 3]),
                    [_node(BROKERS[(p + i) % 3]) for i in range(3)],
                    [_node(BROKERS[(p + i) % 3]) for i in range(3)],
                )
                for p in range(count)
            ]
            topic_id = Uuid(zlib.crc32(name.encode()), 1 + zlib.crc32(name[::-1].encode()))
            futures[name] = self._reply(TopicDescription(name, topic_id, False, partitions))
        return futures


def synthetic_cluster(groups: int, partitions: int, seed: int = 7) -> FakeCluster:
    """A cluster of `groups` classic groups over topics of 20 partitions totalling
    `partitions`, each group consuming one topic with 4 members, every partition
    committed (the benchmark's 10,000 groups / 200,000 partitions)."""
    rng = random.Random(seed)
    per_topic = 20
    cluster = FakeCluster()
    for t in range(partitions // per_topic):
        cluster.topics[f"topic-{t:05d}"] = per_topic
    names = sorted(cluster.topics)
    for name in names:
        for p in range(per_topic):
            cluster.log_start[(name, p)] = rng.randrange(0, 1000)
            cluster.log_end[(name, p)] = rng.randrange(1_000_000, 2_000_000)
    for g in range(groups):
        topic = names[g % len(names)]
        group = FakeGroup(group_id=f"group-{g:05d}", coordinator=BROKERS[g % 3])
        for m in range(4):
            group.members.append(
                FakeMember(
                    member_id=f"consumer-{g}-{m}-{rng.getrandbits(64):016x}",
                    client_id=f"consumer-{g}-{m}",
                    host=f"/10.0.{g % 250}.{m}",
                    assignment=[(topic, p) for p in range(m, per_topic, 4)],
                )
            )
        group.committed = {
            (topic, p): cluster.log_end[(topic, p)] - rng.randrange(0, 500)
            for p in range(per_topic)
        }
        cluster.add_group(group)
    return cluster
