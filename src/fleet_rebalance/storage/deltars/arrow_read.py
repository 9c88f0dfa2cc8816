"""Reading a Delta snapshot's files with Arrow on the executors: for stores the JVM
has no Hadoop filesystem for (s3:// on a Spark without hadoop-aws, gs://, abfs://).

The driver hands over the file list delta-rs resolved; each task reads its files
through the store's pyarrow filesystem and adds the partition columns from the log's
values, so the DataFrame is the same one Spark's Parquet reader would give.
"""

from __future__ import annotations

import json
import posixpath
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from fleet_rebalance.bins import largest_first
from fleet_rebalance.filesystems import Location

SOURCE_NAME = "fleet_rebalance_delta_files"
# Sessions the data source is registered with (registration lives in the session).
_REGISTERED: weakref.WeakSet[SparkSession] = weakref.WeakSet()
TARGET_TASK_BYTES = 128 << 20
BATCH_ROWS = 64 * 1024


@dataclass(frozen=True)
class FilesPartition(InputPartition):
    files: tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...]


def read_with_arrow(
    spark: SparkSession,
    table: Location,
    schema: StructType,
    paths: Sequence[str],
    values: Sequence[dict[str, str | None]],
    sizes: Sequence[int],
) -> DataFrame:
    if spark not in _REGISTERED:
        spark.dataSource.register(DeltaFilesDataSource)
        _REGISTERED.add(spark)
    files = [
        (path, sorted(value.items()), size)
        for path, value, size in zip(paths, values, sizes, strict=True)
    ]
    request = {
        "uri": table.uri,
        "storage_options": dict(table.options),
        "files": files,
        "tasks": task_count(sizes, spark.sparkContext.defaultParallelism),
    }
    return (
        spark.read.format(SOURCE_NAME).schema(schema).option("request", json.dumps(request)).load()
    )


def task_count(sizes: Sequence[int], parallelism: int) -> int:
    """Enough tasks to keep every core busy, and none reading much over 128 MiB."""
    by_size = -(-sum(sizes) // TARGET_TASK_BYTES)
    return max(1, min(len(sizes), max(parallelism, by_size)))


class DeltaFilesDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def reader(self, schema: StructType) -> DeltaFilesReader:
        return DeltaFilesReader(json.loads(self.options["request"]), schema)


class DeltaFilesReader(DataSourceReader):
    def __init__(self, request: dict, schema: StructType) -> None:
        self.request = request
        self.schema_json = schema.json()

    def partitions(self) -> list[FilesPartition]:
        chunks = largest_first(
            self.request["files"],
            self.request["tasks"],
            size=lambda f: f[2],
            tiebreak=lambda f: f[0],
        )
        return [
            FilesPartition(tuple((p, tuple(map(tuple, v))) for p, v, _ in chunk))
            for chunk in chunks
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FilesPartition), "partitions() made it"
        schema = to_arrow_schema(StructType.fromJson(json.loads(self.schema_json)))
        table = Location(self.request["uri"], self.request["storage_options"])
        fs, root = table.filesystem()
        for relative, values in partition.files:
            partition_values = dict(values)
            with fs.open_input_file(posixpath.join(root, relative)) as handle:
                parquet = pq.ParquetFile(handle)
                columns = [n for n in schema.names if n not in partition_values]
                present = [n for n in columns if n in parquet.schema_arrow.names]
                for batch in parquet.iter_batches(BATCH_ROWS, columns=present):
                    yield _complete(batch, schema, partition_values)


def _complete(
    batch: pa.RecordBatch, schema: pa.Schema, partition_values: dict[str, str | None]
) -> pa.RecordBatch:
    """The batch in the table's schema: partition columns from the log, columns the file
    lacks (added later by schema evolution) as nulls, every column in the table's type."""
    n = batch.num_rows
    arrays = []
    for field in schema:
        if field.name in partition_values:
            value = partition_values[field.name]
            scalar = pa.scalar(value, pa.string()).cast(field.type)
            arrays.append(pa.repeat(scalar, n))
        elif field.name in batch.schema.names:
            arrays.append(batch.column(field.name).cast(field.type))
        else:
            arrays.append(pa.nulls(n, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
