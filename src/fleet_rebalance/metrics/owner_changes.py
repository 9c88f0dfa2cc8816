"""One group's owner changes per partition, date and assignor, from its
assignment_replay rows as an Arrow table: partition_flapping's counting, pure.

The rows are exploded (one per member, event and partition it holds), ordered by date,
assignor, topic, partition, event_seq, then member_id (a partition listed twice in one
event, e.g. held by two members in an observed capture, counts in member order, not in
whatever order the rows arrived), and counted per run: an owner change is a row whose
member differs from the row before it in its run; a null member is never a change
(SQL's `!=` on null), and is no distinct owner.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEYS = ["cluster", "group_id", "topic", "partition", "date", "assignor"]
SCHEMA = pa.schema(
    [
        ("cluster", pa.string()),
        ("group_id", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("date", pa.date32()),
        ("assignor", pa.string()),
        ("owned_events", pa.int32()),
        ("owner_changes", pa.int32()),
        ("distinct_owners", pa.int32()),
    ]
)


def owner_changes(rows: pa.Table) -> pa.Table:
    """`rows`: cluster, group_id, date, assignor, event_seq, member_id and partitions
    (list of topic, partition structs); one row per (KEYS) run, in SCHEMA."""
    partitions = rows.column("partitions")
    flat = pc.list_flatten(partitions)
    held = rows.drop_columns(["partitions"]).take(pc.list_parent_indices(partitions))
    held = held.append_column("topic", pc.struct_field(flat, "topic"))
    held = held.append_column("partition", pc.struct_field(flat, "partition"))
    if not held.num_rows:
        return SCHEMA.empty_table()
    member = _ranks(held.column("member_id"))
    run_keys = [_ranks(held.column(k)) for k in ("date", "assignor", "topic", "partition")]
    seq = _ranks(held.column("event_seq"))
    order = np.lexsort((member, seq, *reversed(run_keys)))
    member = member[order]
    known = held.column("member_id").is_valid().to_numpy(zero_copy_only=False)[order]
    starts = np.zeros(len(order), dtype=bool)
    starts[0] = True
    for key in run_keys:
        ordered = key[order]
        starts[1:] |= ordered[1:] != ordered[:-1]
    run = np.cumsum(starts) - 1
    changed = np.zeros(len(order), dtype=bool)
    changed[1:] = ~starts[1:] & (member[1:] != member[:-1]) & known[1:] & known[:-1]
    runs = int(run[-1]) + 1
    width = int(member.max()) + 1
    owners = np.unique(run[known] * width + member[known]) // width
    first = held.take(pa.array(order[starts]))
    counts = {
        "owned_events": np.bincount(run, minlength=runs),
        "owner_changes": np.bincount(run, weights=changed, minlength=runs),
        "distinct_owners": np.bincount(owners, minlength=runs),
    }
    return pa.table(
        {
            **{key: first.column(key) for key in KEYS},
            **{name: pa.array(values.astype(np.int32)) for name, values in counts.items()},
        },
        schema=SCHEMA,
    )


def _ranks(column: pa.ChunkedArray) -> np.ndarray:
    """Dense ranks in ascending order (nulls last, one rank of their own): codes that
    sort and group like the values."""
    ranks = pc.rank(column, sort_keys="ascending", null_placement="at_end", tiebreaker="dense")
    return ranks.to_numpy().astype(np.int64)
