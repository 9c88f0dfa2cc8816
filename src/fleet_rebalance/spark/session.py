"""The one place a SparkSession is configured: entry points call build_session."""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import uuid
from collections.abc import Mapping

from pyspark import SparkConf, SparkContext
from pyspark.logger import PySparkLogger
from pyspark.sql import SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import CREDENTIAL_ENV, location
from fleet_rebalance.storage.engine import (
    DELTA_EXTENSION_CLASS,
    EngineName,
    RunContext,
    choose_engine,
    engine_spark_conf,
)
from fleet_rebalance.storage.engines import bind_run

log = logging.getLogger(__name__)
# pyspark logs each SQL or DataFrame error it converts as a JSON line on stderr; the
# error itself reaches the job's failure report (one line), so these would repeat it.
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")

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
    # however small the day: 1k groups' metrics step took 43.7 s, now 27.8 s.
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
    # Adaptive execution coalesces shuffle partitions to 64 MiB by default; the replay's
    # and the metrics' Python stages spend seconds per MiB, so a 5k-group replay ran 5
    # tasks of ~30 s on 2 cores, the last one alone. 16 MiB evens the waves out (1k
    # groups' nightly on local[2]: 132.3 s and 130.2 s, then 117.1 s and 123.0 s; 8 MiB:
    # 124.5 s).
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16m",
    # Workers import pip's pyspark rather than SPARK_HOME's zipped copy (worker_daemon).
    "spark.python.daemon.module": "fleet_rebalance.spark.worker_daemon",
    # PySpark's DataFrame debugging walks the Python stack and makes four more Py4J
    # calls for every Column it builds, to name the Python line in a failed query's
    # context; our failures are one line of our own. Off, a small fleet's nightly made
    # 1.6x less driver CPU and took 97.4 s instead of 109.5 s (median of 3 on 2 cores).
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


def session_conf(
    config: Config, engine: EngineName, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every Spark property build_session sets; the YAML's `spark:` entries win over ours."""
    storage = config.storage
    return {
        **BASE_SPARK_CONF,
        **engine_spark_conf(engine, storage.schema_evolution, storage.options),
        **executor_credentials(config, os.environ if env is None else env),
        **config.spark,
    }


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
    """Create (or join) the SparkSession for one job run.

    The master comes from spark-submit (spark-submit.sh passes --master); `master` is
    for callers that start Spark in-process. The Delta classpath is probed before the
    session exists because spark.sql.extensions can only be set at creation. The
    storage engine is chosen here, once, and bound to the session with the run's
    context (job, run id, run date, storage options): storage.context.
    """
    if master:
        # Started in-process (tests, notebooks): workers must run this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark_conf = SparkConf()
    for key, value in config.spark.items():
        spark_conf.set(key, value)
    if master:
        spark_conf.setMaster(master)
    SparkContext._ensure_initialized(conf=spark_conf)
    loadable = _class_loadable(DELTA_EXTENSION_CLASS)
    engine = choose_engine(config.storage.engine, loadable)

    builder = SparkSession.builder.appName(f"{config.app_name}:{job}")
    if master:
        builder = builder.master(master)
    for key, value in session_conf(config, engine).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # getOrCreate may hand back a session made earlier; the run's identity is per job.
    storage = config.storage
    context = RunContext(
        job=job,
        run_id=run_id or uuid.uuid4().hex,
        run_date=run_date.isoformat() if run_date else "",
        engine=engine,
        storage_options=dict(storage.options),
        schema_evolution=storage.schema_evolution,
        reader=storage.reader,
    )
    bind_run(spark, context)
    log.info(
        "spark %s, master %s, storage engine %s", spark.version, spark.sparkContext.master, engine
    )
    quiet_query_context_loggers()
    return spark


def quiet_query_context_loggers() -> None:
    """Silence pyspark's JSON copies of the errors it raises (see QUERY_CONTEXT_LOGGERS)."""
    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _class_loadable(name: str) -> bool:
    jvm = SparkContext._jvm
    assert jvm is not None, "called after SparkContext._ensure_initialized"
    return bool(jvm.org.apache.spark.util.Utils.classIsLoadable(name))
