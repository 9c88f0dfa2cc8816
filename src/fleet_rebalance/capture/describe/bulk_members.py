"""The members view's common rows in Arrow's kernels, a header layout at a time.

A row takes this path only when its shape leaves no doubt: one token per column (the
free-text last column may hold spaces), a numeric or missing #PARTITIONS and an
ASSIGNMENT text in one of the three spellings below, strictly formed, listing as many
partitions as #PARTITIONS says. Every other row goes back to the per-line path
(per_line.py), which quarantines it with a reason or reads its rarer shapes; so both
paths give the same rows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture.describe.bulk_view import BulkView
from fleet_rebalance.capture.describe.rows import EPOCH_COLUMNS, UPGRADED
from fleet_rebalance.capture.result import MEMBERS
from fleet_rebalance.capture.share_streams import SHARE_MEMBER_EPOCH

FIELDS = pa.schema(
    [
        ("group_id", pa.string()),
        ("consumer_id", pa.string()),
        ("group_instance_id", pa.string()),
        ("host", pa.string()),
        ("client_id", pa.string()),
        ("partition_count", pa.int32()),
        ("assignment", pa.list_(pa.struct([("topic", pa.string()), ("partition", pa.int32())]))),
        ("subscription", pa.list_(pa.string())),
        ("subscription_inferred", pa.bool_()),
        ("assignment_groups", pa.list_(pa.list_(pa.int32()))),
        ("line_number", pa.int32()),
        ("member_epoch", pa.int32()),
        ("target_epoch", pa.int32()),
        ("upgraded", pa.bool_()),
    ]
)
REQUIRED = ("CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
ASSIGNMENT_COLUMNS = ("CURRENT-ASSIGNMENT", "ASSIGNMENT")  # 4.x's first, as per line
FREE_TEXT_LAST = ("ASSIGNMENT", "CLIENT-ID")
MISSING = pa.array(["-", ""])  # rows.MISSING: printed for "no value"
UPGRADED_TEXT = pa.array(["true", "false", "-", ""])
INT32 = pa.int32()
NUMBER = r"(?:0|[1-9]\d{0,8})"  # numbers.CANONICAL, and fits an int32
EPOCH = r"^(?:0|-?[1-9]\d{0,8})$"  # numbers.CANONICAL (no `-0`), and fits an int32
PARTS = rf"{NUMBER}(?:,{NUMBER})*"
TOPIC = r"[^\s(),:;]+"  # Kafka's legal topic characters, [a-zA-Z0-9._-], are a subset
KIP_1099 = rf"^{TOPIC}:{PARTS}(?:;{TOPIC}:{PARTS})*$"  # audit:2;orders:0,1,10   (4.x)
SCALA = rf"^{TOPIC}\({PARTS}\)(?:, {TOPIC}\({PARTS}\))*$"  # audit(2), orders(0,1,10)
TOPICLESS = rf"^\({PARTS}\)(?:, \({PARTS}\))*$"  # (0,1,10), (2)   (3.8, 3.9)


class BulkMembers(BulkView):
    table, required = MEMBERS, REQUIRED

    def layout_for(
        self, columns: list[str], comma: bool, group: str | None
    ) -> tuple[str, ...] | None:
        """The share tool's --verbose layout (MEMBER-EPOCH) takes the per-line path,
        which says its group type (share_streams.share_member)."""
        if SHARE_MEMBER_EPOCH in columns:
            return None
        return super().layout_for(columns, comma, group)

    def convert(
        self, layout: tuple[str, ...], group: str | None, numbers: pa.Array, lines: pa.Array
    ) -> set[int]:
        index = {name: i for i, name in enumerate(layout)}
        width = len(layout)
        free_last = layout[-1] in FREE_TEXT_LAST
        tokens = pc.utf8_split_whitespace(lines, max_splits=width - 1 if free_last else None)
        shaped = pc.equal(pc.list_value_length(tokens), width)
        bad = set(numbers.filter(pc.invert(shaped)).to_pylist())
        tokens, numbers = tokens.filter(shaped), numbers.filter(shaped)
        count = len(tokens)
        if not count:
            return bad

        def column(name: str) -> pa.Array:
            if name not in index:
                return pa.nulls(count, pa.string())
            return pc.list_element(tokens, index[name])

        def value(name: str) -> pa.Array:
            values = column(name)
            return pc.if_else(pc.is_in(values, MISSING), pa.scalar(None, pa.string()), values)

        good = np.ones(count, dtype=bool)
        if free_last:  # the per-line path joins the last column's words with one space
            last = column(layout[-1])
            good &= _mask(pc.invert(pc.match_substring_regex(last, r"\s\s|[^\S ]")))
        if "GROUP" in index:  # `-` is no group id: the per-line path says so
            good &= ~_mask(pc.equal(column("GROUP"), "-"))
        epochs = []
        for name in EPOCH_COLUMNS:
            epoch = column(name)
            number = _mask(pc.match_substring_regex(epoch, EPOCH))
            good &= number | _mask(pc.is_in(epoch, MISSING)) | (name not in index)
            epochs.append(pc.cast(pc.if_else(number, epoch, pa.scalar(None, pa.string())), INT32))
        upgraded_text = column(UPGRADED)
        upgraded = pc.if_else(
            pc.is_in(upgraded_text, MISSING),
            pa.scalar(None, pa.bool_()),
            pc.equal(upgraded_text, "true"),
        )
        if UPGRADED in index:  # anything else the per-line path quarantines
            good &= _mask(pc.is_in(upgraded_text, UPGRADED_TEXT))
        partitions = column("#PARTITIONS")
        numeric = _mask(pc.match_substring_regex(partitions, rf"^{NUMBER}$"))
        good &= numeric | _mask(pc.is_in(partitions, MISSING))
        partition_count = pc.cast(
            pc.if_else(numeric, partitions, pa.scalar(None, pa.string())), pa.int32()
        )
        text_column = next((c for c in ASSIGNMENT_COLUMNS if c in index), None)
        if text_column is None:
            assignment = pa.nulls(count, FIELDS.field("assignment").type)
            groups = pa.nulls(count, FIELDS.field("assignment_groups").type)
        else:
            assignment, groups, listed, readable = _assignments(column(text_column))
            good &= readable
            stated = partition_count.is_valid().to_numpy(zero_copy_only=False)
            counts = partition_count.fill_null(0).to_numpy()
            good &= ~stated | (listed == counts)
        group_ids = column("GROUP") if "GROUP" in index else pa.array([group] * count, pa.string())
        batch = pa.RecordBatch.from_arrays(
            [
                group_ids,
                value("CONSUMER-ID"),
                value("GROUP-INSTANCE-ID"),
                value("HOST"),
                value("CLIENT-ID"),
                partition_count,
                assignment,
                pa.nulls(count, FIELDS.field("subscription").type),
                pa.nulls(count, pa.bool_()),
                groups,
                numbers,
                *epochs,
                upgraded,
            ],
            schema=FIELDS,
        ).filter(pa.array(good))
        if not good.all():
            bad |= set(numbers.filter(pa.array(~good)).to_pylist())
        self.append(batch)
        return bad


def _assignments(text: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]:
    """(assignment, assignment_groups, partitions listed, readable) per row, as
    parse_assignment reads them: `-` is no partitions, 3.8/3.9's topic-less groups leave
    the assignment unknown."""
    count = len(text)
    empty = _mask(pc.equal(text, "-"))
    kip = _mask(pc.match_substring_regex(text, KIP_1099))
    scala = _mask(pc.match_substring_regex(text, SCALA))
    topicless = _mask(pc.match_substring_regex(text, TOPICLESS))
    # audit(2), orders(0,1,10) -> audit:2;orders:0,1,10
    scala_as_kip = pc.replace_substring(
        pc.replace_substring(pc.utf8_slice_codeunits(text, 0, -1), "), ", ";"), "(", ":"
    )
    pairs_text = pc.if_else(
        kip, text, pc.if_else(scala, scala_as_kip, pa.scalar(None, pa.string()))
    )
    items = pc.split_pattern(pairs_text, ";")
    item_row = pc.list_parent_indices(items).to_numpy()
    topic_parts = pc.split_pattern(pc.list_flatten(items), ":", max_splits=1)
    numbers = pc.split_pattern(pc.list_element(topic_parts, 1), ",")
    pair_item = pc.list_parent_indices(numbers)
    pairs = pa.StructArray.from_arrays(
        [
            pc.list_element(topic_parts, 0).take(pair_item),
            pc.cast(pc.list_flatten(numbers), pa.int32()),
        ],
        fields=list(FIELDS.field("assignment").type.value_type),
    )
    pair_count = np.bincount(item_row[pair_item.to_numpy()], minlength=count)
    assignment = list_array(pair_count, pairs, kip | scala | empty)

    group_text = pc.if_else(
        topicless, pc.utf8_slice_codeunits(text, 1, -1), pa.scalar(None, pa.string())
    )
    outer = pc.split_pattern(group_text, "), (")
    inner = pc.cast(pc.split_pattern(pc.list_flatten(outer), ","), pa.list_(pa.int32()))
    inner_sizes = pc.list_value_length(inner).to_numpy()
    group_row = pc.list_parent_indices(outer).to_numpy()
    group_count = np.bincount(group_row, minlength=count)
    groups = list_array(group_count, inner, topicless)
    listed = pair_count + np.bincount(group_row, weights=inner_sizes, minlength=count).astype(
        np.int64
    )
    return assignment, groups, listed, empty | kip | scala | topicless


def list_array(
    sizes: np.ndarray, values: pa.Array, valid: np.ndarray | None = None
) -> pa.ListArray:
    """Consecutive runs of `values`, `sizes[i]` long, as lists; null where not `valid`."""
    offsets = np.zeros(len(sizes) + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    mask = None if valid is None else pa.array(~valid)
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=mask)


def _mask(values: pa.Array) -> np.ndarray:
    return values.fill_null(False).to_numpy(zero_copy_only=False)
