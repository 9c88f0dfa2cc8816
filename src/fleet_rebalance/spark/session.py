"""The one place a SparkSession is configured: entry points call build_session."""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import uuid
from collections.abc import Mapping

from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import CREDENTIAL_ENV, location
from fleet_rebalance.spark.packages import (
    LOCAL_DRIVER_GC,
    PACKAGES_KEY,
    run_packages,
    unavailable_line,
)
from fleet_rebalance.storage.context import RunContext, bind_context
from fleet_rebalance.storage.errors import DeltaUnavailableError

log = logging.getLogger(__name__)
# pyspark logs each SQL or DataFrame error it converts as a JSON line on stderr; the
# error itself reaches the job's failure report (one line), so these would repeat it.
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
DELTA_EXTENSION_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

BASE_SPARK_CONF = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # Spark 4.1's partitioning-aware union makes adaptive execution coalesce all of a
    # union's inputs as one group: the replay's lag rows (a semi-join and an aggregate)
    # ran as a single task (SPARK-57996). No plan here relies on a union's partitioning.
    "spark.sql.unionOutputPartitioning": "false",
    # Replay and metrics persist each result before counting and writing it. By default
    # adaptive execution may not coalesce a cached plan's shuffle, so every table ran
    # all spark.sql.shuffle.partitions tasks, each paying a Python worker round trip,
    # however small the day (docs/benchmarks.md, Spark settings).
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
    # Adaptive execution coalesces shuffle partitions to 64 MiB by default; the replay's
    # and the metrics' Python stages spend seconds per MiB, so a large replay ran a few
    # long tasks, the last one alone; 16 MiB evens the waves out.
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16m",
    # Workers import pip's pyspark rather than SPARK_HOME's zipped copy (worker_daemon).
    "spark.python.daemon.module": "fleet_rebalance.spark.worker_daemon",
    # PySpark's DataFrame debugging walks the Python stack and makes four more Py4J
    # calls for every Column it builds, to name the Python line in a failed query's
    # context; our failures are one line of our own, and it costs the driver CPU.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Janino compiles each stage's generated Java on the driver, and Spark keeps the last
    # 100 classes. One date's plans make about ten times that many, so every later date
    # in the same session (a backfill, a test suite) compiled them all again.
    "spark.sql.codegen.cache.maxEntries": "2000",
    # When the driver JVM's default time zone is not UTC (a laptop's, often), Delta
    # rebuilds a small table's whole state after every commit to check the file list the
    # commit's checksum carries against it, a Spark job per commit. Our partition columns
    # are dates, not timestamps, so a zone cannot change them; Delta still makes that
    # check when it writes a checkpoint.
    "spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled": "false",
    # A partitioned write sorts its rows by the partition columns unless it may keep a
    # file open per partition value. Our writes hold one date, a few in a backfill, so
    # the sort only copied every row once more, into pages that filled the heap. Past 8
    # dates in a task, Spark sorts the rest.
    "spark.sql.maxConcurrentOutputFileWriters": "8",
}
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"

SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"
DELTA_SNAPSHOT_PARTITIONS = 50  # Delta's own default


