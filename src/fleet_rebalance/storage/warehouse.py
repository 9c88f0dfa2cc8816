"""The Warehouse: the one boundary between pipeline code and where tables live.

Built per run with the run's engine (the session's, bound by build_session, unless
one is handed in), it owns the tables' URIs on whatever store the warehouse is (a local
path, file://, s3://, gs://, abfs://), whether a table exists, and reads, writes,
sinks, history and maintenance through that engine. Pipeline code names tables, never
paths, `_delta_log` or an engine.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from fleet_rebalance.filesystems import Location, exists
from fleet_rebalance.storage.column_comments import commented_frame, commented_schema
from fleet_rebalance.storage.context import session_engine
from fleet_rebalance.storage.engine import RunContext, StorageEngine
from fleet_rebalance.storage.history import DELTA_LOG, Commit, Maintained, delta_tables
from fleet_rebalance.storage.partitions import partition_strings
from fleet_rebalance.storage.task_writes import TaskWrite
from fleet_rebalance.storage.uncommitted import (
    Removed,
    has_files_without_commit,
    remove_uncommitted,
)
from fleet_rebalance.storage.writes import plan_write, write_frame

# replace_date's files hold about this many rows: a write task per shuffle partition
# would leave many tiny files (and pay a Python worker each) for small outputs.
ROWS_PER_FILE = 1_000_000


class Warehouse:
    def __init__(self, spark: SparkSession, root: str, engine: StorageEngine | None = None) -> None:
        self.spark = spark
        self.engine = engine or session_engine(spark)
        self.root: Location = self.engine.context.location(root)

    @property
    def context(self) -> RunContext:
        """The run's context: job, run id, run date, storage options."""
        return self.engine.context

    def uri(self, name: str) -> str:
        return self.root.child(name).uri

    def exists(self, name: str) -> bool:
        fs, path = self.root.child(name, DELTA_LOG).filesystem()
        return exists(fs, path)

    def tables(self) -> list[str]:
        """The Delta tables directly under the warehouse, sorted."""
        return delta_tables(self.root)

    def read(
        self, name: str, *, version: int | None = None, where: Mapping[str, Any] | None = None
    ) -> DataFrame:
        """The table's rows; `where` ({"capture_date": a date or dates}) reads only
        those partitions, so a step's reads cost its dates, not the table's history."""
        values = partition_strings(where) if where is not None else None
        return self.engine.read(self.root.child(name), version, values)

    def name_for_sql(self, name: str) -> None:
        """Make `name` a name Spark SQL resolves to the table: a temporary view of its
        read under delta-rs, a Delta table of the session's catalog under delta-spark
        (so Delta's SQL takes it too: `VERSION AS OF`, `DESCRIBE HISTORY`)."""
        self.engine.name_for_sql(name, self.root.child(name))

    def partition_columns(self, name: str) -> tuple[str, ...] | None:
        """The table's partition columns, from its log; None when there is no table."""
        state = self.engine.state(self.root.child(name))
        return None if state is None else state.partition_columns

    def partition_values(self, name: str, column: str) -> list[str | None]:
        """The values (log strings, sorted) partition column `column` holds, from the
        log: what dates a table has, without reading them."""
        return self.engine.partition_values(self.root.child(name), column)

    def history(self, name: str) -> list[Commit]:
        """The versions the table's log still holds, newest first."""
        return self.engine.history(self.root.child(name))

    def without_commit(self, names: Sequence[str]) -> list[str]:
        """Those of `names` whose directory holds files but no commit (uncommitted.py)."""
        return [n for n in names if has_files_without_commit(self.root.child(n))]

    def remove_uncommitted(self, name: str, retention: dt.timedelta) -> Removed:
        """A table without a commit: its files older than `retention` removed."""
        return remove_uncommitted(self.root.child(name), retention)

    def maintain(self, name: str, retention: dt.timedelta) -> Maintained:
        """Compact, vacuum past `retention` and checkpoint one table; its commits carry
        the run's context with job=maintain. The caller has checked `retention`
        against the longest run; a table whose own delta.deletedFileRetentionDuration
        is longer keeps its files that long."""
        return self.engine.maintain(self.root.child(name), retention)

    def write(
        self,
        df: DataFrame,
        name: str,
        *,
        mode: str = "append",
        partition_by: Sequence[str] = (),
        replace_where: Mapping[str, Any] | None = None,
        commit_info: Mapping[str, Any] | None = None,
        overwrite_schema: bool = False,
        per_run_columns: Sequence[str] = (),
    ) -> None:
        """One Delta commit, or none when it would change nothing (writes.py)."""
        df = commented_frame(df, name)
        table = self.root.child(name)
        plan = plan_write(
            self.engine,
            table,
            df.columns,
            mode=mode,
            partition_by=partition_by,
            replace_where=replace_where,
            commit_info=commit_info,
            overwrite_schema=overwrite_schema,
        )
        write_frame(self.engine, df, table, plan, per_run_columns)

    def replace_date(self, df: DataFrame, name: str, column: str, day: dt.date, rows: int) -> None:
        """One commit replacing `day`'s partition with `rows` rows, in files of about
        ROWS_PER_FILE rows; none when the partition holds these rows already."""
        self.write(
            df.coalesce(max(1, math.ceil(rows / ROWS_PER_FILE))),
            name,
            mode="overwrite",
            partition_by=(column,),
            replace_where={column: day},
        )

    def sink(
        self,
        name: str,
        schema: StructType,
        *,
        mode: str,
        partition_by: Sequence[str] = (),
        replace_where: Mapping[str, Any] | None = None,
        per_run_columns: Sequence[str] = (),
    ) -> TaskWrite:
        """A write whose files the caller's Spark tasks produce (task_writes.py); the
        driver then commits what the tasks report, or aborts."""
        schema = commented_schema(schema, name)
        table = self.root.child(name)
        plan = plan_write(
            self.engine,
            table,
            schema.fieldNames(),
            mode=mode,
            partition_by=partition_by,
            replace_where=replace_where,
        )
        sink = self.engine.sink(table, schema, plan, per_run_columns)
        assert isinstance(sink, TaskWrite), "both engines sink through task writes"
        return sink
