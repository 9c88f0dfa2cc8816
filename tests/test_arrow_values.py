"""arrow_values gives exactly to_pylist's values (the oracle), on every shape the
replay and the metrics' row rules read: whole, sliced and chunked columns, nulls at
every level, lists of structs of lists."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from fleet_rebalance.arrow_values import python_rows, python_values

TP = pa.struct([("topic", pa.string()), ("partition", pa.int32())])
HOLDING = pa.struct([("consumer_id", pa.string()), ("assignment", pa.list_(TP))])
UNOWNED = pa.struct(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("current_offset", pa.int64()),
        ("lag", pa.int64()),
    ]
)
AT = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
ARRAYS = [
    pa.array([["a"], ["b", None], None, [], ["c"]], pa.list_(pa.string())),
    pa.array([[1], [2, 3], None, [], [4]], pa.list_(pa.int32())),
    pa.array([[1], None, [2**63 - 1]], pa.large_list(pa.int64())),
    pa.array(["x", None, "y"]),
    pa.array([1, 2**63 - 1, -(2**63)], pa.int64()),
    pa.array([1, None, 3], pa.int32()),  # numpy would make these floats
    pa.array([True, None, False]),
    pa.nulls(2),
    pa.array([{"topic": "t", "partition": 0}, None, {"topic": None, "partition": 2}], TP),
    pa.array(
        [
            [{"topic": "t", "partition": 1, "current_offset": 5, "lag": 2**63 - 1}],
            None,
            [],
            [
                {"topic": "u", "partition": 0, "current_offset": None, "lag": 0},
                {"topic": "u", "partition": 1, "current_offset": 7, "lag": None},
            ],
        ],
        pa.list_(pa.field("element", UNOWNED, nullable=False)),
    ),
    pa.array(
        [
            [{"consumer_id": "m1", "assignment": [{"topic": "t", "partition": 0}]}],
            [{"consumer_id": "m2", "assignment": None}, {"consumer_id": None, "assignment": []}],
            None,
            [{"consumer_id": "m3", "assignment": [{"topic": "t", "partition": 1}, None]}],
        ],
        pa.list_(HOLDING),
    ),
    pa.array(
        [{"at": AT, "n": 1.5}, {"at": None, "n": None}],
        pa.struct([("at", pa.timestamp("us", tz="UTC")), ("n", pa.float64())]),
    ),
    pa.array([{}, None, {}], pa.struct([])),
]


def shape(value: Any) -> Any:
    """A value with the type of every cell in it, for comparing types at every level."""
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return (type(value), value)


def columns(array: pa.Array) -> list[pa.Array | pa.ChunkedArray]:
    return [
        array,
        array.slice(1),
        array.slice(1, 1),
        pa.chunked_array([array, array.slice(1)]),
        pa.chunked_array([], array.type),
    ]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: str(a.type))
def test_python_values_are_to_pylists_whole_sliced_and_chunked(array):
    for column in columns(array):
        assert shape(python_values(column)) == shape(column.to_pylist())


def test_python_rows_are_to_pylists_rows():
    table = pa.table({f"c{i}": a.slice(0, 2) for i, a in enumerate(ARRAYS) if len(a) >= 2})
    for rows in (table, table.slice(1), table.to_batches()[0], table.select([])):
        assert shape(python_rows(rows)) == shape(rows.to_pylist())


def test_a_struct_with_two_fields_of_one_name_is_refused_as_to_pylist_refuses_it():
    twice = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array(["a", "b"])], names=["x", "x"])
    for read in (python_values, pa.Array.to_pylist):
        with pytest.raises(ValueError, match="duplicate field names"):
            read(twice)
