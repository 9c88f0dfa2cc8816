"""A seeded fleet simulation whose state is captured the way operators capture real ones.

Each cluster runs one Kafka release's tooling (3.6, 3.9 or 4.1 output formats). Groups
churn the way real fleets do: rolling deploys (members replaced one by one with new
ids), crash loops, autoscaling on lag, partition expansion, a regex subscription picking
up a new topic, static members restarting without a rebalance, idle (Empty) groups, and
captures taken mid-rebalance. Assignments come from our own assignors with each group's
strategy; produce rates per partition come from Zipf-distributed keys placed by Kafka's
default partitioner (murmur2), and lag follows each member's consumption capacity.
Brokers and consumers run in zones (generate/zones.py), and every capture holds the
brokers' views that cross-zone traffic is measured with (generate/broker_views.py).
"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from fleet_rebalance.assignors import Subscription, TopicPartition, get_assignor
from fleet_rebalance.assignors.java import java_abs, string_hash
from fleet_rebalance.assignors.types import PartitionRacks
from fleet_rebalance.generate import broker_views, render, zones
from fleet_rebalance.generate.coordinator_lines import (
    STEP,
    SYNC,
    Coordinator,
    LeavingMember,
    housekeeping,
)
from fleet_rebalance.generate.cross_zone_truth import CrossZoneTruth, cross_zone_path
from fleet_rebalance.generate.partitioner import partition_for
from fleet_rebalance.generate.replicas import assign_replicas_to_brokers
from fleet_rebalance.generate.share_streams import write_share_streams
from fleet_rebalance.vocabulary import Cause

VERSIONS: tuple[render.KafkaVersion, ...] = ("3.6", "3.9", "4.1")
# A group's profile is PROFILES[its index % 10]; the sample's 8 groups per cluster take
# the first eight. What each shows (causes as rebalance_causes names them):
# - stable: nothing but its initial join;
# - rolling_deploy: StatefulSet-style restarts (a new member id, the same client id),
#   each a LeaveGroup then a JoinGroup: deploy_restart, the static-membership change;
# - heartbeat_expiry: consumers stall past session.timeout.ms (long GC pauses): the
#   coordinator expires one, and it rejoins a few seconds later with a new member id
#   from the same host and client id: session_timeout twice, the session-timeout change.
#   In the hour whose logs were never collected (write_fleet's gap) the captures alone
#   see a member replaced: deploy_restart;
# - autoscale: under-provisioned, lags (Burrow WARN), scales out on lag and in when idle;
# - partition_expansion: a topic grows: partitions_added for every group reading it;
# - regex_new_topic: a pattern subscription picks up a new topic. The rejoin that starts
#   the rebalance is logged as the 3.6 cluster's old clients (no KIP-800 reason) send
#   it (a leader rejoin), a metadata update on 3.9, an epoch bump on 4.1's KIP-848
#   group; the next capture shows the new topic: subscription_changed;
# - poison_pill: a record that cannot be processed: the stuck consumer's poll timeout
#   (poll_timeout), its rejoin 25 minutes later (scale_out), and the partition's offset
#   never moving again (Burrow STALL, so the group is ERR): the stuck-partition change;
# - crash_loop: one pod in CrashLoopBackOff: its consumer dies without leaving the group
#   eight times a day, its session expires 45 s later and Kubernetes restarts it in place
#   (same host, same client id, a new member id) after a back-off. A restart faster than
#   the session timeout joins while the dead member is still in the group: one classic
#   generation waits for the expiry. session_timeout; the fix_crash_loop change;
# - static_restart: static members restarting within the session timeout (no rebalance),
#   and once in a while one down past it: its session expires and it rejoins with its
#   group.instance.id, two rebalances (deploy_restart) a longer session timeout avoids;
# - idle: no members (Empty).
PROFILES = (
    "stable",
    "rolling_deploy",
    "heartbeat_expiry",
    "autoscale",
    "partition_expansion",
    "regex_new_topic",
    "poison_pill",
    "crash_loop",
    "static_restart",
    "idle",
)
# Groups at these indexes are built first, every cluster's in turn, and those after them
# once every cluster has its first ones: a profile added to PROFILES keeps the names and
# seeds of the groups that existed before it.
FIRST_BUILT = 7
SESSION_TIMEOUT = dt.timedelta(seconds=45)  # the 3.x+ client default (KIP-735)
FOLLOW_UP = dt.timedelta(milliseconds=200)  # a cooperative round's revocation and rejoin
CLOSING = "the consumer is being closed"
POLL_TIMEOUT = "consumer poll timeout has expired."
REVOKED = "need to revoke partitions and re-join"
TRUTH_SUFFIX = ".truth.jsonl"
CLASSIC = (("range", 3), ("cooperative-sticky", 3), ("sticky", 1), ("roundrobin", 2))
OFFSETS_TOPIC_PARTITIONS = 50
KEYS = 500
REGEX_PREFIX = "events-"
# Where a group's consumers run (generate/zones.py): in zones drawn from the seed, except
# two groups of the first cluster that show both sides of cross-zone traffic. Its first
# (stable) group is rack-aware: its members set client.rack and its assignor places
# them (KIP-881) so that each reads only partitions led in its own zone. Its second
# (rolling_deploy) group runs every consumer in the cluster's first zone, so it reads
# most partitions across zones, which a rack-aware assignment would save.
ZonePlan = Literal["drawn", "rack_aware", "one_zone"]
ZONE_PLANS: dict[tuple[int, int], ZonePlan] = {(0, 0): "rack_aware", (0, 1): "one_zone"}
ONE_ZONE = 0  # the zone of a one_zone group: its cluster's first
BROKERS_FILE = "brokers.txt"
LOG_DIRS_FILE = "log-dirs.txt"


@dataclass(frozen=True)
class FleetSpec:
    clusters: int = 3
    groups_per_cluster: int = 8
    topics_per_cluster: int = 5
    # How many topics each group reads, drawn uniformly from this tuple.
    topics_per_group: tuple[int, ...] = (1, 1, 2, 3)
    # 0: every group picks from the same topics_per_cluster topics (the small sample).
    # n: the cluster gets enough topics that each is read by about n groups, as in real
    # fleets, so a partition expansion rebalances a few groups, not a fixed share of all.
    groups_per_topic: int = 0
    start: dt.datetime = dt.datetime(2026, 11, 19, 22, 0, tzinfo=dt.UTC)
    hours: float = 12.0
    interval_minutes: int = 20
    # The brokers' views cross-zone traffic is measured with (brokers.txt hourly,
    # log-dirs.txt every capture) and its truth (cross_zone_path). benchmarks/end_to_end.py
    # leaves them out unless --zones, so its days stay comparable with earlier ones.
    broker_views: bool = True
    seed: int = 20261120
    # A share group and a streams group on each 4.1 + cluster (generate/share_streams.py),
    # written by a step of their own: every other file is the same with or without them.
    # The generate job writes them (data/sample has them); the benchmarks and the tests
    # that build their own fleets leave them out unless they ask.
    share_streams: bool = False


BASE_TOPICS = (
    "orders",
    "payments",
    "clickstream",
    "audit",
    "inventory",
    "shipments",
    "emails",
    "metrics",
)


def topic_names_for(spec: FleetSpec) -> list[str]:
    """A cluster's plain topics: orders, payments, ..., then orders-1, payments-1, ..."""
    count = spec.topics_per_cluster
    if spec.groups_per_topic:
        reads = spec.groups_per_cluster * sum(spec.topics_per_group) / len(spec.topics_per_group)
        count = max(count, math.ceil(reads / spec.groups_per_topic))
    return [
        BASE_TOPICS[i % len(BASE_TOPICS)]
        + (f"-{i // len(BASE_TOPICS)}" if i >= len(BASE_TOPICS) else "")
        for i in range(count)
    ]


