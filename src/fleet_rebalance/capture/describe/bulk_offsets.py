"""The offsets view's common rows in Arrow's kernels, a header layout at a time.

A row takes this path only when one token per column, a partition, offsets and lag
spelled as Kafka prints them (numbers.CANONICAL, never negative) and a lag that agrees
with the offsets leave no doubt; every other row goes back to the per-line path (per_line.py),
which quarantines it with a reason or reads its rarer shapes: both paths give the
same rows.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture.describe.bulk_view import BulkView
from fleet_rebalance.capture.describe.headers import OFFSETS_REQUIRED
from fleet_rebalance.capture.result import OFFSETS

OFFSETS_FIELDS = (
    "group_id",
    "topic",
    "partition",
    "current_offset",
    "log_end_offset",
    "lag",
    "consumer_id",
    "host",
    "client_id",
    "line_number",
)


class BulkOffsets(BulkView):
    """The offsets view's common case in Arrow's kernels: split on whitespace, take the
    columns, check the numbers and the lag, cast. One pass per header layout per file."""

    table, required = OFFSETS, OFFSETS_REQUIRED

    def convert(
        self, layout: tuple[str, ...], group: str | None, numbers: pa.Array, lines: pa.Array
    ) -> set[int]:
        index = {name: i for i, name in enumerate(layout)}
        width = len(layout)
        tokens = pc.utf8_split_whitespace(lines)
        ok = pc.equal(pc.list_value_length(tokens), width)
        shaped = pc.all(ok).as_py()
        if not shaped:
            tokens, numbers_ok = tokens.filter(ok), numbers.filter(ok)
        else:
            numbers_ok = numbers
        bad = set() if shaped else set(numbers.filter(pc.invert(ok)).to_pylist())
        count = len(tokens)
        if not count:
            return bad

        def column(name: str) -> pa.Array:
            return pc.list_element(tokens, index[name])

        topic, part = column("TOPIC"), column("PARTITION")
        current, end, lag = (column(c) for c in ("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"))
        good = pc.and_(pc.not_equal(topic, "-"), _digits(part, 9))
        if "GROUP" in index:  # `-` is no group id: the per-line path says so
            good = pc.and_(good, pc.not_equal(column("GROUP"), "-"))
        for values in (current, end, lag):  # negatives: the per-line path refuses them
            good = pc.and_(good, pc.or_(pc.equal(values, "-"), _digits(values, 18)))
        dash = pa.scalar(None, pa.string())
        current_i, end_i, lag_i = (
            pc.cast(pc.if_else(pc.and_(good, pc.not_equal(v, "-")), v, dash), pa.int64())
            for v in (current, end, lag)
        )
        both = pc.and_(pc.is_valid(current_i), pc.is_valid(end_i))
        consistent = pc.if_else(
            both,
            pc.and_(
                pc.greater_equal(end_i, current_i),
                pc.fill_null(pc.equal(lag_i, pc.subtract(end_i, current_i)), True),
            ),
            pc.is_null(lag_i),
        )
        good = pc.and_(good, consistent)
        if not pc.all(good).as_py():
            bad |= set(numbers_ok.filter(pc.invert(good)).to_pylist())

        def text(name: str) -> pa.Array:
            values = column(name)
            return pc.if_else(pc.equal(values, "-"), dash, values)

        group_ids = column("GROUP") if "GROUP" in index else pa.array([group] * count, pa.string())
        batch = pa.RecordBatch.from_arrays(
            [
                group_ids,
                topic,
                _int32(part, good),
                current_i,
                end_i,
                lag_i,
                text("CONSUMER-ID"),
                text("HOST"),
                text("CLIENT-ID"),
                numbers_ok,
            ],
            names=list(OFFSETS_FIELDS),
        ).filter(good)
        self.append(batch)
        return bad


def _digits(values: pa.Array, most: int) -> pa.Array:
    """1 to `most` ASCII digits without a leading zero (numbers.CANONICAL, and fits an
    int32/int64 cast); cheaper than a regex. Longer numbers take the per-line path."""
    return pc.and_(
        pc.and_(pc.string_is_ascii(values), pc.utf8_is_digit(values)),
        pc.and_(
            pc.less_equal(pc.utf8_length(values), most),
            pc.or_(pc.equal(values, "0"), pc.invert(pc.starts_with(values, "0"))),
        ),
    )


def _int32(values: pa.Array, good: pa.Array) -> pa.Array:
    return pc.cast(pc.if_else(good, values, pa.scalar("0", pa.string())), pa.int32())
