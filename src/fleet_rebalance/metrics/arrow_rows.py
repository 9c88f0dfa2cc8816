"""Row rules over a DataFrame through Arrow: each batch's rows as Python values, the
rule's rows back in the table's schema.

Not through pandas: a long column holding a null becomes float64 there, exact only up
to 2^53, so a lag of 2^63 - 1 would come back as 2^63 and fail its column (issue 56).
Arrow's Python values are the column's own: ints, None, lists, maps as key-value pairs
(to_pylist's, read a column at a time: arrow_values.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from fleet_rebalance.arrow_values import python_rows

Rows = list[dict[str, Any]]


def map_rows(frame: DataFrame, rule: Callable[[Rows], Rows], schema: StructType) -> DataFrame:
    """`rule` applied to the rows of each batch of `frame`; its rows in `schema`."""
    arrow_schema = to_arrow_schema(schema)

    def apply(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_pylist(rule(python_rows(batch)), schema=arrow_schema)

    return frame.mapInArrow(apply, schema)


def grouped_rows(
    frame: DataFrame, keys: list[str], rule: Callable[[Rows], Rows], schema: StructType
) -> DataFrame:
    """`rule` applied to the rows of each group of `keys` at once; its rows in `schema`."""
    arrow_schema = to_arrow_schema(schema)

    def apply(table: pa.Table) -> pa.Table:
        return pa.Table.from_pylist(rule(python_rows(table)), schema=arrow_schema)

    return frame.groupBy(*keys).applyInArrow(apply, schema)
