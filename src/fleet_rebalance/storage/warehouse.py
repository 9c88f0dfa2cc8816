"""The Warehouse: the one boundary between pipeline code and where tables live.

Built once per run from the config, it owns the tables' URIs on whatever store the
warehouse is (a local path, file://, s3://, gs://, abfs://), whether a table exists,
and reads and writes through the session's engine. Pipeline code names tables, never
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
from fleet_rebalance.storage import read_table, table_location, write_table
from fleet_rebalance.storage.column_comments import commented_frame, commented_schema
from fleet_rebalance.storage.engine import DELTA_RS, DELTA_SPARK, ENGINE_KEY
from fleet_rebalance.storage.jvm_paths import jvm_uri
from fleet_rebalance.storage.snapshot import partition_values, table_state
from fleet_rebalance.storage.task_writes import TaskWrite, task_write

DELTA_LOG = "_delta_log"
# replace_date's files hold about this many rows: a write task per shuffle partition
# would leave many tiny files (and pay a Python worker each) for small outputs.
ROWS_PER_FILE = 1_000_000


class Warehouse:
    def __init__(self, spark: SparkSession, root: str) -> None:
        self.spark = spark
        self.root: Location = table_location(spark, root)

    def uri(self, name: str) -> str:
        return self.root.child(name).uri

    def exists(self, name: str) -> bool:
        fs, path = self.root.child(name, DELTA_LOG).filesystem()
        return exists(fs, path)

    def read(
        self, name: str, *, version: int | None = None, where: Mapping[str, Any] | None = None
    ) -> DataFrame:
        """The table's rows; `where` ({"capture_date": a date or dates}) reads only
        those partitions, so a step's reads cost its dates, not the table's history."""
        return read_table(self.spark, self.uri(name), version=version, where=where)

    def name_for_sql(self, name: str) -> None:
        """Make `name` a name Spark SQL resolves to the table: a temporary view of its
        read under delta-rs, a Delta table of the session's catalog under delta-spark
        (so Delta's SQL takes it too: `VERSION AS OF`, `DESCRIBE HISTORY`)."""
        if self.spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
            quoted = "`" + name.replace("`", "``") + "`"
            where = jvm_uri(self.spark, self.root.child(name)).replace("'", "\\'")
            self.spark.sql(f"DROP VIEW IF EXISTS {quoted}")
            self.spark.sql(f"CREATE TABLE IF NOT EXISTS {quoted} USING delta LOCATION '{where}'")
            return
        self.read(name).createOrReplaceTempView(name)

    def partition_columns(self, name: str) -> tuple[str, ...] | None:
        """The table's partition columns, from its log; None when there is no table."""
        state = table_state(self.spark, self.uri(name))
        return None if state is None else state.partition_columns

    def partition_values(self, name: str, column: str) -> list[str | None]:
        """The values (log strings, sorted) partition column `column` holds, from the
        log: what dates a table has, without reading them."""
        return partition_values(self.spark, self.uri(name), column)

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
        write_table(
            commented_frame(df, name),
            self.uri(name),
            mode=mode,
            partition_by=partition_by,
            replace_where=replace_where,
            commit_info=commit_info,
            overwrite_schema=overwrite_schema,
            per_run_columns=per_run_columns,
        )

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
        return task_write(
            self.spark,
            self.uri(name),
            commented_schema(schema, name),
            mode=mode,
            partition_by=partition_by,
            replace_where=replace_where,
            per_run_columns=per_run_columns,
        )
