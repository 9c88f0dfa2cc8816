"""Members rows completed from the offsets view of the same capture, in the parse task.

The files of one capture (same cluster and path timestamp) are parsed by one task, so
the offsets a members row needs are at hand: no shuffle of the offsets table. Rows are
matched on (cluster, group_id, captured_at), as a join of the two tables would.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture.describe.bulk_members import list_array
from fleet_rebalance.capture.schemas import TABLES

KEY = ("cluster", "group_id", "captured_at")
# Members rows as parsed: the bronze columns, and 3.8/3.9's topic-less assignment
# groups until enrich() completes the assignment from them.
MEMBERS_SCHEMA = TABLES["members"].append(
    pa.field("assignment_groups", pa.list_(pa.list_(pa.int32())))
)


class CaptureOffsets:
    """Per capture key: the topics the group has offsets for and, on demand, each
    consumer's owned (topic, partition)s; built with Arrow group-bys, not per row."""

    def __init__(self, offsets: pa.Table) -> None:
        """`offsets` as `of` makes it: captured_at in epoch microseconds, a cheap key."""
        self._offsets = offsets
        self._owned: tuple[pa.Table, pa.ListArray, pa.ListArray] | None = None
        pairs = offsets.group_by([*KEY, "topic"]).aggregate([]).to_pydict()
        topics: dict[tuple, list[str]] = {}
        for *key, topic in zip(*(pairs[c] for c in (*KEY, "topic")), strict=True):
            if topic is not None:
                topics.setdefault(tuple(key), []).append(topic)
        # The keys as a table to join members rows to; `_topics` indexes self._topics.
        keys = list(topics)
        self._keys = pa.table(
            {
                **{
                    c: pa.array([k[i] for k in keys], _EMPTY.schema.field(c).type)
                    for i, c in enumerate(KEY)
                },
                "_topics": pa.array(range(len(keys)), pa.int64()),
            }
        )
        self._topics = pa.array([sorted(topics[k]) for k in keys], pa.list_(pa.string()))

    @classmethod
    def of(cls, tables: Iterable[pa.Table]) -> CaptureOffsets:
        """From offsets tables (the parse stage's batches: any columns besides these)."""
        parts = [t.select(_EMPTY.schema.names).cast(_EMPTY.schema) for t in tables]
        return cls(pa.concat_tables(parts) if parts else _EMPTY)

    def _owners(self) -> tuple[pa.Table, pa.ListArray, pa.ListArray]:
        """Each (key, consumer_id) of the offsets view numbered (`_owner`), and per number
        the (topic, partition)s it owns, sorted, and its partition numbers, sorted."""
        if self._owned is None:
            named = self._offsets.filter(self._offsets["consumer_id"].is_valid())
            owner_key = [*KEY, "consumer_id"]
            keys = named.group_by(owner_key).aggregate([])
            keys = keys.append_column("_owner", pa.array(range(keys.num_rows), pa.int64()))
            owned = named.join(keys, owner_key)
            by_pair = owned.sort_by(
                [("_owner", "ascending"), ("topic", "ascending"), ("partition", "ascending")]
            )
            by_number = owned.sort_by([("_owner", "ascending"), ("partition", "ascending")])
            sizes = np.bincount(by_pair["_owner"].to_numpy(), minlength=keys.num_rows)
            pair_type = MEMBERS_SCHEMA.field("assignment").type.value_type
            pairs = pa.StructArray.from_arrays(
                [by_pair["topic"].combine_chunks(), by_pair["partition"].combine_chunks()],
                fields=list(pair_type),
            )
            self._owned = (
                keys,
                list_array(sizes, pairs),
                list_array(sizes, by_number["partition"].combine_chunks()),
            )
        return self._owned

    def enrich(self, members: pa.Table) -> pa.Table:
        """The members rows with both completions below, without `assignment_groups`.

        - 3.8/3.9 print ASSIGNMENT without topic names ("(0,1,10), (2)"): the member's
          partitions come from the offsets view when their partition numbers are exactly
          the ones listed; otherwise the assignment stays null (unknown), never guessed.
        - Where the subscription was not captured, it is the set of topics the group has
          offsets for at that capture (homogeneous subscription), flagged as inferred.
          Without offsets at that capture (a failed offsets capture) it stays null:
          unknown, never "subscribed to nothing".
        """
        count = members.num_rows
        numbered = _keyed(members).append_column("_row", pa.array(range(count), pa.int64()))
        found = numbered.join(self._keys, list(KEY), join_type="left outer").sort_by("_row")
        topics = self._topics.take(found["_topics"])
        subscription = members["subscription"]
        missing = pc.is_null(subscription)
        inferred = pc.if_else(
            missing,
            pc.if_else(pc.is_valid(topics), True, pa.scalar(None, pa.bool_())),
            pc.fill_null(members["subscription_inferred"], False),
        )
        enriched = members.drop_columns(["assignment_groups"])
        for name, column in (
            ("assignment", self._from_groups(members)),
            ("subscription", pc.if_else(missing, topics, subscription)),
            ("subscription_inferred", inferred),
        ):
            enriched = enriched.set_column(enriched.schema.get_field_index(name), name, column)
        return enriched

    def _from_groups(self, members: pa.Table) -> pa.ChunkedArray:
        """The assignment column, completed where only topic-less groups were printed:
        with the member's owned partitions when their numbers are the ones listed."""
        assignment = members["assignment"]
        todo = pc.and_(pc.is_null(assignment), pc.is_valid(members["assignment_groups"]))
        rows = np.flatnonzero(todo.to_numpy(zero_copy_only=False))
        if not len(rows):
            return assignment
        keys, pairs, numbers = self._owners()
        listed = members.take(rows)
        found = (
            _keyed(listed)
            .append_column("consumer_id", listed["consumer_id"])
            .append_column("_row", pa.array(range(len(rows)), pa.int64()))
            .join(keys, [*KEY, "consumer_id"], join_type="left outer")
            .sort_by("_row")
        )
        owner = found["_owner"].fill_null(-1).to_numpy()
        known = (owner >= 0) & _same_numbers(
            listed["assignment_groups"].combine_chunks(), numbers, owner
        )
        completed = pairs.take(pa.array(np.where(known, owner, 0), mask=~known))
        # Replaced by position: the completed values appended, then taken back in order.
        positions = np.arange(len(members))
        positions[rows] = len(members) + np.arange(len(rows))
        combined = pa.concat_arrays([*assignment.chunks, completed])
        return pa.chunked_array([combined.take(pa.array(positions))])


