"""Members rows completed from the offsets view of the same capture, in the parse task.

The files of one capture (same cluster and path timestamp) are parsed by one task, so
the offsets a members row needs are at hand: no shuffle of the offsets table. Rows are
matched on (cluster, group_id, captured_at), as a join of the two tables would.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

KEY = ("cluster", "group_id", "captured_at")


class CaptureOffsets:
    """Per capture key: the topics the group has offsets for and, on demand, each
    consumer's owned (topic, partition)s; built with Arrow group-bys, not per row."""

    def __init__(self, offsets: pa.Table) -> None:
        self._offsets = offsets
        self._owned: dict[tuple, list[tuple[str, int]]] | None = None
        pairs = offsets.group_by([*KEY, "topic"]).aggregate([]).to_pydict()
        self.topics: dict[tuple, list[str]] = {}
        for *key, topic in zip(*(pairs[c] for c in (*KEY, "topic")), strict=True):
            if topic is not None:
                self.topics.setdefault(tuple(key), []).append(topic)
        for topics in self.topics.values():
            topics.sort()

    @classmethod
    def of(cls, tables: Iterable[pa.Table]) -> CaptureOffsets:
        """From offsets tables (the parse stage's batches: any columns besides these)."""
        parts = [t.select(_EMPTY.schema.names).cast(_EMPTY.schema) for t in tables]
        return cls(pa.concat_tables(parts) if parts else _EMPTY)

    def owned(self, key: tuple, consumer_id: str | None) -> list[tuple[str, int]] | None:
        if self._owned is None:
            self._owned = {}
            named = self._offsets.filter(self._offsets["consumer_id"].is_valid())
            lists = (
                named.group_by([*KEY, "consumer_id"])
                .aggregate([("topic", "list"), ("partition", "list")])
                .to_pydict()
            )
            columns = (*KEY, "consumer_id", "topic_list", "partition_list")
            for *k, consumer, topics, partitions in zip(*(lists[c] for c in columns), strict=True):
                self._owned[(*k, consumer)] = sorted(zip(topics, partitions, strict=True))
        return self._owned.get((*key, consumer_id))

    def enrich(self, member: dict[str, Any]) -> dict[str, Any]:
        """The members row with both completions below; `assignment_groups` is dropped.

        - 3.8/3.9 print ASSIGNMENT without topic names ("(0,1,10), (2)"): the member's
          partitions come from the offsets view when their partition numbers are exactly
          the ones listed; otherwise the assignment stays null (unknown), never guessed.
        - Where the subscription was not captured, it is the set of topics the group has
          offsets for at that capture (homogeneous subscription), flagged as inferred.
          Without offsets at that capture (a failed offsets capture) it stays null:
          unknown, never "subscribed to nothing".
        """
        row = dict(member)
        groups = row.pop("assignment_groups", None)
        key = tuple(row.get(c) for c in KEY)
        if row.get("assignment") is None and groups is not None:
            owned = self.owned(key, row.get("consumer_id"))
            listed = sorted(p for group in groups for p in group)
            if owned is not None and listed == sorted(p for _, p in owned):
                row["assignment"] = [{"topic": t, "partition": p} for t, p in owned]
        if row.get("subscription") is None:
            topics = self.topics.get(key)
            row["subscription"] = list(topics) if topics is not None else None
            row["subscription_inferred"] = True if topics is not None else None
        elif row.get("subscription_inferred") is None:
            row["subscription_inferred"] = False
        return row


_EMPTY = pa.table(
    {
        "cluster": pa.array([], pa.string()),
        "group_id": pa.array([], pa.string()),
        "captured_at": pa.array([], pa.timestamp("us", tz="UTC")),
        "topic": pa.array([], pa.string()),
        "partition": pa.array([], pa.int32()),
        "consumer_id": pa.array([], pa.string()),
    }
)