@dataclass
class Member:
    member_id: str
    instance_id: str | None
    host: str
    client_id: str
    capacity: float
    owned: list[TopicPartition] = field(default_factory=list)

    @property
    def zone(self) -> str | None:
        """The zone whose subnet holds the member's host (generate/zones.py)."""
        return zones.host_zone(self.host)


@dataclass
class Group:
    name: str
    strategy: str
    kip848: bool
    profile: str
    topics: list[str]
    members: dict[str, Member] = field(default_factory=dict)
    generation: int = 0
    committed: dict[TopicPartition, float] = field(default_factory=dict)
    rebalancing_until: dt.datetime | None = None
    next_client: int = 1
    # Partitions whose committed offset no longer moves (a poison record).
    stuck: set[TopicPartition] = field(default_factory=set)
    # Consumers that left and will rejoin (poison_pill).
    returning: list[Member] = field(default_factory=list)
    # The client id of the pod that crash-loops (crash_loop).
    crash_client: str | None = None
    zone_plan: ZonePlan = "drawn"

    @property
    def offsets_partition(self) -> int:
        return java_abs(string_hash(self.name)) % OFFSETS_TOPIC_PARTITIONS


@dataclass
class Cluster:
    name: str
    index: int
    version: render.KafkaVersion
    brokers: dict[int, str]  # broker id -> its zone (broker.rack)
    topics: dict[str, int]
    topic_ids: dict[str, str]
    rates: dict[str, float]
    end_offsets: dict[TopicPartition, float] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)
    log_lines: dict[tuple[int, str], list[str]] = field(default_factory=dict)


class TruthRecord(TypedDict):
    """One line of the ground truth file (truth_path): a Rebalance as JSON."""

    cluster: str
    group_id: str
    generation: int
    started_at: str  # ISO-8601 UTC, milliseconds
    ended_at: str
    members: list[str]
    cause: str
    follow_up: bool
    logged: bool  # whether the coordinator's log lines of it were written


@dataclass(frozen=True)
class Rebalance:
    """One generation the simulated coordinator went through: the ground truth the
    pipeline's rebalance_events and rebalance_causes are tested against."""

    cluster: str
    group_id: str
    generation: int
    started_at: dt.datetime
    ended_at: dt.datetime
    members: tuple[str, ...]  # member ids after it
    cause: str
    # A cooperative group's second round (the members that revoked partitions rejoin):
    # part of the rebalance before it, not one of its own.
    follow_up: bool = False

    def as_json(self, logged: bool) -> TruthRecord:
        return {
            "cluster": self.cluster,
            "group_id": self.group_id,
            "generation": self.generation,
            "started_at": _iso(self.started_at),
            "ended_at": _iso(self.ended_at),
            "members": list(self.members),
            "cause": self.cause,
            "follow_up": self.follow_up,
            "logged": logged,
        }


