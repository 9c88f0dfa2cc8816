import pyspark.sql.functions as F
import pytest
from pyspark.sql import DataFrame

from fleet_rebalance.spark.session import (
    DELTA_EXTENSION_CLASS,
    SNAPSHOT_PARTITIONS,
    _class_loadable,
    size_delta_snapshots,
)
from fleet_rebalance.storage.context import run_context

pytestmark = pytest.mark.spark


def test_session_is_utc_with_arrow_and_aqe(spark):
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    assert spark.sparkContext.appName == "fleet_rebalance:pytest"
    context = run_context(spark)
    assert context.job == "pytest"
    assert len(context.run_id) == 32


def test_a_local_driver_collects_garbage_with_the_throughput_collector(spark):
    """build_session on a local master starts the JVM with LOCAL_DRIVER_GC (the
    launcher passes it to spark-submit: test_launcher)."""
    beans = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    names = {bean.getName() for bean in beans.getGarbageCollectorMXBeans()}
    assert names == {"PS Scavenge", "PS MarkSweep"}


def test_the_delta_probe_sees_the_driver_classpath(spark):
    # The test session resolved Delta's package as a run does; a class on no jar is not
    # loadable, and build_session then refuses in one line.
    assert _class_loadable("org.apache.spark.sql.SparkSession")
    assert _class_loadable(DELTA_EXTENSION_CLASS)
    assert not _class_loadable("io.delta.sql.NoSuchExtension")


def test_a_persisted_shuffle_is_coalesced_like_any_other(spark):
    # Replay and metrics persist their results: without this a tiny day ran every
    # shuffle partition as its own task (and Python worker round trip) per table.
    frame = spark.range(100).groupBy((F.col("id") % 3).alias("key")).count()
    assert int(spark.conf.get("spark.sql.shuffle.partitions")) > 1
    cached = frame.persist()
    try:
        assert cached.count() == 3
        assert cached.rdd.getNumPartitions() == 1
    finally:
        cached.unpersist()


def test_columns_are_built_without_pyspark_call_site_capture(spark):
    # PySpark's DataFrame debugging walks the Python stack and makes four Py4J calls per
    # Column built (session.py); the job's columns are built without it.
    from pyspark.errors.utils import is_debugging_enabled

    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"
    assert not is_debugging_enabled()


def test_generated_code_outlives_more_queries_than_sparks_default_keeps(spark):
    # A later date in one session (a backfill) runs the plans of the one before it: their
    # classes are compiled once. Spark's default cache of 100 would have evicted the first
    # query's by the time it runs again here; the session's keeps it. The test session
    # interprets its plans (conftest), so code generation is on for this test alone.
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics
    generating = {
        "spark.sql.codegen.factoryMode": "FALLBACK",
        "spark.sql.codegen.wholeStage": "true",
    }
    kept = {key: spark.conf.get(key) for key in generating}

    def compiled() -> int:
        return int(metrics.METRIC_COMPILATION_TIME().getCount())

    def query(i: int) -> DataFrame:
        return spark.range(2).selectExpr(f"id * {i} + {i} AS v")

    for key, value in generating.items():
        spark.conf.set(key, value)
    try:
        assert [r.v for r in query(7).collect()] == [7, 14]
        before = compiled()
        for i in range(130):
            query(i)._jdf.queryExecution().executedPlan().execute()  # compiled, not run
        assert compiled() - before >= 129  # a class each (7's was cached)
        before = compiled()
        assert [r.v for r in query(7).collect()] == [7, 14]
        assert compiled() == before
    finally:
        for key, value in kept.items():
            spark.conf.set(key, value)


class _Session:
    """What size_delta_snapshots reads of a session: its SparkConf and its SQL conf."""

    def __init__(self, cores: int, preset: dict[str, str]) -> None:
        from pyspark import SparkConf

        self.sparkContext = type(
            "Context",
            (),
            {
                "defaultParallelism": cores,
                "getConf": lambda _: SparkConf(False).setAll(preset.items()),
            },
        )()
        self.conf = type("Conf", (), {"set": lambda _, k, v: self.values.update({k: v})})()
        self.values: dict[str, str] = {}


@pytest.mark.parametrize(
    ("cores", "preset", "expected"),
    [(2, {}, "2"), (400, {}, "50"), (2, {SNAPSHOT_PARTITIONS: "16"}, None)],
)
def test_delta_rebuilds_table_state_in_the_sessions_cores_unless_the_conf_says(
    cores, preset, expected
):
    """Delta's 50 snapshot tasks made every write on 2 cores pay for 50 tiny tasks:
    the session's cores are used (at most Delta's 50), a conf's own value is kept."""
    session = _Session(cores, preset)
    size_delta_snapshots(session)
    assert session.values.get(SNAPSHOT_PARTITIONS) == expected
