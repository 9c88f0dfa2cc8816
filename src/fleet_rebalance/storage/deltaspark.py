"""The delta-spark engine: Spark's own Delta connector, for clusters that ship it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.storage.selection import rows_in


def replace_where_predicate(replace_where: Mapping[str, Sequence[str | None]]) -> str:
    """SQL predicate for Delta's replaceWhere from normalised partition values."""
    clauses = []
    for column, values in replace_where.items():
        name = "`" + column.replace("`", "``") + "`"
        present = [v for v in values if v is not None]
        terms = []
        if present:
            quoted = ", ".join(
                "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'" for v in present
            )
            terms.append(f"{name} IN ({quoted})")
        if len(present) != len(values):
            terms.append(f"{name} IS NULL")
        clauses.append("(" + " OR ".join(terms) + ")")
    return " AND ".join(clauses)


def delta_spark_write_options(
    replace_where: Mapping[str, Sequence[str | None]] | None,
    commit_info: Mapping[str, object],
    schema_evolution: bool,
) -> dict[str, str]:
    options = {"userMetadata": json.dumps(dict(commit_info), sort_keys=True)}
    if replace_where:
        options["replaceWhere"] = replace_where_predicate(replace_where)
    if schema_evolution:
        options["mergeSchema"] = "true"
    return options


def write_delta_spark(
    df: DataFrame, uri: str, mode: str, partition_by: Sequence[str], options: Mapping[str, str]
) -> None:
    writer = df.write.format("delta").mode(mode).options(**options)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(uri)


def read_delta_spark(
    spark: SparkSession,
    uri: str,
    version: int | None,
    where: Mapping[str, Sequence[str | None]] | None = None,
) -> DataFrame:
    """The snapshot's rows; `where` as a filter, which Delta resolves on partition
    columns from its log (only those partitions' files are read)."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", str(version))
    frame = reader.load(uri)
    return frame.where(rows_in(frame.schema, where, uri)) if where else frame