class Fleet:
    def __init__(self, spec: FleetSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        # Consumers' zones come from a stream of their own, so drawing them left every
        # other choice of the fleet as it was.
        self._zone_rng = random.Random(f"{spec.seed}/zones")
        self._shares: dict[tuple[str, int], list[float]] = {}
        self.rebalances: list[Rebalance] = []
        self.clusters = [self._cluster(i) for i in range(spec.clusters)]
        for cluster in self.clusters:
            for g in range(FIRST_BUILT, spec.groups_per_cluster):
                cluster.groups.append(self._group(cluster, g))

    # -- construction -------------------------------------------------------------------
    def _cluster(self, index: int) -> Cluster:
        version = VERSIONS[index % len(VERSIONS)]
        name = ("prod-east", "prod-west", "lab")[index] if index < 3 else f"cluster-{index}"
        brokers = {b: zones.broker_zone(index, b) for b in range(1, 4 + index % 3)}
        topic_names = topic_names_for(self.spec)
        topics = {t: self.rng.choice([3, 6, 6, 8, 12, 12, 24]) for t in topic_names}
        topics[f"{REGEX_PREFIX}web"] = 6
        cluster = Cluster(
            name=name,
            index=index,
            version=version,
            brokers=brokers,
            topics=topics,
            topic_ids={t: self._topic_id() for t in topics},
            rates={t: self.rng.lognormvariate(4.5, 1.0) for t in topics},
        )
        for tp in self._all_partitions(cluster):
            cluster.end_offsets[tp] = float(self.rng.randint(10_000, 5_000_000))
        for g in range(min(self.spec.groups_per_cluster, FIRST_BUILT)):
            cluster.groups.append(self._group(cluster, g))
        return cluster

    def _group(self, cluster: Cluster, index: int) -> Group:
        profile = PROFILES[index % len(PROFILES)]
        kip848 = cluster.version == "4.1" and index % 2 == 1
        strategy = (
            "uniform" if kip848 else self.rng.choice([s for s, w in CLASSIC for _ in range(w)])
        )
        plain = [t for t in cluster.topics if not t.startswith(REGEX_PREFIX)]
        topics = (
            [t for t in cluster.topics if t.startswith(REGEX_PREFIX)]
            if profile == "regex_new_topic"
            else self.rng.sample(
                plain, min(len(plain), self.rng.choice(self.spec.topics_per_group))
            )
        )
        name = (
            f"{self.rng.choice(['orders', 'billing', 'search', 'fraud', 'audit'])}-"
            f"{self.rng.choice(['processor', 'enricher', 'archiver', 'indexer'])}-{index}"
        )
        group = Group(
            name=name,
            strategy=strategy,
            kip848=kip848,
            profile=profile,
            topics=topics,
            zone_plan=ZONE_PLANS.get((cluster.index, index), "drawn"),
        )
        for tp in self._partitions_of(cluster, topics):
            group.committed[tp] = cluster.end_offsets[tp] - self.rng.randint(0, 5000)
        if profile != "idle":
            for _ in range(self.rng.randint(2, 5)):
                self._add_member(cluster, group, static=profile == "static_restart")
            if profile == "crash_loop":
                group.crash_client = next(iter(group.members.values())).client_id
            if group.zone_plan == "rack_aware":
                self._place_rack_aware(cluster, group)
            first = min(group.members)
            coordinator = self._coordinator(cluster, group)
            self._rebalance(
                cluster,
                group,
                self.spec.start,
                coordinator.join_reason(first),
                "initial",
                coordinator.pending(self.spec.start - STEP, first),
            )
        return group

    def _topic_id(self) -> str:
        return base64.urlsafe_b64encode(self.rng.randbytes(16)).decode().rstrip("=")

    def _member_id(self, group: Group, client_id: str, instance: str | None) -> str:
        if group.kip848:
            return base64.urlsafe_b64encode(self.rng.randbytes(16)).decode().rstrip("=")
        uuid = self.rng.randbytes(16).hex()
        uuid = f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:]}"
        return f"{instance or client_id}-{uuid}"

    def _add_member(
        self,
        cluster: Cluster,
        group: Group,
        static: bool = False,
        instance: str | None = None,
        client_id: str | None = None,
        host: str | None = None,
    ) -> Member:
        """A new member; `client_id` given: the same consumer restarted (a StatefulSet
        pod keeps its name, so its client.id, and gets a new address unless `host` says
        it kept its own: the same process, or a container restarted in its pod)."""
        if static and instance is None:
            instance = f"{group.name}-{len(group.members)}"
        if client_id is None:
            client_id = (
                f"consumer-{group.name}-{instance}"
                if instance
                else f"consumer-{group.name}-{group.next_client}"
            )
            group.next_client += 1
        load = sum(cluster.rates[t] for t in group.topics if t in cluster.topics)
        # Each member alone could nearly carry the group's load, as capacity is planned;
        # an autoscaled group is run lean and lags until it scales out.
        share = (0.35, 0.9) if group.profile == "autoscale" else (0.8, 1.6)
        member_id = self._member_id(group, client_id, instance)
        if host is None:
            third, fourth = self.rng.randint(0, 255), self.rng.randint(1, 254)
            zone = (
                ONE_ZONE
                if group.zone_plan == "one_zone"
                else self._zone_rng.randrange(len(zones.ZONE_SUFFIXES))
            )
            host = zones.consumer_host(cluster.index, zone, third, fourth)
        member = Member(
            member_id=member_id,
            instance_id=instance,
            host=host,
            client_id=client_id,
            capacity=load * self.rng.uniform(*share),
        )
        group.members[member.member_id] = member
        return member

    # -- produce and consume ------------------------------------------------------------
    def _all_partitions(self, cluster: Cluster) -> list[TopicPartition]:
        return self._partitions_of(cluster, list(cluster.topics))

    @staticmethod
    def _partitions_of(cluster: Cluster, topics: list[str]) -> list[TopicPartition]:
        return [
            TopicPartition(t, p)
            for t in topics
            if t in cluster.topics
            for p in range(cluster.topics[t])
        ]

    def _share(self, topic: str, partitions: int) -> list[float]:
        """Zipf-popular keys placed by murmur2: the skew real keyed topics show."""
        key = (topic, partitions)
        if key not in self._shares:
            weights = [0.0] * partitions
            for rank in range(1, KEYS + 1):
                weights[partition_for(f"{topic}-key-{rank}".encode(), partitions)] += 1 / rank**1.1
            total = sum(weights)
            self._shares[key] = [w / total for w in weights]
        return self._shares[key]

    def _advance(self, cluster: Cluster, seconds: float) -> None:
        for topic, count in cluster.topics.items():
            for p, share in enumerate(self._share(topic, count)):
                tp = TopicPartition(topic, p)
                cluster.end_offsets[tp] = (
                    cluster.end_offsets.get(tp, 0.0) + cluster.rates[topic] * share * seconds
                )
        for group in cluster.groups:
            for member in group.members.values():
                self._consume(cluster, group, member, seconds)

    def _consume(self, cluster: Cluster, group: Group, member: Member, seconds: float) -> None:
        """A member's fetches go where the data is: its capacity over the interval is
        shared in proportion to each partition's backlog. What it has fetched but not yet
        committed (a few seconds of a partition's traffic, varying capture to capture)
        stays lag, so a caught-up group shows a small, uneven lag, as real ones do."""
        live = [tp for tp in member.owned if tp not in group.stuck]
        if not live:
            return
        ends = {tp: cluster.end_offsets[tp] for tp in live}
        backlog = {tp: ends[tp] - group.committed.get(tp, ends[tp]) for tp in live}
        total = sum(backlog.values())
        budget = member.capacity * seconds
        for tp in live:
            done = group.committed.get(tp, ends[tp])
            take = backlog[tp] if total <= budget else budget * backlog[tp] / total
            in_flight = self._rate(cluster, tp) * self.rng.uniform(0.5, 8.0)
            group.committed[tp] = max(done, min(ends[tp] - in_flight, done + take))

    def _rate(self, cluster: Cluster, tp: TopicPartition) -> float:
        """Messages per second into one partition."""
        count = cluster.topics[tp.topic]
        return cluster.rates[tp.topic] * self._share(tp.topic, count)[tp.partition]

    # -- rebalances ---------------------------------------------------------------------

    # -- rebalances ---------------------------------------------------------------------
    def _coordinator(self, cluster: Cluster, group: Group) -> Coordinator:
        brokers = sorted(cluster.brokers)
        broker = brokers[group.offsets_partition % len(brokers)]
        return Coordinator(
            cluster.version, broker, group.offsets_partition, group.name, group.kip848
        )

    def _log(self, cluster: Cluster, coordinator: Coordinator, lines: list[str]) -> None:
        for line in lines:
            hour = line[1:14].replace(" ", "-")  # [YYYY-MM-DD HH -> YYYY-MM-DD-HH
            cluster.log_lines.setdefault((coordinator.broker, hour), []).append(line)

    def _rebalance(
        self,
        cluster: Cluster,
        group: Group,
        at: dt.datetime,
        reason: str,
        cause: str,
        before: Sequence[str] = (),
        after: Sequence[str] = (),
        ends: dt.datetime | None = None,
        follow_up: bool = False,
    ) -> dt.datetime:
        """A generation starting at `at` (the member lines `before` it and `after` its
        start), assigned with the group's strategy; a cooperative classic group whose
        first round revoked partitions rebalances again for them (KIP-429). Returns when
        the last round ended."""
        counts = self._counts(cluster, group)
        assignor = get_assignor(group.strategy)
        racks: PartitionRacks | None = None
        zone_of: dict[str, str | None] | None = None
        if group.zone_plan == "rack_aware":
            racks = self._leader_racks(cluster, counts)
            zone_of = {m: member.zone for m, member in group.members.items()}
        result = assignor.assign(counts, self._subscriptions(cluster, group, zone_of), racks)
        revoking = sorted(
            k for k, m in group.members.items() if set(m.owned) - set(result.get(k, ()))
        )
        for m, member in group.members.items():
            member.owned = list(result.get(m, []))
            for tp in member.owned:
                group.committed.setdefault(tp, cluster.end_offsets.get(tp, 0.0))
        group.generation += 1
        coordinator = self._coordinator(cluster, group)
        leader = min(group.members, default="-")
        static = sum(1 for m in group.members.values() if m.instance_id)
        lines, end = coordinator.generation(
            at, group.generation, reason, len(group.members), leader, ends, static
        )
        self._log(cluster, coordinator, [*before, lines[0], *after, *lines[1:]])
        members = tuple(sorted(group.members))
        self.rebalances.append(
            Rebalance(
                cluster.name, group.name, group.generation, at, end, members, cause, follow_up
            )
        )
        group.rebalancing_until = end
        if revoking and assignor.protocol == "cooperative" and not group.kip848:
            # The members that gave partitions up rejoin at once; the first JoinGroup the
            # coordinator sees starts the round (the leader's says so).
            first = leader if leader in revoking else revoking[0]
            how = (
                f"Leader {first} re-joining group during Stable"
                if first == leader
                else f"Updating metadata for member {first} during Stable"
            )
            again = f"{how}; client reason: {REVOKED}"
            end = self._rebalance(cluster, group, end + FOLLOW_UP, again, cause, follow_up=True)
        return end

    @staticmethod
    def _counts(cluster: Cluster, group: Group) -> dict[str, int]:
        return {t: cluster.topics[t] for t in group.topics if t in cluster.topics}

    @staticmethod
    def _subscriptions(
        cluster: Cluster, group: Group, zone_of: Mapping[str, str | None] | None
    ) -> dict[str, Subscription]:
        """Each member's JoinGroup metadata; `zone_of`: the client.rack of a rack_aware
        group's members. Any other member carries broker 1's zone, which no assignor reads
        without the partitions' racks."""
        return {
            m: Subscription(
                group.topics,
                member.owned,
                group.generation,
                member.instance_id,
                zone_of[m] if zone_of is not None else cluster.brokers.get(1),
            )
            for m, member in group.members.items()
        }

    @staticmethod
    def _leader_racks(cluster: Cluster, counts: Mapping[str, int]) -> PartitionRacks:
        """Each partition's rack as a rack_aware group's assignor is told it: its leader's
        zone. KIP-881 matches a member's client.rack with any replica's rack; a cluster
        whose partitions each have a replica in every zone would match everything, so the
        group is racked by where it reads from without follower fetching, the leader."""
        return {
            TopicPartition(topic, p): frozenset({cluster.brokers[replicas[0]]})
            for topic, count in counts.items()
            for p, replicas in Fleet._replicas(cluster, topic, count).items()
        }

    def _place_rack_aware(self, cluster: Cluster, group: Group) -> None:
        """Moves a rack_aware group's members to the zones in which its assignor, racked
        (_leader_racks), gives each only partitions led in its own zone: the first such
        choice in a fixed order (members sorted, zones in order), else the first with the
        fewest partitions read across zones (fewer members than zones led from, or an
        assignor without rack awareness: roundrobin). Hosts keep their place in the /18."""
        members = sorted(group.members)
        counts = self._counts(cluster, group)
        racks = self._leader_racks(cluster, counts)
        assignor = get_assignor(group.strategy)
        names = zones.cluster_zones(cluster.index)
        best: tuple[int, tuple[int, ...]] | None = None
        for choice in itertools.product(range(len(names)), repeat=len(members)):
            zone_of = {m: names[z] for m, z in zip(members, choice, strict=True)}
            result = assignor.assign(counts, self._subscriptions(cluster, group, zone_of), racks)
            crossing = sum(zone_of[m] not in racks[tp] for m, tps in result.items() for tp in tps)
            if best is None or crossing < best[0]:
                best = (crossing, choice)
            if crossing == 0:
                break
        if best is None:
            return
        for m, z in zip(members, best[1], strict=True):
            group.members[m].host = zones.moved_to_zone(group.members[m].host, z)

    def _join(
        self, cluster: Cluster, group: Group, member: Member, at: dt.datetime, cause: str
    ) -> dt.datetime:
        """A new dynamic member's JoinGroup and the rebalance it starts."""
        coordinator = self._coordinator(cluster, group)
        return self._rebalance(
            cluster,
            group,
            at,
            coordinator.join_reason(member.member_id),
            cause,
            coordinator.pending(at - STEP, member.member_id),
        )

    def _leave(
        self,
        cluster: Cluster,
        group: Group,
        member: Member,
        at: dt.datetime,
        client_reason: str,
        cause: str,
    ) -> dt.datetime:
        """An explicit LeaveGroup (the member is already out of group.members)."""
        coordinator = self._coordinator(cluster, group)
        leaving = LeavingMember(member.member_id, member.client_id, member.host, group.strategy)
        return self._rebalance(
            cluster,
            group,
            at,
            coordinator.leave_reason(member.member_id, client_reason),
            cause,
            coordinator.left(at - STEP, leaving, client_reason),
            coordinator.leave_after(at + STEP, leaving, client_reason),
        )

    def _expire(
        self, cluster: Cluster, group: Group, member: Member, at: dt.datetime, cause: str
    ) -> dt.datetime:
        """A member whose session expired (the member is already out of group.members)."""
        coordinator = self._coordinator(cluster, group)
        return self._rebalance(
            cluster,
            group,
            at,
            coordinator.expiry_reason(member.member_id),
            cause,
            coordinator.failed(at - STEP, member.member_id),
        )

    def _churn(self, cluster: Cluster, group: Group, at: dt.datetime, step: int) -> None:
        rng, profile = self.rng, group.profile
        # Each change is over before the capture at `at` (so it shows where it ended): a
        # rolling deploy of five pods takes about six minutes.
        long = profile in ("rolling_deploy", "heartbeat_expiry", "crash_loop")
        when = at - dt.timedelta(seconds=rng.randint(480, 1080) if long else rng.randint(30, 500))
        if profile == "rolling_deploy" and step % 18 == 9 and group.members:
            for old in list(group.members):
                member = group.members.pop(old)
                self._leave(cluster, group, member, when, CLOSING, Cause.DEPLOY_RESTART)
                new = self._add_member(cluster, group, client_id=member.client_id)
                when += dt.timedelta(seconds=rng.randint(15, 40))
                when = self._join(cluster, group, new, when, Cause.DEPLOY_RESTART)
                when += dt.timedelta(seconds=30)
        elif profile == "heartbeat_expiry" and 12 <= step % 24 <= 17 and group.members:
            # The longest-standing member stalls: each comes back as the newest.
            member = group.members.pop(next(iter(group.members)))
            when = self._expire(cluster, group, member, when, Cause.SESSION_TIMEOUT)
            back = self._add_member(cluster, group, client_id=member.client_id, host=member.host)
            when += dt.timedelta(seconds=rng.randint(2, 20))
            self._join(cluster, group, back, when, Cause.SESSION_TIMEOUT)
        elif profile == "crash_loop" and 4 <= step <= 27 and step % 3 == 1 and group.members:
            self._crash(cluster, group, when)
        elif profile == "autoscale" and step % 6 == 3:
            lag = sum(
                cluster.end_offsets[tp] - group.committed.get(tp, 0)
                for m in group.members.values()
                for tp in m.owned
            )
            if lag > 50_000 and len(group.members) < 8:
                new = self._add_member(cluster, group)
                self._join(cluster, group, new, when, Cause.SCALE_OUT)
            elif lag < 5_000 and len(group.members) > 1:
                member = group.members.pop(sorted(group.members)[0])
                self._leave(cluster, group, member, when, CLOSING, Cause.SCALE_IN)
        elif profile == "partition_expansion" and step == 20:
            topic = group.topics[0]
            cluster.topics[topic] += 3
            for tp in self._partitions_of(cluster, [topic]):
                cluster.end_offsets.setdefault(tp, 0.0)
            for other in cluster.groups:
                if topic in other.topics and other.members:
                    leader = min(other.members)
                    reason = (
                        f"Leader {leader} re-joining group during Stable; client reason: "
                        "cached metadata has changed"
                    )
                    self._rebalance(cluster, other, when, reason, Cause.PARTITIONS_ADDED)
        elif profile == "regex_new_topic" and step == 24:
            matching = f"{REGEX_PREFIX}mobile"
            cluster.topics[matching] = 6
            cluster.topic_ids[matching] = self._topic_id()
            cluster.rates[matching] = 40.0
            group.topics.append(matching)
            reason = _pattern_rejoin(cluster.version, group)
            self._rebalance(cluster, group, when, reason, Cause.SUBSCRIPTION_CHANGED)
        elif profile == "poison_pill" and step == 10 and group.members:
            # The member holding the poison record blocks in processing past
            # max.poll.interval.ms; its heartbeat thread leaves the group.
            member = group.members.pop(sorted(group.members)[-1])
            if member.owned:
                group.stuck.add(sorted(member.owned)[0])
            group.returning.append(member)
            self._leave(cluster, group, member, when, POLL_TIMEOUT, Cause.POLL_TIMEOUT)
        elif profile == "poison_pill" and step == 11 and group.returning:
            # Processing gave up on the record 25 minutes later; the consumer rejoins
            # with a new member id (a dynamic member's id is reset on leaving): too late
            # to count as a restart.
            gone = group.returning.pop()
            new = self._add_member(cluster, group, client_id=gone.client_id, host=gone.host)
            self._join(cluster, group, new, when, Cause.SCALE_OUT)
        elif profile == "static_restart" and step % 9 == 4 and group.members:
            old = sorted(group.members)[0]
            instance = group.members.pop(old).instance_id
            member = self._add_member(cluster, group, static=True, instance=instance)
            member.owned = []
            self._static_rejoin(cluster, group, old, member, when)
        elif profile == "static_restart" and step % 9 == 7 and len(group.members) > 1:
            # A static member down past its session timeout (a node drained, a slow pull):
            # a static member sends no LeaveGroup, so its session expires; it comes back
            # with its group.instance.id and a new member id. Two rebalances, named
            # deploy_restart (a static member's instance restarting past its timeout).
            gone = group.members.pop(sorted(group.members)[-1])
            died = at - dt.timedelta(seconds=rng.randint(480, 900))
            expired = self._expire(
                cluster, group, gone, died + SESSION_TIMEOUT, Cause.DEPLOY_RESTART
            )
            back = self._add_member(cluster, group, static=True, instance=gone.instance_id)
            self._static_join(
                cluster, group, back, expired + dt.timedelta(seconds=rng.randint(20, 120))
            )

    def _crash(self, cluster: Cluster, group: Group, died: dt.datetime) -> None:
        """The crash-looping pod's consumer dies (no LeaveGroup) and restarts in place.
        A classic group that the restarted consumer joins before the dead one's session
        expired waits for the expiry: one generation with both."""
        pod = next(m for m in group.members.values() if m.client_id == group.crash_client)
        back = self._add_member(cluster, group, client_id=pod.client_id, host=pod.host)
        group.members.pop(back.member_id)  # not started yet
        coordinator = self._coordinator(cluster, group)
        expires = died + SESSION_TIMEOUT
        joins = died + dt.timedelta(seconds=self.rng.randint(10, 90))
        if joins < expires and not group.kip848:
            group.members.pop(pod.member_id)
            group.members[back.member_id] = back
            self._rebalance(
                cluster,
                group,
                joins,
                coordinator.join_reason(back.member_id),
                Cause.SESSION_TIMEOUT,
                coordinator.pending(joins - STEP, back.member_id),
                coordinator.failed(expires, pod.member_id),
                ends=expires + SYNC,
            )
            return
        for when, what in sorted([(expires, "expire"), (joins, "join")]):
            if what == "expire":
                group.members.pop(pod.member_id)
                self._expire(cluster, group, pod, when, Cause.SESSION_TIMEOUT)
            else:
                group.members[back.member_id] = back
                self._join(cluster, group, back, when, Cause.SESSION_TIMEOUT)

    def _static_join(
        self, cluster: Cluster, group: Group, member: Member, at: dt.datetime
    ) -> dt.datetime:
        """A static member joining with a group.instance.id the group no longer holds (its
        session expired): a new member, and the rebalance it starts."""
        if member.instance_id is None:
            raise ValueError(f"static join of {member.member_id}: no group.instance.id")
        coordinator = self._coordinator(cluster, group)
        return self._rebalance(
            cluster,
            group,
            at,
            coordinator.join_reason(member.member_id, member.instance_id),
            Cause.DEPLOY_RESTART,
            coordinator.static_join(at - STEP, member.instance_id, member.member_id),
        )

    def _static_rejoin(
        self, cluster: Cluster, group: Group, old: str, member: Member, at: dt.datetime
    ) -> None:
        """A static member back with a new id and the same instance id: no rebalance."""
        previous = [m for m in group.members.values() if m is not member]
        taken = {tp for m in previous for tp in m.owned}
        member.owned = [tp for tp in self._partitions_of(cluster, group.topics) if tp not in taken]
        if member.instance_id is None:
            raise ValueError(f"static rejoin of {member.member_id}: no group.instance.id")
        coordinator = self._coordinator(cluster, group)
        self._log(cluster, coordinator, coordinator.static_rejoin(at, member.instance_id, old))

    # -- captures -----------------------------------------------------------------------
    def captures(self) -> Iterator[tuple[dt.datetime, Cluster]]:
        steps = int(self.spec.hours * 60 / self.spec.interval_minutes)
        for step in range(steps + 1):
            at = self.spec.start + dt.timedelta(minutes=step * self.spec.interval_minutes)
            for cluster in self.clusters:
                if step:
                    self._advance(cluster, self.spec.interval_minutes * 60)
                    for group in cluster.groups:
                        self._churn(cluster, group, at, step)
                yield at, cluster

    def group_views(self, cluster: Cluster, at: dt.datetime) -> list[render.GroupView]:
        views = []
        for group in cluster.groups:
            rebalancing = (
                group.rebalancing_until is not None and group.members and self.rng.random() < 0.08
            )
            state = (
                "Empty"
                if not group.members
                else ("Reconciling" if group.kip848 else "PreparingRebalance")
                if rebalancing
                else "Stable"
            )
            old_coordinator = rebalancing and cluster.version in ("3.6", "3.9")
            members = [
                render.MemberView(
                    m.member_id,
                    m.instance_id,
                    m.host,
                    m.client_id,
                    [] if old_coordinator else [(tp.topic, tp.partition) for tp in m.owned],
                    group.generation,
                )
                for m in group.members.values()
            ]
            offsets: dict[tuple[str, int], tuple[int | None, int]] = {
                (tp.topic, tp.partition): (
                    math.floor(v),
                    math.floor(cluster.end_offsets.get(tp, v)),
                )
                for tp, v in group.committed.items()
            }
            coordinator = self._coordinator(cluster, group).broker
            views.append(
                render.GroupView(
                    group.name,
                    state,
                    group.strategy,
                    (f"kafka-{coordinator}.{cluster.name}.example.net:9092", coordinator),
                    members,
                    offsets,
                    group.kip848,
                )
            )
        return views

    def topic_view(self, cluster: Cluster) -> dict[str, render.TopicView]:
        topics = {}
        for name, count in cluster.topics.items():
            replicas = self._replicas(cluster, name, count)
            isr = {p: list(r) for p, r in replicas.items()}
            topics[name] = render.TopicView(cluster.topic_ids[name], replicas, isr)
        return topics

    @staticmethod
    def _replicas(cluster: Cluster, topic: str, count: int) -> dict[int, list[int]]:
        """A topic's replicas, the leader first: Kafka's rack-unaware placement from a
        start fixed by the topic's name, so leaders go round the brokers, and zones."""
        ids = sorted(cluster.brokers)
        return assign_replicas_to_brokers(
            ids, count, min(3, len(ids)), fixed_start_index=len(topic) % len(ids)
        )

    def replica_sizes(self, cluster: Cluster) -> dict[tuple[str, int], int]:
        """Each partition's bytes on disk (generate/broker_views.py): every record it
        took, at its topic's bytes per record."""
        return {
            (topic, p): math.floor(cluster.end_offsets.get(TopicPartition(topic, p), 0.0))
            * broker_views.record_bytes(self.spec.seed, cluster.name, topic)
            for topic, count in cluster.topics.items()
            for p in range(count)
        }


