"""Kafka's default partitioner for keyed records: toPositive(murmur2(key)) % partitions."""

from __future__ import annotations

MASK32 = 0xFFFFFFFF
SEED = 0x9747B28C
M = 0x5BD1E995
R = 24


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 (signed 32-bit result, like Java's int)."""
    length = len(data)
    h = (SEED ^ length) & MASK32
    for i in range(0, length - length % 4, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * M) & MASK32
        k ^= k >> R
        k = (k * M) & MASK32
        h = (h * M) & MASK32
        h ^= k
    tail = length & ~3
    rest = length % 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * M) & MASK32
    h ^= h >> 13
    h = (h * M) & MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions
