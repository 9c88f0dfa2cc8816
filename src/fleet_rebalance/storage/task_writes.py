"""Writes whose Parquet files a job's own Spark tasks produce (delta-rs engine only).

A Python stage that already holds its rows as Arrow can write them where they belong,
instead of handing them to the JVM and taking them back in the data source writer.
The files are named, written, committed and cleaned up exactly as the data source
writer's: one Delta transaction for every task's files, driver side.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from fleet_rebalance.storage.deltars_source import (
    PartitionedFiles,
    WriteRequest,
    WrittenFile,
    local_path,
)
from fleet_rebalance.storage.engine import DELTA_RS, ENGINE_KEY

__all__ = ["TaskFiles", "TaskWrite", "WrittenFile", "task_write"]


@dataclass(frozen=True)
class TaskWrite:
    """One table's write, shipped to the tasks that write its files."""

    request: WriteRequest
    schema_json: str

    def files(self) -> TaskFiles:
        """Executor side: this task's files of the write."""
        return TaskFiles(self)

    def commit(self, files: list[WrittenFile]) -> None:
        """Every task's files in one transaction. A re-run task (a lost executor, a
        recomputed partition) may have written files nobody reported: they go too."""
        from fleet_rebalance.storage.deltars_commit import commit_files, delete_unreported

        commit_files(self.request, self.schema_json, files)
        delete_unreported(self.request, files)

    def abort(self, files: list[WrittenFile]) -> None:
        """Delete every file of this write, reported or not, that no commit references."""
        from fleet_rebalance.storage.deltars_commit import delete_uncommitted

        delete_uncommitted(self.request, files)


class TaskFiles:
    """The files one task writes: rows in the table's own Arrow schema, partition
    columns included (they are split off into the directory names)."""

    def __init__(self, write: TaskWrite) -> None:
        self.schema = to_arrow_schema(StructType.fromJson(json.loads(write.schema_json)))
        self.files = PartitionedFiles(write.request)

    def write(self, batch: pa.RecordBatch) -> None:
        self.files.write(batch.select(self.schema.names).cast(self.schema))

    def close(self) -> list[WrittenFile]:
        return self.files.close()

    def discard(self) -> None:
        self.files.discard()


def task_write(
    spark: SparkSession,
    path: str,
    schema: StructType,
    *,
    mode: str,
    partition_by: Sequence[str] = (),
    replace_where: Mapping[str, Any] | None = None,
    commit_info: Mapping[str, Any] | None = None,
) -> TaskWrite | None:
    """A write for the caller's tasks, checked against the table as write_table checks
    its own; None when the session's engine is delta-spark, whose writes must go
    through Spark (write_table)."""
    from fleet_rebalance.storage import _absolute, check_write, delta_rs_request

    check_write(path, mode, replace_where, partition_by, schema.fieldNames())
    if spark.conf.get(ENGINE_KEY, DELTA_RS) != DELTA_RS:
        return None
    local_path(_absolute(path))  # object stores are refused before any task runs
    request = delta_rs_request(
        spark, path, mode, partition_by, replace_where, commit_info, schema.json()
    )
    return TaskWrite(request, schema.json())
