"""What a parse task keeps of a capture's offsets rows once they are written: only what
members enrichment (members_enrichment.CaptureOffsets) may read, small.

The offsets rows of a big capture are written a chunk at a time (bronze_batches.py);
keeping their key columns whole until the members are enriched would cost about as
much as the rows. Enrichment reads two things of them: the topics a group has offsets
for (each (key, topic) once is enough), and each consumer's owned (topic, partition)s,
only for the members printed with topic-less assignments (3.8/3.9). So each (key, topic)
is kept once, and the owned partitions with their strings dictionary-encoded; at the
capture's end only the groups whose members need owners are decoded. When the capture's
members files were parsed before an offsets file (ingest orders them so), the groups
that need owners are known and only theirs are kept: none, for most captures.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture.members_enrichment import KEY, CaptureOffsets

TOPIC_KEY = [*KEY, "topic"]
OWNED = [*KEY, "consumer_id", "topic", "partition"]
ENCODED = ("cluster", "group_id", "consumer_id", "topic")


class OffsetsKept:
    """A capture's offsets rows reduced to what enrichment reads, chunk by chunk."""

    def __init__(self) -> None:
        self._topics: list[pa.Table] = []
        self._owned: list[pa.Table] = []

    def add(self, offsets: pa.Table, owner_groups: pa.Array | None = None) -> None:
        """Offsets rows as bronze_batches writes them (any further columns). With
        `owner_groups` (the capture's members all read: owner_groups()), only those
        groups' owned partitions are kept; None keeps every group's."""
        if not offsets.num_rows:
            return
        topics = offsets.select(TOPIC_KEY).group_by(TOPIC_KEY).aggregate([])
        rows = topics.num_rows
        self._topics.append(
            topics.append_column("consumer_id", pa.nulls(rows, pa.string())).append_column(
                "partition", pa.nulls(rows, pa.int32())
            )
        )
        owned = offsets.select(OWNED).filter(offsets["consumer_id"].is_valid())
        if owner_groups is not None:
            owned = owned.filter(pc.is_in(owned["group_id"], value_set=owner_groups))
            if not owned.num_rows:
                return
        for name in ENCODED:
            index = owned.schema.get_field_index(name)
            owned = owned.set_column(index, name, pc.dictionary_encode(owned[name]))
        self._owned.append(owned)

    def capture(self, members: Iterable[pa.Table]) -> CaptureOffsets:
        """The capture's CaptureOffsets for these members rows (MEMBERS_SCHEMA): the
        topics of every group, the owners of the groups with topic-less assignments."""
        wanted = owner_groups(members)
        owned = [
            t.filter(pc.is_in(t["group_id"].cast(pa.string()), value_set=wanted))
            for t in self._owned
        ]
        return CaptureOffsets.of([*self._topics, *(t for t in owned if t.num_rows)])


def owner_groups(members: Iterable[pa.Table]) -> pa.Array:
    """The groups of these members rows (MEMBERS_SCHEMA) whose assignments are printed
    without topics (3.8/3.9): the only ones enrichment needs owned partitions for."""
    groups = [
        m.filter(pc.and_(pc.is_null(m["assignment"]), pc.is_valid(m["assignment_groups"])))[
            "group_id"
        ]
        for m in members
    ]
    return pa.chunked_array([g for c in groups for g in c.chunks], pa.string()).unique()
