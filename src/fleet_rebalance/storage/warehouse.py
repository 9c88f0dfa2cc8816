"""The Warehouse: the one boundary between pipeline code and where tables live.

Built per run from the session's run context, it owns the tables' URIs on whatever store
the warehouse is (a local path, file://, s3://, gs://, abfs://), whether a table exists,
and reads, writes, history and maintenance through delta-spark (storage/delta.py).
Pipeline code names tables, never paths or `_delta_log`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from fleet_rebalance.filesystems import Location, exists
from fleet_rebalance.storage import delta, maintenance
from fleet_rebalance.storage.column_comments import commented_frame
from fleet_rebalance.storage.context import RunContext, run_context
from fleet_rebalance.storage.jvm_paths import jvm_uri
from fleet_rebalance.storage.partitions import partition_strings
from fleet_rebalance.storage.uncommitted import (
    Removed,
    has_files_without_commit,
    remove_uncommitted,
)
from fleet_rebalance.storage.versions import (
    DELTA_LOG,
    MAINTAIN_JOB,
    Commit,
    Maintained,
    delta_tables,
)

# replace_dates' files hold at most about ROWS_PER_FILE rows, and are split over the
# cores down to ROWS_PER_TASK: a write task per shuffle partition would leave many tiny
# files for small outputs, one task per million rows would leave cores idle.
ROWS_PER_FILE = 1_000_000
ROWS_PER_TASK = 100_000


class Warehouse:
    def __init__(self, spark: SparkSession, root: str) -> None:
        self.spark = spark
        self.context: RunContext = run_context(spark)
        self.root: Location = self.context.location(root)

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
        return delta.read(self.spark, self.root.child(name), version, values)

    def name_for_sql(self, name: str) -> None:
        """Make `name` a Delta table of the session's catalog, so Spark SQL resolves it
        and Delta's SQL takes it too (`VERSION AS OF`, `DESCRIBE HISTORY`). An external
        table of that name (another warehouse's) is dropped first: only its catalog
        entry goes, never its files."""
        quoted = "`" + name.replace("`", "``") + "`"
        where = jvm_uri(self.spark, self.root.child(name)).replace("'", "\\'")
        if self.spark.catalog.tableExists(name):  # a view, or this name for another warehouse
            kind = self.spark.catalog.getTable(name).tableType
            self.spark.sql(f"DROP {'TABLE' if kind == 'EXTERNAL' else 'VIEW'} {quoted}")
        self.spark.sql(f"CREATE TABLE {quoted} USING delta LOCATION '{where}'")

    def partition_columns(self, name: str) -> tuple[str, ...] | None:
        """The table's partition columns, from its log; None when there is no table."""
        state = delta.table_state(self.spark, self.root.child(name))
        return None if state is None else state.partition_columns

    def partition_values(self, name: str, column: str) -> list[str | None]:
        """The values (log strings, sorted) partition column `column` holds: what
        dates a table has."""
        return delta.partition_values(self.spark, self.root.child(name), column)

    def history(self, name: str) -> list[Commit]:
        """The versions the table's log still holds, newest first."""
        return delta.history(self.spark, self.root.child(name))

    def without_commit(self, names: Sequence[str]) -> list[str]:
        """Those of `names` whose directory holds files but no commit (uncommitted.py)."""
        return [n for n in names if has_files_without_commit(self.root.child(n))]

    def remove_uncommitted(self, name: str, retention: dt.timedelta) -> Removed:
        """A table without a commit: its files older than `retention` removed."""
        return remove_uncommitted(self.root.child(name), retention)

    def maintain(self, name: str, retention: dt.timedelta) -> Maintained:
        """OPTIMIZE and VACUUM past `retention` one table; its commits carry the run's
        context with job=maintain. The caller has checked `retention` against the
        longest run."""
        info = {**self.context.commit_info(), "job": MAINTAIN_JOB}
        return maintenance.maintain(self.spark, self.root.child(name), retention, info)

    def write(self, df: DataFrame, name: str, **options: Any) -> None:
        """One Delta commit to table `name` (storage.delta.write's options), with the
        table's column comments on df's schema."""
        delta.write(commented_frame(df, name), self.root.child(name), self.context, **options)

    def write_tasks(self, rows: int) -> int:
        """How many write tasks (files) replace_dates gives `rows` rows."""
        cores = self.spark.sparkContext.defaultParallelism
        return max(math.ceil(rows / ROWS_PER_FILE), min(cores, rows // ROWS_PER_TASK), 1)

    def replace_dates(
        self, df: DataFrame, name: str, column: str, days: Sequence[dt.date], rows: int
    ) -> None:
        """One commit replacing the partitions of `days` with `rows` rows, in write
        tasks (files) of ROWS_PER_TASK to ROWS_PER_FILE rows, never more than df's
        partitions. Coalesced, not shuffled: df is a persisted frame (a stage's table,
        filtered from its cache), so a coalesce's tasks only scan that cache, where a
        repartition would write and read every row once more."""
        self.write(
            df.coalesce(self.write_tasks(rows)),
            name,
            mode="overwrite",
            partition_by=(column,),
            replace_where={column: list(days)},
        )


class Reads:
    """One job's reads: reads(name, partition column, *days) reads only those partitions,
    so a night's work is its dates'. Delta lists a table's files again for every query
    that scans it (a Spark job each), so a table's dates asked for a second time are
    cached, and a table the job wrote is read as the cached frame it wrote (wrote()).
    release() drops the cached frames."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse
        self.frames: dict[tuple[str, str, tuple[dt.date, ...]], DataFrame] = {}

    def __call__(self, name: str, column: str, *days: dt.date) -> DataFrame:
        key = (name, column, days)
        frame = self.frames.get(key)
        if frame is None:
            frame = self.frames[key] = self.warehouse.read(name, where={column: list(days)})
        elif not frame.is_cached:
            frame.persist()
        return frame

    def wrote(self, name: str, column: str, day: dt.date, frame: DataFrame) -> None:
        """The run wrote `frame` (cached) as `name`'s rows of `day`."""
        for key in [key for key in self.frames if key[0] == name]:
            self.frames.pop(key).unpersist()
        self.frames[(name, column, (day,))] = frame

    def release(self) -> None:
        for frame in self.frames.values():
            frame.unpersist()
        self.frames.clear()
