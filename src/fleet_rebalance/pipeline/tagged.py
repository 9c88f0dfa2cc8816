"""One Python stage's rows for several tables, tagged with their table (`_table`) and
split back per table before Delta writes them.

A stage that parses a capture (ingest) or replays a group (replay) makes the rows of
every table at once; Spark writes one table per job, so the stage's output is persisted
once and each table selected from it, instead of running the stage per table. The
stages hand them to Spark packed: each Arrow batch of a table as one row holding its
Arrow IPC stream. Spark converts and caches only the packed rows, not tens of mostly
null columns per row, and each table's write unpacks only its own batches. The union
of the tables' columns (union_schema) is only the form the replay's plain-pandas oracle
gives its rows in (replay/group.py replay_group).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

TABLE = "_table"
ROWS = "_rows"
BATCH = "_batch"
PACKED = StructType(
    [
        StructField(TABLE, StringType(), False),
        StructField(ROWS, LongType(), False),
        StructField(BATCH, BinaryType(), False),
    ]
)
_IPC = pa.ipc.IpcWriteOptions(compression="lz4")


def union_schema(tables: Mapping[str, StructType]) -> StructType:
    """`_table`, then every table's columns once (a name must have one type)."""
    fields: dict[str, StructField] = {TABLE: StructField(TABLE, StringType(), False)}
    for schema in tables.values():
        for field in schema.fields:
            known = fields.setdefault(field.name, field)
            if known.dataType != field.dataType:
                raise TypeError(f"column {field.name} has two types in {', '.join(tables)}")
    return StructType(list(fields.values()))


def conformed(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` in `schema`: its columns cast to the schema's types, a column it lacks
    null."""
    rows = batch.num_rows
    columns = [
        batch.column(field.name).cast(field.type)
        if field.name in batch.schema.names
        else pa.nulls(rows, field.type)
        for field in schema
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def packed(batch: pa.RecordBatch, table: str) -> pa.RecordBatch:
    """One PACKED row: `batch` (rows of `table`) as an Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=_IPC) as writer:
        writer.write_batch(batch)
    stream = sink.getvalue()
    offsets = pa.array([0, stream.size], pa.int32()).buffers()[1]
    blob = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, stream])
    return pa.record_batch(
        [pa.array([table]), pa.array([batch.num_rows], pa.int64()), blob], schema=_PACKED_ARROW
    )


def packed_tables(tables: Mapping[str, pa.Table]) -> pa.Table:
    """Each table's rows (by name) as PACKED rows, a batch each."""
    batches = [
        packed(batch, name)
        for name, table in tables.items()
        for batch in table.combine_chunks().to_batches()
    ]
    return pa.Table.from_batches(batches, schema=_PACKED_ARROW)


def unpacked(blobs: pa.Array) -> Iterator[pa.RecordBatch]:
    """The batches PACKED's `_batch` values hold."""
    for blob in blobs:
        yield from pa.ipc.open_stream(blob.as_buffer())


def row_counts(stage: DataFrame) -> dict[str, int]:
    """Rows per table of a PACKED `stage`."""
    return {r[0]: r[1] for r in stage.groupBy(TABLE).agg(F.sum(ROWS)).collect()}


def table_frames(
    stage: DataFrame,
    tables: Mapping[str, StructType],
    rows: Mapping[str, int],
    tasks: Callable[[int], int],
) -> dict[str, DataFrame]:
    """Each table's rows of a PACKED `stage` (`rows` of them), in the table's schema, in
    tasks(rows) partitions. The packed rows are coalesced before they are unpacked: a
    coalesce after would run one Python worker per partition of the stage in each task.
    A table with no rows is an empty frame, with no scan of the stage."""
    spark = stage.sparkSession
    return {
        name: stage.where(F.col(TABLE) == name)
        .select(BATCH)
        .coalesce(tasks(rows[name]))
        .mapInArrow(functools.partial(_unpack, schema=to_arrow_schema(schema)), schema)
        if rows.get(name)
        else spark.createDataFrame([], schema)
        for name, schema in tables.items()
    }


def _unpack(batches: Iterator[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for rows in unpacked(batch.column(0)):
            yield rows if rows.schema == schema else conformed(rows, schema)


_PACKED_ARROW = to_arrow_schema(PACKED)
