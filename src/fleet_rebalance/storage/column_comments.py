"""table_docs.py's descriptions as Delta column comments.

Delta keeps a column's comment in its schema field's metadata ({"comment": ...}), which
is what `DESCRIBE` shows and every Delta reader gets. Delta creates a table with the
schema of its first write and adds a column with the schema of the write that brings
it, so the Warehouse puts the comments on every write's schema: a new table or column
gets them; an existing column keeps the metadata its table has (a write does not change
it, and the storage's schema checks ignore it).
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.types import StructField, StructType

from fleet_rebalance.table_docs import column_comments

COMMENT = "comment"


def commented_schema(schema: StructType, table: str) -> StructType:
    """`schema` with each of `table`'s documented columns carrying its comment."""
    comments = column_comments(table)
    return StructType(
        [StructField(f.name, f.dataType, f.nullable, _metadata(f, comments)) for f in schema.fields]
    )


def commented_frame(df: DataFrame, table: str) -> DataFrame:
    """`df` with each of `table`'s documented columns carrying its comment (a
    projection; the rows and their partitioning are as they were)."""
    comments = column_comments(table)
    if not any(name in comments for name in df.columns):
        return df
    return df.select(
        *[
            F.col(_quoted(f.name)).alias(f.name, metadata=_metadata(f, comments))
            if f.name in comments
            else F.col(_quoted(f.name))
            for f in df.schema.fields
        ]
    )


def _metadata(field: StructField, comments: dict[str, str]) -> dict:
    if field.name not in comments:
        return dict(field.metadata)
    return {**field.metadata, COMMENT: comments[field.name]}


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
