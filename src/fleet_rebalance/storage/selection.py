"""Rows of some partitions: the row filter a read applies for a `where`.

A `where` ({column: values}, values in the log's string form, see partitions.py) names
partitions; Delta resolves a filter on partition columns from its log, so a read of one
date opens that date's files only. The filter also serves columns a table is not
partitioned by (a table written before it was partitioned)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyspark.sql.functions as F
from pyspark.sql import Column
from pyspark.sql.types import StructType

from fleet_rebalance.storage.errors import StorageError


def quoted(name: str) -> Column:
    """A column by its exact name: a dot or backtick in it is part of the name."""
    return F.col("`" + name.replace("`", "``") + "`")


def rows_in(
    schema: StructType, where: Mapping[str, Sequence[str | None]], uri: str = "table"
) -> Column:
    """True for the rows whose every `where` column holds one of its values (null: the
    null partition)."""
    condition = F.lit(True)
    for column, values in where.items():
        if column not in schema.fieldNames():
            raise StorageError(f"{uri}: cannot select rows by {column}: no such column")
        kind = schema[column].dataType
        present = [F.lit(v).cast(kind) for v in values if v is not None]
        test = quoted(column).isin(*present) if present else F.lit(False)
        if len(present) != len(values):
            test = test | quoted(column).isNull()
        condition = condition & test
    return condition
