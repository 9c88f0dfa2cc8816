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

    def read(self, name: str, *, version: int | None = None) -> DataFrame:
        return read_table(self.spark, self.uri(name), version=version)

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
    ) -> None:
        write_table(
            df,
            self.uri(name),
            mode=mode,
            partition_by=partition_by,
            replace_where=replace_where,
            commit_info=commit_info,
            overwrite_schema=overwrite_schema,
        )

    def replace_date(self, df: DataFrame, name: str, column: str, day: dt.date, rows: int) -> None:
        """One commit replacing `day`'s partition with `rows` rows, in files of about
        ROWS_PER_FILE rows."""
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
    ) -> TaskWrite:
        """A write whose files the caller's Spark tasks produce (task_writes.py); the
        driver then commits what the tasks report, or aborts."""
        return task_write(
            self.spark,
            self.uri(name),
            schema,
            mode=mode,
            partition_by=partition_by,
            replace_where=replace_where,
        )
