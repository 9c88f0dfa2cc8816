"""Spreading work over a fixed number of tasks by size (Spark-free)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def largest_first(
    items: Sequence[T], count: int, size: Callable[[T], int], tiebreak: Callable[[T], Any]
) -> list[list[T]]:
    """Each item, largest first, into the lightest of `count` bins (empty bins dropped):
    no task waits on two big items while another holds only small ones."""
    bins: list[list[T]] = [[] for _ in range(max(1, min(count, len(items))))]
    loads = [(0, i) for i in range(len(bins))]
    for item in sorted(items, key=lambda it: (-size(it), tiebreak(it))):
        load, i = heapq.heappop(loads)
        bins[i].append(item)
        heapq.heappush(loads, (load + size(item), i))
    return [b for b in bins if b]
