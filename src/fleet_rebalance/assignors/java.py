"""Java semantics Kafka's assignors depend on: String.hashCode, String.compareTo and
java.util.HashMap iteration order.

The client assignors iterate HashMaps keyed by member id (the leader builds the
subscriptions map with `new HashMap<>()` in JoinGroup response order) and HashSets of
TopicPartition; which member keeps a contested partition, or which partition moves,
follows that order. Reproducing it makes our output identical to Kafka's, not merely
equivalent. Not modelled: the red-black "tree bins" a HashMap builds once nine keys
share one bucket of a table of 64 or more (a collision pattern real ids do not hit);
smaller tables resize instead, which is modelled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import lru_cache
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75
TREEIFY_THRESHOLD = 8
MIN_TREEIFY_CAPACITY = 64
MASK32 = 0xFFFFFFFF


def int32(value: int) -> int:
    value &= MASK32
    return value - (1 << 32) if value & 0x80000000 else value


@lru_cache(maxsize=1 << 16)
def string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, with int overflow."""
    h = 0
    if text.isascii():
        for ch in text.encode("ascii"):
            h = (31 * h + ch) & MASK32
    else:
        data = text.encode("utf-16-be")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & MASK32
    return int32(h)


def java_abs(value: int) -> int:
    """Kafka's Utils.abs: Integer.MIN_VALUE maps to 0, not to itself."""
    return 0 if value == -(1 << 31) else abs(value)


@lru_cache(maxsize=1 << 16)
def string_key(text: str) -> bytes:
    """Sort key equal to Java's String.compareTo (UTF-16 code units, not code points)."""
    return text.encode("utf-16-be")


def topic_partition_hash(topic: str, partition: int) -> int:
    return int32(31 * (31 + partition) + string_hash(topic))


def _spread(h: int) -> int:
    h &= MASK32
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """HashMap.tableSizeFor: the smallest power of two >= capacity."""
    return 1 << (capacity - 1).bit_length() if capacity > 1 else 1


class JavaHashMap(Generic[K]):
    """Keys (and values) of a java.util.HashMap in Java's iteration order.

    Buckets are lists in insertion order; resizes split them in order, removals keep the
    order of the rest, exactly as HashMap's linked bins do.
    """

    __slots__ = ("_buckets", "_hash", "_threshold", "_values")

    def __init__(self, hash_fn: Callable[[K], int], capacity: int = DEFAULT_CAPACITY) -> None:
        self._hash = hash_fn
        cap = table_size_for(max(capacity, 1))
        self._buckets: list[list[K]] = [[] for _ in range(cap)]
        self._threshold = int(cap * LOAD_FACTOR)
        self._values: dict[K, object] = {}

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[K]:
        for bucket in self._buckets:
            yield from bucket

    def get(self, key: K, default: object = None) -> object:
        return self._values.get(key, default)

    def items(self) -> Iterator[tuple[K, object]]:
        for key in self:
            yield key, self._values[key]

    def put(self, key: K, value: object = None) -> None:
        if key in self._values:
            self._values[key] = value
            return
        self._values[key] = value
        cap = len(self._buckets)
        bucket = self._buckets[_spread(self._hash(key)) & (cap - 1)]
        bucket.append(key)
        if len(bucket) > TREEIFY_THRESHOLD and cap < MIN_TREEIFY_CAPACITY:
            self._resize()
        if len(self._values) > self._threshold:
            self._resize()

    def add(self, key: K) -> None:
        self.put(key, None)

    def remove(self, key: K) -> None:
        if key not in self._values:
            return
        del self._values[key]
        cap = len(self._buckets)
        self._buckets[_spread(self._hash(key)) & (cap - 1)].remove(key)

    def first(self) -> K:
        return next(iter(self))

    def _resize(self) -> None:
        cap = len(self._buckets) * 2
        buckets: list[list[K]] = [[] for _ in range(cap)]
        for bucket in self._buckets:
            for key in bucket:
                buckets[_spread(self._hash(key)) & (cap - 1)].append(key)
        self._buckets = buckets
        self._threshold = int(cap * LOAD_FACTOR)


def hashmap_order(
    keys: Iterable[K], hash_fn: Callable[[K], int], capacity: int = DEFAULT_CAPACITY
) -> list[K]:
    """Iteration order of a HashMap filled by put() of `keys` in the given order.

    Without removals a bucket keeps insertion order, so the order is a stable sort by
    bucket at the final capacity. Only tables under 64 buckets can grow because one bin
    reached nine keys; that short prefix is simulated, the rest follows the load factor.
    """
    distinct = list(dict.fromkeys(keys))
    spreads = [(h & MASK32) ^ ((h & MASK32) >> 16) for h in map(hash_fn, distinct)]
    cap = table_size_for(max(capacity, 1))
    counts: dict[int, int] = {}
    size = 0
    # Keys put while the table is under 64 buckets are among the first 64; a bin of
    # nine at any size before that implies nine in one bucket of the first table.
    if cap < MIN_TREEIFY_CAPACITY and len(distinct) > TREEIFY_THRESHOLD:
        first_bins = Counter(map((cap - 1).__and__, spreads[:MIN_TREEIFY_CAPACITY]))
        if max(first_bins.values()) <= TREEIFY_THRESHOLD:
            size = len(distinct)  # no bin ever overflows: only the load factor grows it
    # putVal: append to the bin; a bin past 8 keys resizes a small table; then
    # ++size > threshold resizes again.
    while size < len(distinct) and cap < MIN_TREEIFY_CAPACITY:
        bucket = spreads[size] & (cap - 1)
        counts[bucket] = counts.get(bucket, 0) + 1
        size += 1
        before = cap
        if counts[bucket] > TREEIFY_THRESHOLD:
            cap *= 2
        if size > int(cap * LOAD_FACTOR):
            cap *= 2
        if cap != before:
            counts = _bucket_counts(spreads[:size], cap)
    while len(distinct) > int(cap * LOAD_FACTOR):
        cap *= 2
    mask = cap - 1
    buckets = [spread & mask for spread in spreads]
    return [distinct[i] for i in sorted(range(len(distinct)), key=buckets.__getitem__)]


def _bucket_counts(spreads: list[int], cap: int) -> dict[int, int]:
    counts: dict[int, int] = {}
    for spread in spreads:
        bucket = spread & (cap - 1)
        counts[bucket] = counts.get(bucket, 0) + 1
    return counts


def member_order(member_ids: Iterable[str]) -> list[str]:
    """The leader's `new HashMap<>()` of subscriptions, filled in JoinGroup order."""
    return list(_member_order(tuple(member_ids)))


@lru_cache(maxsize=256)
def _member_order(member_ids: tuple[str, ...]) -> tuple[str, ...]:
    """member_order per list of members: a replay asks for the same members' order at
    every event, once per assignor that needs it."""
    return tuple(hashmap_order(member_ids, string_hash))