def _pattern_rejoin(version: render.KafkaVersion, group: Group) -> str:
    """The rejoin a pattern subscription's new topic starts, as each cluster's clients
    send it: 3.6's are pre-3.2 (no KIP-800 reason) and the leader notices first; 3.9's
    too, but a follower's metadata update comes first; 4.1's name the change (a KIP-848
    group's coordinator resolves the pattern itself and logs only the epoch bump)."""
    member = min(group.members, default="-")
    if version == "3.6":
        return f"Leader {member} re-joining group during Stable; client reason: not provided"
    if version == "3.9":
        return f"Updating metadata for member {member} during Stable; client reason: not provided"
    return (
        f"Updating metadata for member {member} during Stable; client reason: subscription "
        "has changed"
    )


def _iso(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def truth_path(out: Path) -> Path:
    """Where write_fleet puts its ground truth: beside the captures, not under them (so
    ingest never reads it): data/sample -> data/sample.truth.jsonl."""
    return out.with_name(out.name + TRUTH_SUFFIX)


def write_fleet(spec: FleetSpec, out: Path) -> dict[str, int]:
    """Write every capture and broker log of the simulated fleet under out, every
    generation it went through (truth_path) with whether its log was collected, and each
    group's reads of each date across zones (cross_zone_path)."""
    fleet = Fleet(spec)
    written = {"captures": 0, "files": 0}
    failed_once = False
    end = spec.start
    taken: list[tuple[dt.datetime, str, str, list[int]]] = []
    cross_zone = CrossZoneTruth(spec.seed)
    racks_hour: dict[str, dt.datetime] = {}
    for at, cluster in fleet.captures():
        end = at
        taken.append((at, cluster.name, cluster.version, sorted(cluster.brokers)))
        folder = out / cluster.name / "captures" / at.strftime("%Y-%m-%dT%H%MZ")
        folder.mkdir(parents=True, exist_ok=True)
        views = fleet.group_views(cluster, at)
        topics = fleet.topic_view(cluster)
        files = {
            "consumer-groups-offsets.txt": render.offsets_view(views, cluster.version),
            "consumer-groups-members.txt": render.members_view(views, cluster.version),
            "consumer-groups-state.txt": render.state_view(views, cluster.version),
        }
        if spec.broker_views:
            files[LOG_DIRS_FILE] = broker_views.log_dirs_view(
                sorted(cluster.brokers), topics, fleet.replica_sizes(cluster)
            )
        if at.minute == 0:
            files["topics.txt"] = render.topics_view(topics, cluster.version)
        opening = at.replace(minute=0, second=0, microsecond=0)
        # Racks change only with a restart: the brokers view once an hour.
        if spec.broker_views and racks_hour.get(cluster.name) != opening:
            racks_hour[cluster.name] = opening
            files[BROKERS_FILE] = broker_views.brokers_view(
                cluster.name, cluster.brokers, cluster.version
            )
        failed = not failed_once and at.hour == 3 and cluster.version == "3.9"
        if failed:
            files["consumer-groups-offsets.txt"] = ""  # a failed capture: an empty file
            failed_once = True
        if spec.broker_views:
            cross_zone.capture(
                at,
                cluster.name,
                cluster.brokers,
                views,
                topics if "topics.txt" in files else None,
                offsets_captured=not failed,
            )
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
            written["files"] += 1
        written["captures"] += 1
    if spec.share_streams:
        written["files"] += write_share_streams(spec.seed, spec.start, taken, out)
    # A log collection gap: the third cluster's coordinator logs of the fifth hour were
    # never collected, so its rebalances then take their causes from the captures.
    gap = (spec.start + dt.timedelta(hours=4)).strftime("%Y-%m-%d-%H")
    hours = _hours(spec.start, end)
    for index, cluster in enumerate(fleet.clusters):
        for broker in sorted(cluster.brokers):
            for hour in hours:
                if index == 2 and hour == gap:
                    continue
                lines = cluster.log_lines.get((broker, hour), []) + _housekeeping(
                    cluster.version, broker, hour
                )
                folder = out / cluster.name / "logs" / f"broker-{broker}"
                folder.mkdir(parents=True, exist_ok=True)
                # Lines in time order, those of one moment as they were logged.
                ordered = sorted(lines, key=lambda line: line[:25])
                (folder / f"server.log.{hour}").write_text(
                    "\n".join(ordered) + "\n", encoding="utf-8"
                )
                written["files"] += 1
    gap_cluster = fleet.clusters[2].name if len(fleet.clusters) > 2 else None
    with truth_path(out).open("w", encoding="utf-8") as generations:
        for r in fleet.rebalances:
            logged = not (r.cluster == gap_cluster and r.started_at.strftime("%Y-%m-%d-%H") == gap)
            generations.write(json.dumps(r.as_json(logged), sort_keys=True) + "\n")
    if spec.broker_views:
        with cross_zone_path(out).open("w", encoding="utf-8") as reads:
            for row in cross_zone.records():
                reads.write(json.dumps(row, sort_keys=True) + "\n")
    return written


def _hours(start: dt.datetime, end: dt.datetime) -> list[str]:
    """Every log hour from start's to end's (brokers write a file each hour)."""
    hour = start.replace(minute=0, second=0, microsecond=0)
    out = []
    while hour <= end:
        out.append(hour.strftime("%Y-%m-%d-%H"))
        hour += dt.timedelta(hours=1)
    return out


def _housekeeping(version: render.KafkaVersion, broker: int, hour: str) -> list[str]:
    start = dt.datetime.strptime(hour, "%Y-%m-%d-%H").replace(tzinfo=dt.UTC)
    return [
        housekeeping(version, broker, start + dt.timedelta(minutes=m, seconds=broker))
        for m in range(7, 60, 10)
    ]
