"""Kafka's broker replica placement (AdminUtils.assignReplicasToBrokers), pure Python.

The first replica of partition p goes to broker (p + start_index) % n in the broker
list; the other replicas follow at a shift that grows by one each time the partitions
wrap around the list, so leaders and followers spread evenly. With racks, the broker
list is first alternated across racks (sorted rack names) and a broker is skipped while
a rack or a broker without a replica remains. Example (seeds/001): brokers 0-4, 10
partitions, RF 3, start 0, shift 0 -> p0 [0, 1, 2] ... p4 [4, 0, 1], then p5 [0, 2, 3].

This is server-common's AdminUtils (ZooKeeper-era topic creation and the add-partitions
path); KRaft controllers in 4.x place new topics with StripedReplicaPlacer instead.
"""

from __future__ import annotations

import random as _random
from collections.abc import Mapping, Sequence

from fleet_rebalance.assignors.java import int32


class ReplicaAssignmentError(ValueError):
    """Kafka's InvalidPartitionsException / InvalidReplicationFactorException /
    AdminOperationException."""


class JavaRandom:
    """java.util.Random, so a seeded placement matches Kafka's for the same seed."""

    MULTIPLIER = 0x5DEECE66D
    MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ self.MULTIPLIER) & self.MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self.MULTIPLIER + 0xB) & self.MASK
        return int32(self._seed >> (48 - bits))

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound & (bound - 1) == 0:
            return int32((bound * self._next(31)) >> 31)
        while True:
            bits = self._next(31)
            value = bits % bound
            if int32(bits - value + (bound - 1)) >= 0:
                return value


Brokers = Sequence[int] | Sequence[tuple[int, str | None]] | Mapping[int, str | None]


def _normalise(brokers: Brokers) -> list[tuple[int, str | None]]:
    if isinstance(brokers, Mapping):
        return list(brokers.items())
    return [(b, None) if isinstance(b, int) else (int(b[0]), b[1]) for b in brokers]


def assign_replicas_to_brokers(
    brokers: Brokers,
    n_partitions: int,
    replication_factor: int,
    *,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    seed: int | None = None,
    next_replica_shift: int | None = None,
) -> dict[int, list[int]]:
    """{partition: [replica broker ids, preferred leader first]}.

    `brokers` is the broker list in Kafka's order (ids, or (id, rack) pairs, or
    {id: rack}); order matters for the rack-unaware path. A negative fixed_start_index
    draws the start index and the replica shift at random (java.util.Random(seed) when
    seed is given, so results are reproducible). next_replica_shift pins the shift on its
    own (Kafka draws it; seeds/001 shows start 0 with shift 3).
    """
    metadata = _normalise(brokers)
    if n_partitions <= 0:
        raise ReplicaAssignmentError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise ReplicaAssignmentError("Replication factor must be larger than 0.")
    if replication_factor > len(metadata):
        raise ReplicaAssignmentError(
            f"Replication factor: {replication_factor} larger than available brokers: "
            f"{len(metadata)}."
        )
    rng = JavaRandom(seed) if seed is not None else _SystemRandom()
    start = fixed_start_index if fixed_start_index >= 0 else rng.next_int(len(metadata))
    shift = fixed_start_index if fixed_start_index >= 0 else rng.next_int(len(metadata))
    if next_replica_shift is not None:
        shift = next_replica_shift
    first_partition = max(0, start_partition_id)
    if all(rack is None for _, rack in metadata):
        return _rack_unaware(
            n_partitions,
            replication_factor,
            [b for b, _ in metadata],
            start,
            shift,
            first_partition,
        )
    if any(rack is None for _, rack in metadata):
        raise ReplicaAssignmentError(
            "Not all brokers have rack information for replica rack aware assignment."
        )
    racks = {b: rack for b, rack in metadata if rack is not None}
    return _rack_aware(n_partitions, replication_factor, racks, start, shift, first_partition)


def add_partitions(
    brokers: Sequence[int], existing: Mapping[int, Sequence[int]], partitions_to_add: int
) -> dict[int, list[int]]:
    """New partitions' replicas as Kafka's add-partitions path computes them: brokers
    sorted by id, the start index at partition 0's first replica, the replication factor
    of partition 0, and new ids after the existing ones."""
    ordered = sorted(brokers)
    leader = existing[0][0]
    start = next((i for i, b in enumerate(ordered) if b >= leader), -1)
    return assign_replicas_to_brokers(
        ordered,
        partitions_to_add,
        len(existing[0]),
        fixed_start_index=max(0, start),
        start_partition_id=len(existing),
    )


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """Brokers taken one per rack in turn (racks sorted, brokers sorted within a rack)."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = {rack: sorted(ids) for rack, ids in by_rack.items()}
    names = sorted(queues)
    result: list[int] = []
    positions = dict.fromkeys(names, 0)
    index = 0
    while len(result) < len(racks):
        rack = names[index]
        if positions[rack] < len(queues[rack]):
            result.append(queues[rack][positions[rack]])
            positions[rack] += 1
        index = (index + 1) % len(names)
    return result


def replica_index(
    first_replica_index: int, second_replica_shift: int, replica: int, n_brokers: int
) -> int:
    shift = 1 + (second_replica_shift + replica) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


class _SystemRandom:
    def next_int(self, bound: int) -> int:
        return _random.randrange(bound)


def _rack_unaware(
    n_partitions: int,
    replication_factor: int,
    brokers: list[int],
    start: int,
    shift: int,
    partition: int,
) -> dict[int, list[int]]:
    n = len(brokers)
    result = {}
    for _ in range(n_partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        replicas = [brokers[first]]
        replicas += [
            brokers[replica_index(first, shift, j, n)] for j in range(replication_factor - 1)
        ]
        result[partition] = replicas
        partition += 1
    return result


def _rack_aware(
    n_partitions: int,
    replication_factor: int,
    racks: Mapping[int, str],
    start: int,
    shift: int,
    partition: int,
) -> dict[int, list[int]]:
    n_racks = len(set(racks.values()))
    arranged = rack_alternated_brokers(racks)
    n = len(arranged)
    result = {}
    for _ in range(n_partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        brokers_used = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[replica_index(first, shift * n_racks, k, n)]
                rack = racks[broker]
                k += 1
                if (rack not in racks_used or len(racks_used) == n_racks) and (
                    broker not in brokers_used or len(brokers_used) == n
                ):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        result[partition] = replicas
        partition += 1
    return result
