"""The delta-rs engine as the storage interface (engine.StorageEngine) takes it."""

from __future__ import annotations

import datetime as dt
import json
import re
import weakref
from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage import errors
from fleet_rebalance.storage.deltars.commit import open_table, validate_against_table
from fleet_rebalance.storage.deltars.files import WriteRequest
from fleet_rebalance.storage.deltars.optimize import delta_rs_commits, maintain_delta_rs
from fleet_rebalance.storage.deltars.read import read_delta_rs
from fleet_rebalance.storage.deltars.source import SOURCE_NAME, DeltaRsDataSource
from fleet_rebalance.storage.engine import (
    DELTA_RS,
    PartitionValues,
    RunContext,
    TableState,
    WritePlan,
)
from fleet_rebalance.storage.history import MAINTAIN_JOB, Commit, Maintained
from fleet_rebalance.storage.partitions import partition_value
from fleet_rebalance.storage.table_checks import check_partitioned
from fleet_rebalance.storage.task_writes import TaskWrite

# Sessions the write data source is registered with (registration lives in the session).
_REGISTERED: weakref.WeakSet[SparkSession] = weakref.WeakSet()


class DeltaRsEngine:
    judges_read_version = True

    def __init__(self, spark: SparkSession, context: RunContext) -> None:
        self.spark, self.context = spark, context

    def read(
        self, table: Location, version: int | None, where: PartitionValues | None
    ) -> DataFrame:
        return read_delta_rs(self.spark, table, version, where, self.context.reader)

    def write(self, df: DataFrame, table: Location, plan: WritePlan) -> None:
        request = self._request(table, plan, df.schema.json())
        spark = df.sparkSession
        if spark not in _REGISTERED:
            spark.dataSource.register(DeltaRsDataSource)
            _REGISTERED.add(spark)
        try:
            (
                df.write.format(SOURCE_NAME)
                .mode("overwrite" if request.mode == "overwrite" else "append")
                .options(**request.to_options())
                .save()
            )
        except Exception as exc:
            raise _storage_error_from(exc) or exc from exc

    def sink(
        self, table: Location, schema: StructType, plan: WritePlan, per_run_columns: Sequence[str]
    ) -> TaskWrite:
        request = self._request(table, plan, schema.json())
        return TaskWrite(
            request, schema.json(), DELTA_RS, tuple(per_run_columns), self.context.reader
        )

    def _request(self, table: Location, plan: WritePlan, schema_json: str) -> WriteRequest:
        """The write as the executors and the commit take it, checked against the table
        as it is now."""
        request = WriteRequest(
            table.uri,
            plan.mode,
            plan.partition_by,
            plan.replace_where,
            dict(plan.commit_info),
            self.context.schema_evolution,
            dict(table.options),
            overwrite_schema=plan.overwrite_schema,
            read_version=plan.read_version,
        )
        validate_against_table(request, schema_json)
        return request

    def state(self, table: Location) -> TableState | None:
        opened = open_table(table.uri, storage_options=table.options)
        if opened is None:
            return None
        return TableState(
            opened.version(),
            StructType.fromJson(json.loads(opened.schema().to_json())),
            tuple(opened.metadata().partition_columns),
        )

    def partition_values(self, table: Location, column: str) -> list[str | None]:
        opened = open_table(table.uri, storage_options=table.options)
        if opened is None:
            return []
        check_partitioned(table.uri, opened.metadata().partition_columns, column)
        actions = pa.table(opened.get_add_actions(flatten=True))
        found = (
            {partition_value(v) for v in actions[f"partition.{column}"].to_pylist()}
            if actions.num_rows
            else set()
        )
        return sorted(found, key=lambda v: (v is None, v or ""))

    def history(self, table: Location) -> list[Commit]:
        return delta_rs_commits(table)

    def maintain(self, table: Location, retention: dt.timedelta) -> Maintained:
        info = {**self.context.commit_info(), "job": MAINTAIN_JOB}
        return maintain_delta_rs(table, retention, info)

    def name_for_sql(self, name: str, table: Location) -> None:
        """A temporary view of the table's read."""
        self.read(table, None, None).createOrReplaceTempView(name)


_ERROR_LINE = re.compile(
    r"(?:fleet_rebalance\.storage\.errors\.)?(" + "|".join(errors.__all__) + r"): (.+)"
)


def _storage_error_from(exc: Exception) -> errors.StorageError | None:
    """Our exception raised inside Spark's Python worker, re-raised as itself. Spark
    hands a worker's exception to the driver as text only: this is the one place it is
    read back."""
    matches = _ERROR_LINE.findall(str(exc))
    if not matches:
        return None
    name, message = matches[-1]
    error: type[errors.StorageError] = getattr(errors, name)
    return error(message.strip())