def session_conf(config: Config, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every Spark property build_session sets; the YAML's `spark:` entries win over ours."""
    return {
        **BASE_SPARK_CONF,
        **delta_conf(config.storage.schema_evolution),
        **hadoop_s3a_conf(config.storage.options),
        **executor_credentials(config, os.environ if env is None else env),
        **config.spark,
    }


def delta_conf(schema_evolution: bool) -> dict[str, str]:
    """Delta's session extension and catalog (settable only at session creation)."""
    return {
        "spark.sql.extensions": DELTA_EXTENSION_CLASS,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG_CLASS,
        "spark.databricks.delta.schema.autoMerge.enabled": str(schema_evolution).lower(),
    }


def hadoop_s3a_conf(options: Mapping[str, str]) -> dict[str, str]:
    """storage.options as hadoop-aws's S3A settings: the JVM reaches the same endpoint
    as the Python side. Credentials stay with S3A's own provider chain."""
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


def executor_credentials(config: Config, env: Mapping[str, str]) -> dict[str, str]:
    """The driver's store credentials for the executors' environment, when a location
    is remote: executors write and read the stores themselves and share nothing else
    with the driver. Spark redacts these in its UI; we never log them."""
    if all(location(uri).is_local for uri in (config.raw_root, config.warehouse)):
        return {}
    return {f"spark.executorEnv.{k}": env[k] for k in CREDENTIAL_ENV if env.get(k)}


def build_session(
    config: Config,
    *,
    job: str = "interactive",
    run_date: dt.date | None = None,
    run_id: str | None = None,
    master: str | None = None,
) -> SparkSession:
    """Create (or join) the SparkSession for one job run, and bind it the run's context
    (job, run id, run date, storage options): storage.context.

    The master comes from spark-submit (spark-submit.sh passes --master and Delta's
    packages); `master` is for callers that start Spark in-process, whose JVM then
    resolves the packages itself (spark.jars.packages). Delta's classes are checked
    before the session exists: spark.sql.extensions can only be set at creation.
    """
    if master:
        # Started in-process (tests, notebooks): workers must run this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark_conf = SparkConf()
    for key, value in config.spark.items():
        spark_conf.set(key, value)
    packages = run_packages(config.warehouse, [config.spark.get(PACKAGES_KEY, "")])
    spark_conf.set(PACKAGES_KEY, ",".join(packages))
    if master:
        spark_conf.setMaster(master)
        if master.startswith("local"):
            spark_conf.setIfMissing(DRIVER_JAVA_OPTIONS, LOCAL_DRIVER_GC)
    try:
        SparkContext._ensure_initialized(conf=spark_conf)
    except PySparkRuntimeError as exc:  # the JVM did not start: Ivy could not resolve
        raise DeltaUnavailableError(unavailable_line(packages)) from exc
    if not _class_loadable(DELTA_EXTENSION_CLASS):
        raise DeltaUnavailableError(
            f"Spark's Delta connector ({DELTA_EXTENSION_CLASS}) is not on the classpath: "
            "run the job through ./spark-submit.sh, which adds it, or start Spark with "
            f"--packages {packages[0]}"
        )
    builder = SparkSession.builder.appName(f"{config.app_name}:{job}")
    if master:
        builder = builder.master(master)
    for key, value in session_conf(config).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    size_delta_snapshots(spark)
    # getOrCreate may hand back a session made earlier; the run's identity is per job.
    context = RunContext(
        job=job,
        run_id=run_id or uuid.uuid4().hex,
        run_date=run_date.isoformat() if run_date else "",
        storage_options=dict(config.storage.options),
        schema_evolution=config.storage.schema_evolution,
    )
    bind_context(spark, context)
    log.info("spark %s, master %s, delta-spark", spark.version, spark.sparkContext.master)
    for line in config.retired:
        log.warning("%s", line)
    quiet_query_context_loggers()
    return spark


def size_delta_snapshots(spark: SparkSession) -> None:
    """Delta rebuilds a table's state after every commit in
    spark.databricks.delta.snapshotPartitions tasks, 50 by default (a cluster's size):
    on a few cores each write paid for 50 tiny tasks. Unless the conf sets it, use the
    cores the session has, at most Delta's default (docs/benchmarks.md, Spark
    settings)."""
    if not spark.sparkContext.getConf().contains(SNAPSHOT_PARTITIONS):
        cores = spark.sparkContext.defaultParallelism
        spark.conf.set(SNAPSHOT_PARTITIONS, str(max(1, min(cores, DELTA_SNAPSHOT_PARTITIONS))))


def quiet_query_context_loggers() -> None:
    """Silence pyspark's JSON copies of the errors it raises (see QUERY_CONTEXT_LOGGERS)."""
    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _class_loadable(name: str) -> bool:
    jvm = SparkContext._jvm
    assert jvm is not None, "called after SparkContext._ensure_initialized"
    return bool(jvm.org.apache.spark.util.Utils.classIsLoadable(name))
