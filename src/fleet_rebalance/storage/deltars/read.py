"""The delta-rs engine's read side: the snapshot's files through Spark's Parquet reader,
or through Arrow on the executors where the JVM cannot read the store.

delta-rs resolves the log (checkpoints, removes, time travel); the files are read as a
parallel scan either way. Spark's reader is used where the JVM has a Hadoop filesystem
for the scheme (local, or s3a with hadoop-aws on the classpath); otherwise, e.g. s3://
on a stock Spark, the executors read them with pyarrow through the store's own
filesystem (arrow_read.py). storage.reader (the run context's `reader`) overrides the
choice.
"""

from __future__ import annotations

import json
from collections import defaultdict
from urllib.parse import unquote

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from fleet_rebalance.config import Reader
from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage.column_comments import with_metadata_of
from fleet_rebalance.storage.deltars.arrow_read import read_with_arrow
from fleet_rebalance.storage.deltars.commit import open_table
from fleet_rebalance.storage.engine import PartitionValues
from fleet_rebalance.storage.errors import StorageError, TableNotFoundError
from fleet_rebalance.storage.jvm_paths import jvm_uri
from fleet_rebalance.storage.partitions import escape_path_name, partition_dir, partition_value
from fleet_rebalance.storage.selection import rows_in
from fleet_rebalance.storage.table_checks import check_readable, outside_replace_where


def read_delta_rs(
    spark: SparkSession,
    table_loc: Location,
    version: int | None,
    where: PartitionValues | None = None,
    reader: Reader = "auto",
) -> DataFrame:
    """The snapshot's rows; with `where`, only the files of those partitions are read
    (the log says which), and the rows are filtered on columns that are no partition."""
    uri = table_loc.uri
    try:
        table = open_table(uri, version, table_loc.options)
    except Exception as exc:
        raise StorageError(f"{uri}: cannot load version {version}: {exc}") from exc
    if table is None:
        raise TableNotFoundError(f"{uri}: not a Delta table (no _delta_log)")
    metadata = table.metadata()
    check_readable(uri, table.protocol(), metadata.configuration)
    schema = StructType.fromJson(json.loads(table.schema().to_json()))
    partitions = list(metadata.partition_columns)
    actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    files = [
        (unquote(a["path"]), {c: _text(a.get(f"partition.{c}")) for c in partitions}, a)
        for a in actions
    ]
    pruned = {c: v for c, v in (where or {}).items() if c in partitions}
    if pruned:
        files = [f for f in files if not outside_replace_where(pruned, f[1])]
    frame = scan_files(
        spark,
        table_loc,
        schema,
        partitions,
        # The log holds URI-encoded paths; the stores want the names as they are.
        [path for path, _, _ in files],
        [values for _, values, _ in files],
        [int(a["size_bytes"]) for _, _, a in files],
        reader,
    )
    frame = with_metadata_of(frame, schema)  # the columns' comments, as Delta's reader keeps them
    rest = {c: v for c, v in (where or {}).items() if c not in partitions}
    return frame.where(rows_in(schema, rest, uri)) if rest else frame


def scan_files(
    spark: SparkSession,
    table_loc: Location,
    schema: StructType,
    partitions: list[str],
    paths: list[str],
    values: list[dict[str, str | None]],
    sizes: list[int],
    reader: Reader = "auto",
) -> DataFrame:
    """Rows of the given files of a table (paths relative to its root, unescaped, with
    their partition values): a parallel scan by Spark's Parquet reader, or by Arrow on
    the executors where the JVM cannot read the store."""
    if not paths:
        return spark.createDataFrame([], schema)
    root = jvm_root(spark, table_loc, reader)
    if root is None:
        return read_with_arrow(spark, table_loc, schema, paths, values, sizes)
    uris = [f"{root}/{p}" for p in paths]
    data_schema = StructType([f for f in schema.fields if f.name not in partitions])
    if not partitions:
        return spark.read.schema(data_schema).parquet(*uris).select(*schema.fieldNames())
    if all(_is_hive_path(p, partitions, v) for p, v in zip(paths, values, strict=True)):
        return (
            spark.read.schema(schema)
            .option("basePath", root)
            .parquet(*uris)
            .select(*schema.fieldNames())
        )
    return _read_by_partition(spark, uris, values, schema, data_schema)


def jvm_root(spark: SparkSession, table_loc: Location, reader: Reader = "auto") -> str | None:
    """The table's root as Spark's Parquet reader takes it, or None when the Arrow reader
    must read it (storage.reader: arrow, or no JVM filesystem for the store)."""
    if reader == "arrow":
        return None
    return jvm_uri(spark, table_loc, require=reader == "spark")


def _text(value: object) -> str | None:
    return partition_value(value)


def _is_hive_path(path: str, partitions: list[str], values: dict[str, str | None]) -> bool:
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    return directory in (partition_dir(partitions, values), _unescaped_dir(partitions, values))


def _unescaped_dir(partitions: list[str], values: dict[str, str | None]) -> str:
    return "/".join(f"{escape_path_name(c)}={values[c]}" for c in partitions)


def _read_by_partition(
    spark: SparkSession,
    uris: list[str],
    values: list[dict[str, str | None]],
    schema: StructType,
    data_schema: StructType,
) -> DataFrame:
    """Tables whose files are not in Hive-style directories (other writers' layouts)."""
    groups: dict[tuple[tuple[str, str | None], ...], list[str]] = defaultdict(list)
    for uri, value in zip(uris, values, strict=True):
        groups[tuple(value.items())].append(uri)
    frames = []
    for key, paths in groups.items():
        frame = spark.read.schema(data_schema).parquet(*paths)
        for column, text in key:
            kind = schema[column].dataType
            frame = frame.withColumn(column, F.lit(text).cast(kind))
        frames.append(frame.select(*schema.fieldNames()))
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result
