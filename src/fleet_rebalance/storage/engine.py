"""The storage engine interface, and which engine a run gets.

An engine is the one object that reads, writes, sinks, inspects and maintains Delta
tables for a run: delta-rs (storage/deltars/, embedded, no JVM jars) or delta-spark
(storage/deltaspark/, Spark's own connector). It is chosen once, from the config and
the run's context, when the session is built (engines.open_engine); nothing asks
which engine it is afterwards. `auto` picks delta-spark when its classes are on the
driver's classpath (clusters that ship Delta, or `--delta-packages`), else delta-rs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from fleet_rebalance.config import Reader
from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.storage.errors import EngineUnavailableError
from fleet_rebalance.storage.history import Commit, Maintained

EngineName = Literal["delta-rs", "delta-spark"]
Mode = Literal["append", "overwrite"]
DELTA_RS: EngineName = "delta-rs"
DELTA_SPARK: EngineName = "delta-spark"
DELTA_EXTENSION_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
# {column: values in the log's string form}: the partitions a write replaces or a read keeps.
PartitionValues = Mapping[str, Sequence[str | None]]


@dataclass(frozen=True)
class RunContext:
    """Who is writing and how the store is reached: every commit records the first
    three, every engine reaches the store with `storage_options` (never credentials:
    config refuses them)."""

    job: str = "interactive"
    run_id: str = ""
    run_date: str = ""  # ISO date, "" when the run has none
    engine: EngineName = DELTA_RS
    storage_options: Mapping[str, str] = field(default_factory=dict)
    schema_evolution: bool = False
    reader: Reader = "auto"

    def commit_info(self) -> dict[str, str]:
        return {"job": self.job, "runId": self.run_id, "runDate": self.run_date}

    def location(self, uri: str) -> Location:
        return location(uri, self.storage_options)


@dataclass(frozen=True)
class TableState:
    """A table's latest version as its log says it is."""

    version: int
    schema: StructType
    partition_columns: tuple[str, ...]


@dataclass(frozen=True)
class WritePlan:
    """One write, checked and resolved: what an engine commits."""

    mode: Mode
    partition_by: tuple[str, ...]
    replace_where: dict[str, list[str | None]] | None
    commit_info: dict[str, object]
    overwrite_schema: bool = False
    # The version the write was planned on (partitions found unchanged there were left
    # out): conflicts are judged from there. None: the latest at commit.
    read_version: int | None = None


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet file a task wrote, as the commit records it."""

    path: str  # relative to the table root, unescaped
    size: int
    partition_values: dict[str, str | None]
    modification_time: int
    stats: str


class Sink(Protocol):
    """A write whose files the caller's Spark tasks produce (task_writes.TaskWrite):
    the driver commits what the tasks report, or aborts."""

    def commit(self, files: list[WrittenFile]) -> None: ...

    def abort(self, files: list[WrittenFile]) -> None: ...


class StorageEngine(Protocol):
    """What the Warehouse (and only it, bar tests) asks of an engine."""

    context: RunContext
    # Whether a commit judges what landed since WritePlan.read_version (a lost race)
    # itself; if not, a write planned on an older version is written whole.
    judges_read_version: bool

    def read(
        self, table: Location, version: int | None, where: PartitionValues | None
    ) -> DataFrame: ...

    def write(self, df: DataFrame, table: Location, plan: WritePlan) -> None: ...

    def sink(
        self, table: Location, schema: StructType, plan: WritePlan, per_run_columns: Sequence[str]
    ) -> Sink: ...

    def state(self, table: Location) -> TableState | None: ...

    def partition_values(self, table: Location, column: str) -> list[str | None]: ...

    def history(self, table: Location) -> list[Commit]: ...

    def maintain(self, table: Location, retention: dt.timedelta) -> Maintained: ...

    def name_for_sql(self, name: str, table: Location) -> None: ...


def choose_engine(configured: str, delta_classes_loadable: bool) -> EngineName:
    if configured == DELTA_RS:
        return DELTA_RS
    if configured == DELTA_SPARK:
        if not delta_classes_loadable:
            raise EngineUnavailableError(
                f"storage.engine is delta-spark but {DELTA_EXTENSION_CLASS} is not on the "
                "classpath: run through ./spark-submit.sh (it adds jvm/pom.xml's delta jars, "
                "fetched with mvn), use a cluster that ships Delta, or set storage.engine: "
                "delta-rs"
            )
        return DELTA_SPARK
    if configured == "auto":
        return DELTA_SPARK if delta_classes_loadable else DELTA_RS
    raise ValueError(
        f"unknown storage engine {configured!r}: expected auto, delta-rs or delta-spark"
    )


def engine_spark_conf(
    engine: EngineName, schema_evolution: bool, storage_options: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Spark's own properties the chosen engine needs at session creation (Delta's
    extension and catalog, S3A's endpoint); the run's settings go in its RunContext."""
    conf = hadoop_s3a_conf(storage_options or {})
    if engine == DELTA_SPARK:
        conf["spark.sql.extensions"] = DELTA_EXTENSION_CLASS
        conf["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG_CLASS
        conf["spark.databricks.delta.schema.autoMerge.enabled"] = str(schema_evolution).lower()
    return conf


def hadoop_s3a_conf(options: Mapping[str, str]) -> dict[str, str]:
    """storage.options as hadoop-aws's S3A settings, for a JVM that reads the tables
    itself (delta-spark, or Spark's Parquet reader under delta-rs): both sides must
    reach the same endpoint. Credentials stay with S3A's own provider chain."""
    conf = {}
    endpoint = options.get("AWS_ENDPOINT_URL")
    if endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = endpoint
        # Custom endpoints (MinIO, Ceph, moto) rarely serve virtual-hosted buckets.
        conf["spark.hadoop.fs.s3a.path.style.access"] = "true"
        if endpoint.startswith("http://"):
            conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = "false"
    if options.get("AWS_REGION"):
        conf["spark.hadoop.fs.s3a.endpoint.region"] = options["AWS_REGION"]
    return conf
