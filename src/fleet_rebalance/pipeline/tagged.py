"""One Python stage's rows for several tables: each row tagged with its table (`_table`)
in the union of the tables' columns, split back per table before Delta writes them.

A stage that parses a capture (ingest) or replays a group (replay) makes the rows of
every table at once; Spark writes one table per job, so the stage's output is persisted
once and each table selected from it, instead of running the stage per table.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.types import StringType, StructField, StructType

TABLE = "_table"


def union_schema(tables: Mapping[str, StructType], *extra: StructField) -> StructType:
    """`_table`, then every table's columns once (a name must have one type), then
    `extra` (the stage's own columns)."""
    fields: dict[str, StructField] = {TABLE: StructField(TABLE, StringType(), False)}
    for schema in tables.values():
        for field in schema.fields:
            known = fields.setdefault(field.name, field)
            if known.dataType != field.dataType:
                raise TypeError(f"column {field.name} has two types in {', '.join(tables)}")
    return StructType([*fields.values(), *extra])


def table_frames(result: DataFrame, tables: Mapping[str, StructType]) -> dict[str, DataFrame]:
    """Each table's rows of `result`, in the table's schema."""
    return {
        name: result.where(F.col(TABLE) == name).select(
            *[F.col(f.name).cast(f.dataType) for f in schema.fields]
        )
        for name, schema in tables.items()
    }


def tagged_batch(batch: pa.RecordBatch, table: str, union: pa.Schema) -> pa.RecordBatch:
    """`batch` (rows of `table`) as rows of the union: its columns cast to the union's
    types, every other column null."""
    rows = batch.num_rows
    columns = [
        pa.array([table] * rows, pa.string())
        if field.name == TABLE
        else batch.column(field.name).cast(field.type)
        if field.name in batch.schema.names
        else pa.nulls(rows, field.type)
        for field in union
    ]
    return pa.RecordBatch.from_arrays(columns, schema=union)
