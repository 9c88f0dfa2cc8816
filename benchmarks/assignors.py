"""Assignor benchmark: Kafka's client-side JMH grid (ClientSideAssignorBenchmark).

memberCount 100/1,000/5,000, partitionsToMemberRatio 10, topicCount 10/100,
homogeneous and heterogeneous (5 buckets of members, each on its own slice of topics),
rack-aware or not (3 racks, 3 replicas per partition), FULL (nobody owns anything) and
INCREMENTAL (everyone owns the FULL result, one new member joins). Unlike the JMH
class, whose INCREMENTAL case keeps benchmarking the old GroupSubscription, the
incremental case here really assigns with the new subscriptions.

Prints the median milliseconds per case for each assignor: ours, Kafka's own Java
assignor on the same case in the same run (the kafka-4 jars of jvm/pom.xml through
tests/java_assignors.py: one JVM, a warm-up run per case, then runs for the same budget)
and our time / Java's, kafka-python's where it has one (pip install -e ".[job,bench]"), and
whether our assignment is Kafka's (same).

    python benchmarks/assignors.py                     # whole grid
    python benchmarks/assignors.py --members 1000 --topics 10 --assignors sticky
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace

from fleet_rebalance.assignors import Subscription, TopicPartition, get_assignor

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import java_assignors

RACKS = 3
BUCKETS = 5
RATIO = 10


def build_case(members: int, topics: int, homogeneous: bool, rack_aware: bool):
    per_topic = members * RATIO // topics
    names = [f"topic{i}" for i in range(topics)]
    partitions = dict.fromkeys(names, per_topic)
    racks = (
        {
            TopicPartition(t, p): [f"rack{(p + j) % RACKS}" for j in range(3)]
            for t in names
            for p in range(per_topic)
        }
        if rack_aware
        else None
    )

    def rack(i: int) -> str | None:
        return f"rack{i % RACKS}" if rack_aware else None

    subscriptions = {}
    if homogeneous:
        for i in range(members):
            subscriptions[f"member{i}"] = Subscription(names, rack=rack(i))
    else:
        buckets = min(BUCKETS, members)
        topics_per = math.ceil(topics / buckets)
        members_per = math.ceil(members / buckets)
        for b in range(buckets):
            bucket_topics = names[b * topics_per : (b + 1) * topics_per]
            for i in range(b * members_per, min((b + 1) * members_per, members)):
                subscriptions[f"member{i}"] = Subscription(bucket_topics, rack=rack(i))
    return partitions, subscriptions, racks


def incremental(name: str, partitions, subscriptions, racks):
    """Everyone owns the FULL result; the last member is replaced by a newcomer."""
    *kept, last = list(subscriptions)
    base = {m: subscriptions[m] for m in kept}
    first = get_assignor(name).assign(partitions, base, racks)
    grown = {m: Subscription(s.topics, first[m], 1, rack=s.rack) for m, s in base.items()}
    grown["newMember"] = Subscription(subscriptions[kept[-1]].topics, rack=subscriptions[last].rack)
    return grown


def median_ms(run: Callable[[], object], budget_s: float) -> float:
    samples = []
    started = time.perf_counter()
    while len(samples) < 3 or (time.perf_counter() - started < budget_s and len(samples) < 15):
        t0 = time.perf_counter()
        run()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def kafka_python_runner(name: str, partitions, subscriptions) -> Callable[[], object] | None:
    """kafka-python's assignor of the same name (3.x API), or None when it has none or
    is not installed. Owned partitions reach its sticky assignor as StickyAssignorUserData,
    as they would from a kafka-python consumer."""
    try:
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
        from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
    except ImportError:
        return None
    assignors = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor(),
    }
    if name not in assignors:
        return None

    class Cluster:
        def topics(self):
            return set(partitions)

        def partitions_for_topic(self, topic):
            return set(range(partitions[topic])) if topic in partitions else None

    def user_data(subscription: Subscription):
        if not subscription.owned_partitions:
            return None
        by_topic: dict[str, list[int]] = {}
        for tp in subscription.owned_partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return StickyAssignorUserData(
            previous_assignment=list(by_topic.items()), generation=subscription.generation
        )

    members = [
        SimpleNamespace(
            member_id=m,
            group_instance_id=None,
            metadata=SimpleNamespace(
                topics=list(s.topics),
                user_data=user_data(s),
                owned_partitions=[],
                generation_id=s.generation,
            ),
        )
        for m, s in subscriptions.items()
    ]
    cluster = Cluster()
    return lambda: assignors[name].assign(cluster, members)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="*", default=[100, 1000, 5000])
    parser.add_argument("--topics", type=int, nargs="*", default=[10, 100])
    parser.add_argument("--assignors", default="range,roundrobin,sticky,cooperative-sticky,uniform")
    parser.add_argument("--types", default="FULL,INCREMENTAL")
    parser.add_argument("--subscriptions", default="homogeneous,heterogeneous")
    parser.add_argument("--rack-aware", default="false,true")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--no-kafka-python", action="store_true")
    parser.add_argument("--no-java", action="store_true", help="skip Kafka's Java assignors")
    parser.add_argument(
        "--kafka-python-max-members",
        type=int,
        default=1000,
        help="skip kafka-python above this size (its sticky needs ~11 s at 1,000)",
    )
    args = parser.parse_args()
    assignors = args.assignors.split(",")
    print(
        f"{'members':>7} {'topics':>6} {'subs':<13} {'rack':<5} {'type':<11} "
        f"{'assignor':<19} {'ours ms':>9} {'java ms':>8} {'x java':>7} {'kafka-py ms':>11} "
        f"{'same':>5}"
    )
    grid = itertools.product(
        args.members,
        args.topics,
        args.subscriptions.split(","),
        args.rack_aware.split(","),
        args.types.split(","),
        assignors,
    )
    cases = []
    for members, topics, subs, rack, kind, name in grid:
        partitions, subscriptions, racks = build_case(
            members, topics, subs == "homogeneous", rack == "true"
        )
        if kind == "INCREMENTAL":
            subscriptions = incremental(name, partitions, subscriptions, racks)
        cases.append(((members, topics, subs, rack, kind, name), partitions, subscriptions, racks))
    java = (
        [None] * len(cases)
        if args.no_java
        else java_assignors.run(
            [java_assignors.case(c[0][-1], *c[1:]) for c in cases], args.budget * 1000
        )
    )
    for (key, partitions, subscriptions, racks), kafka in zip(cases, java, strict=True):
        members, topics, subs, rack, kind, name = key
        assignor = get_assignor(name)
        ours = median_ms(partial(assignor.assign, partitions, subscriptions, racks), args.budget)
        java_ms = kafka["median_ms"] if kafka else None
        ratio = f"{ours / java_ms:7.1f}" if java_ms else f"{'-':>7}"
        kp = (
            None
            if args.no_kafka_python or rack == "true" or members > args.kafka_python_max_members
            else kafka_python_runner(name, partitions, subscriptions)
        )
        kp_ms = f"{'-':>11}"
        if kp is not None:
            try:
                kp_ms = f"{median_ms(kp, args.budget):11.1f}"
            except Exception as exc:  # kafka-python's own failures are results too
                kp_ms = f"{type(exc).__name__:>11}"
        java_text = f"{java_ms:8.2f}" if java_ms else f"{'-':>8}"
        same = (
            "-"
            if kafka is None
            else "yes"
            if kafka["assignment"] == assignor.assign(partitions, subscriptions, racks)
            else "NO"
        )
        print(
            f"{members:>7} {topics:>6} {subs:<13} {rack:<5} {kind:<11} {name:<19} "
            f"{ours:9.2f} {java_text} {ratio} {kp_ms} {same:>5}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
