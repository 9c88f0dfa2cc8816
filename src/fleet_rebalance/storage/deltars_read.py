"""The delta-rs engine's read side: the snapshot's files through Spark's Parquet reader.

delta-rs resolves the log (checkpoints, removes, time travel); Spark reads the Parquet
files itself, so reads are as parallel as any Spark scan. Partition columns come back
from the Hive-style directories with the table's own types.
"""

from __future__ import annotations

import json
from collections import defaultdict
from urllib.parse import unquote

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from fleet_rebalance.storage.deltars_commit import open_table
from fleet_rebalance.storage.errors import StorageError
from fleet_rebalance.storage.partitions import escape_path_name, partition_dir
from fleet_rebalance.storage.table_checks import check_readable


def read_delta_rs(spark: SparkSession, uri: str, version: int | None) -> DataFrame:
    try:
        table = open_table(uri, version)
    except Exception as exc:
        raise StorageError(f"{uri}: cannot load version {version}: {exc}") from exc
    if table is None:
        raise StorageError(f"{uri}: not a Delta table (no _delta_log)")
    metadata = table.metadata()
    check_readable(uri, table.protocol(), metadata.configuration)
    schema = StructType.fromJson(json.loads(table.schema().to_json()))
    partitions = list(metadata.partition_columns)
    data_schema = StructType([f for f in schema.fields if f.name not in partitions])
    actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    root = table.table_uri.rstrip("/")
    if not actions:
        return spark.createDataFrame([], schema)
    # The log holds URI-encoded paths; Spark wants the directory names as they are on disk.
    paths = [unquote(a["path"]) for a in actions]
    uris = [f"{root}/{p}" for p in paths]
    if not partitions:
        return spark.read.schema(data_schema).parquet(*uris).select(*schema.fieldNames())
    values = [{c: _text(a.get(f"partition.{c}")) for c in partitions} for a in actions]
    if all(_is_hive_path(p, partitions, v) for p, v in zip(paths, values, strict=True)):
        return (
            spark.read.schema(schema)
            .option("basePath", root)
            .parquet(*uris)
            .select(*schema.fieldNames())
        )
    return _read_by_partition(spark, uris, values, schema, data_schema)


def _text(value: object) -> str | None:
    from fleet_rebalance.storage.partitions import partition_value

    return partition_value(value)


def _is_hive_path(path: str, partitions: list[str], values: dict[str, str | None]) -> bool:
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    return directory in (partition_dir(partitions, values), _unescaped_dir(partitions, values))


def _unescaped_dir(partitions: list[str], values: dict[str, str | None]) -> str:
    return "/".join(f"{escape_path_name(c)}={values[c]}" for c in partitions)


def _read_by_partition(
    spark: SparkSession,
    uris: list[str],
    values: list[dict],
    schema: StructType,
    data_schema: StructType,
) -> DataFrame:
    """Tables whose files are not in Hive-style directories (other writers' layouts)."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    for uri, value in zip(uris, values, strict=True):
        groups[tuple(value.items())].append(uri)
    frames = []
    for key, paths in groups.items():
        frame = spark.read.schema(data_schema).parquet(*paths)
        for column, value in key:
            kind = schema[column].dataType
            frame = frame.withColumn(column, F.lit(value).cast(kind))
        frames.append(frame.select(*schema.fieldNames()))
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result
