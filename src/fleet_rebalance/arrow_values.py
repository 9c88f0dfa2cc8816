"""Arrow cells as the Python values to_pylist gives, without a pyarrow scalar per cell.

pyarrow's to_pylist builds a scalar for every cell and, for a struct, a mapping view it
walks key by key; the replay's snapshots and the metrics' row rules read every cell of
their inputs, so that was much of their time (docs/benchmarks.md). Strings, integers
without nulls, lists and structs of those are read a column at a time through numpy;
anything else (timestamps, floats, maps, integers with nulls, which numpy would make
floats) still through to_pylist, so the values are always to_pylist's.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def python_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A column's cells as Python values, exactly as column.to_pylist() gives them."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values = python_values(array.values)  # the whole child: offsets index into it
        offsets = array.offsets.to_numpy().tolist()
        return [
            values[begin:end] if ok else None
            for ok, begin, end in zip(_valid(array), offsets[:-1], offsets[1:], strict=True)
        ]
    if pa.types.is_struct(kind):
        names = [kind.field(i).name for i in range(kind.num_fields)]
        if len(set(names)) == len(names):
            # flatten: each field cut to the struct's slice, null where the struct is
            fields = [python_values(child) for child in array.flatten()]
            return [
                dict(zip(names, cells, strict=True)) if ok else None
                for ok, *cells in zip(_valid(array), *fields, strict=True)
            ]
    strings = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if strings or (pa.types.is_integer(kind) and array.null_count == 0):
        return array.to_numpy(zero_copy_only=False).tolist()
    return array.to_pylist()


def python_rows(table: pa.Table | pa.RecordBatch) -> list[dict[str, Any]]:
    """table.to_pylist(): a dict per row, its columns read by python_values."""
    names = table.schema.names
    if not names:
        return [{} for _ in range(table.num_rows)]
    columns = [python_values(table.column(i)) for i in range(table.num_columns)]
    return [dict(zip(names, cells, strict=True)) for cells in zip(*columns, strict=True)]


def _valid(array: pa.Array) -> list[bool]:
    return array.is_valid().to_numpy(zero_copy_only=False).tolist()
