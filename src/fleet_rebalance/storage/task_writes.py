"""Writes whose Parquet files a job's own Spark tasks produce: executor-side sinks.

A Python stage that already holds its rows as Arrow writes them where they belong,
instead of handing them to the JVM and taking them back in a writer. Each task reports
the files it wrote; the driver commits every task's files in one transaction.
- delta-rs: the files go into the table itself, named, committed and cleaned up exactly
  as the data source writer's.
- delta-spark: the files are staged under the table's `_fleet_staging/<write id>/`
  and Spark's Delta writer commits their rows (its own transaction, replaceWhere and
  all), then the staging files are deleted. Same contract, one engine-specific step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from fleet_rebalance.config import Reader
from fleet_rebalance.storage.context import session_engine
from fleet_rebalance.storage.deltars.commit import (
    commit_files,
    delete_uncommitted,
    delete_unreported,
)
from fleet_rebalance.storage.deltars.files import PartitionedFiles, WriteRequest
from fleet_rebalance.storage.deltars.read import jvm_root, scan_files
from fleet_rebalance.storage.engine import DELTA_RS, DELTA_SPARK, EngineName, WritePlan, WrittenFile
from fleet_rebalance.storage.table_checks import outside_replace_where
from fleet_rebalance.storage.unchanged import compare
from fleet_rebalance.storage.writes import plan_write, write_frame

__all__ = ["TaskFiles", "TaskWrite", "WrittenFile", "task_write"]

STAGING_DIR = "_fleet_staging"  # `_` prefix: ignored by Delta readers and Spark listing


@dataclass(frozen=True)
class TaskWrite:
    """One table's write, shipped to the tasks that write its files."""

    request: WriteRequest
    schema_json: str
    engine: EngineName = DELTA_RS
    # Columns that change every run, left out when judging a partition unchanged.
    per_run_columns: tuple[str, ...] = ()
    # How the driver reads the tasks' files back (storage.reader).
    reader: Reader = "auto"

    @property
    def staged(self) -> bool:
        return self.engine == DELTA_SPARK

    def files(self) -> TaskFiles:
        """Executor side: this task's files of the write."""
        return TaskFiles(self)

    def file_request(self) -> WriteRequest:
        """Where the tasks' files go: the table, or the write's staging directory."""
        if not self.staged:
            return self.request
        staging = self.request.location.child(STAGING_DIR, self.request.write_id)
        return replace(self.request, table_uri=staging.uri, partition_by=())

    def commit(self, files: list[WrittenFile]) -> None:
        """Every task's files in one transaction, but for partitions whose rows they
        repeat (unchanged.py: those files are deleted, and with nothing left nothing is
        committed). A re-run task (a lost executor, a recomputed partition) may have
        written files nobody reported: they go too."""
        if self.staged:
            self._commit_staged(files)
            return
        request, kept = self._unchanged_left_out(files)
        if len(kept) != len(files) or request is None:
            delete_unreported(self.request, kept)
        if request is not None:
            commit_files(request, self.schema_json, kept)
            delete_unreported(request, kept)

    def _unchanged_left_out(
        self, files: list[WrittenFile]
    ) -> tuple[WriteRequest | None, list[WrittenFile]]:
        """The request and files still to commit once partitions whose rows are already
        in the table are left out; request None: nothing to commit. Comparing reads
        rows, which takes the driver's Spark session: a commit without one (the
        commit alone, as unit tests drive it) is made whole."""
        request = self.request
        spark = SparkSession.getActiveSession()
        if spark is None or not request.replace_where:
            return request, files
        schema = StructType.fromJson(json.loads(self.schema_json))
        rows = scan_files(
            spark,
            request.location,
            schema,
            list(request.partition_by),
            [f.path for f in files],
            [f.partition_values for f in files],
            [f.size for f in files],
            self.reader,
        )
        comparison = compare(
            rows,
            request.table_uri,
            request.partition_by,
            request.replace_where,
            self.per_run_columns,
        )
        if comparison is None or not comparison.unchanged:
            return request, files
        comparison.log_unchanged()
        remaining = comparison.remaining()
        if remaining is None:
            return None, []
        kept = [f for f in files if not outside_replace_where(remaining, f.partition_values)]
        return replace(request, replace_where=remaining, read_version=comparison.version), kept

    def abort(self, files: list[WrittenFile]) -> None:
        """Delete every file of this write, reported or not, that no commit references."""
        if self.staged:
            self._drop_staging()
            return
        delete_uncommitted(self.request, files)

    def _commit_staged(self, files: list[WrittenFile]) -> None:
        spark = SparkSession.getActiveSession()
        assert spark is not None, "a staged write commits on the driver"
        schema = StructType.fromJson(json.loads(self.schema_json))
        request = self.request
        try:
            staging = self.file_request().location
            root = jvm_root(spark, staging, "spark")
            frame = (
                spark.read.schema(schema).parquet(*[f"{root}/{f.path}" for f in files])
                if files
                else spark.createDataFrame([], schema)
            )
            plan = WritePlan(
                "overwrite" if request.mode == "overwrite" else "append",
                request.partition_by,
                request.replace_where,
                request.commit_info,
            )
            write_frame(session_engine(spark), frame, request.location, plan, self.per_run_columns)
        finally:
            self._drop_staging()

    def _drop_staging(self) -> None:
        fs, path = self.file_request().location.filesystem()
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            fs.delete_dir(path)


class TaskFiles:
    """The files one task writes: rows in the table's own Arrow schema, partition
    columns included (they are split off into the directory names)."""

    def __init__(self, write: TaskWrite) -> None:
        self.schema = to_arrow_schema(StructType.fromJson(json.loads(write.schema_json)))
        self.files = PartitionedFiles(write.file_request())

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
    per_run_columns: Sequence[str] = (),
) -> TaskWrite:
    """A write for the caller's tasks through the session's engine, checked against the
    table before any task runs (as a write checks its own)."""
    engine = session_engine(spark)
    table = engine.context.location(path)
    plan = plan_write(
        engine,
        table,
        schema.fieldNames(),
        mode=mode,
        partition_by=partition_by,
        replace_where=replace_where,
        commit_info=commit_info,
    )
    sink = engine.sink(table, schema, plan, per_run_columns)
    assert isinstance(sink, TaskWrite), "both engines sink through task writes"
    return sink