def _same_numbers(groups: pa.ListArray, numbers: pa.ListArray, owner: np.ndarray) -> np.ndarray:
    """Per row: are the partition numbers of its groups, sorted, its owner's numbers?"""
    count = len(groups)
    if not len(numbers):
        return np.zeros(count, dtype=bool)
    inner = pc.list_flatten(groups)
    flat = pa.table(
        {
            "row": pc.list_parent_indices(groups).take(pc.list_parent_indices(inner)),
            "number": pc.list_flatten(inner),
        }
    ).sort_by([("row", "ascending"), ("number", "ascending")])
    row, listed = flat["row"].to_numpy(), flat["number"].to_numpy()
    sizes = np.bincount(row, minlength=count)
    starts = np.cumsum(sizes) - sizes
    owner_sizes = pc.list_value_length(numbers).to_numpy()
    owner_starts = numbers.offsets.to_numpy()[:-1]
    mine = np.where(owner >= 0, owner, 0)
    same = (owner >= 0) & (owner_sizes[mine] == sizes)
    check = same[row]
    at = owner_starts[mine[row[check]]] + np.arange(len(row))[check] - starts[row[check]]
    owned = pc.list_flatten(numbers).to_numpy()
    wrong = np.bincount(row[check][listed[check] != owned[at]], minlength=count)
    return same & (wrong == 0)


_EMPTY = pa.table(
    {
        "cluster": pa.array([], pa.string()),
        "group_id": pa.array([], pa.string()),
        "captured_at": pa.array([], pa.int64()),
        "topic": pa.array([], pa.string()),
        "partition": pa.array([], pa.int32()),
        "consumer_id": pa.array([], pa.string()),
    }
)


def _keyed(members: pa.Table) -> pa.Table:
    """The KEY columns as the offsets side holds them."""
    return members.select(list(KEY)).cast(_EMPTY.select(list(KEY)).schema)
