"""One SparkSession for the whole run (local[2], few shuffle partitions, UI off)."""

from __future__ import annotations

import fcntl
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from s3_support import s3  # noqa: F401  (session fixture: moto S3 server + AWS env)

from fleet_rebalance.config import Config, MetricsConfig, ZonesConfig

PROJECT = Path(__file__).resolve().parent.parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the session's SparkSession, itself or through a fixture, is marked
    spark whatever its module says, before `-m` selects: `-m "not spark"` starts no JVM."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture
def small_fleet(spark, tmp_path):
    """(config, raw root) of a generated 1-cluster, 2-group hour of 2026-11-20, ingested:
    for tests that add a file and ingest again."""
    import datetime as dt

    from fleet_rebalance.config import Config
    from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
    from fleet_rebalance.pipeline import ingest

    raw = tmp_path / "raw"
    start = dt.datetime(2026, 11, 20, 8, tzinfo=dt.UTC)
    spec = FleetSpec(
        clusters=1,
        groups_per_cluster=2,
        topics_per_cluster=2,
        start=start,
        hours=1,
        interval_minutes=30,
    )
    write_fleet(spec, raw)
    config = Config(raw_root=str(raw), warehouse=str(tmp_path / "wh"))
    ingest.run(spark, config, start.date())
    return config, raw


@pytest.fixture(scope="session", autouse=True)
def live_labs(request, tmp_path_factory):
    """The live Kafka labs of the session's selected tests (test_kafka_lab's live-<line>),
    started with the session in the background (kafka_lab.LabsInBackground); None when
    no such test runs."""
    lines = set()
    for item in request.session.items:
        source = getattr(item, "callspec", None) and item.callspec.params.get("lab")
        if isinstance(source, tuple) and source[0] == "live":
            lines.add(source[1])
    if not lines:
        yield None
        return
    from kafka_lab import LabsInBackground

    labs = LabsInBackground(
        {line: tmp_path_factory.mktemp(f"kafka-lab-{line}") for line in sorted(lines, key=float)}
    )
    yield labs
    labs.close()


@pytest.fixture(autouse=True)
def _no_job_logging_left():
    """Jobs run in-process (test_cli*, test_faults' stubs) add handlers on the test's
    stderr; they go with the test."""
    yield
    from fleet_rebalance.cli.run_job import reset_logging

    reset_logging()


@pytest.fixture(scope="session")
def spark(tmp_path_factory, s3):  # noqa: F811 (the fixture, by name)
    """Started after the S3 server: the JVM and its Python workers take the AWS
    credentials from the environment they start with, as in a real run. Delta's
    connector and Hadoop's S3A come as a run's do (spark.jars.packages, resolved by
    Spark on first use): the S3 tests share this session."""
    from fleet_rebalance.config import Config
    from fleet_rebalance.spark.packages import PACKAGES_KEY, s3a_package
    from fleet_rebalance.spark.session import build_session, hadoop_s3a_conf
    from fleet_rebalance.storage.errors import DeltaUnavailableError

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    config = Config(
        warehouse=str(tmp_path_factory.mktemp("warehouse")),
        spark={
            "spark.sql.shuffle.partitions": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            # One JVM serves the whole suite (some 1,700 tests, dozens of nightlies, each
            # in warehouses of its own). Delta keeps a DeltaLog, with its snapshot's
            # cached state, for every table path it has seen (10,000 by default): a run
            # sees some 30 tables, the suite thousands, and the heap ran out near the end
            # (a broadcast join could not be built). Evicted logs uncache their state.
            "spark.databricks.delta.delta.log.cacheSize": "64",
            # Spark's status store keeps every job's, stage's and query's plan and
            # metrics up to these counts, UI or not: a suite's worth is hundreds of MiB.
            "spark.ui.retainedJobs": "100",
            "spark.ui.retainedStages": "100",
            "spark.ui.retainedTasks": "10000",
            "spark.sql.ui.retainedExecutions": "50",
            "spark.driver.memory": "4g",
            # The suite's queries are many and their data small: compiling each plan's
            # generated Java (Janino, then the JIT) costs more than it saves, so the
            # session's expressions and operators are interpreted. factoryMode is Spark's
            # own switch for its tests; the jobs the suite starts with spark-submit, and
            # every nightly, keep code generation (docs/benchmarks.md, "Test suite").
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse")),
            PACKAGES_KEY: s3a_package(),
            # The JVM's S3A reaches the session's moto server (its credentials are in
            # the environment, as the provider chain finds them).
            **hadoop_s3a_conf(s3.storage_options),
        },
    )
    # The first session resolves spark.jars.packages into ~/.ivy2.5.2, which Ivy does not
    # lock: two pytest processes started at once (their base temps sharing a parent) take
    # turns.
    lock = tmp_path_factory.getbasetemp().parent / "spark-packages.lock"
    try:
        with lock.open("w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            session = build_session(config, job="pytest", master="local[2]")
    except DeltaUnavailableError as exc:  # a machine without Maven Central: one line
        pytest.exit(f"the tests need Spark's JVM packages: {exc}", returncode=1)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# Names a local path may hold that need care: raw captures are read through pyarrow,
# tables through Hadoop's filesystems, and a percent escape in a name (%41) must stay three
# characters for both.
RAW_NAME = "raw a#b%41'q\"é"
TABLES_NAME = "wh a#b%41%'q\"é"


@pytest.fixture(scope="session")
def clean_nightly(spark, tmp_path_factory) -> Path:
    """A warehouse holding one uninterrupted local nightly of data/sample for 2026-11-20
    (no previous date): the sample's tables, read by the tests that check them. Its
    captures and tables sit in directories named RAW_NAME and TABLES_NAME, so every check
    of the sample's tables is also one of such paths (test_object_storage)."""
    import datetime as dt
    import shutil

    from fleet_rebalance.pipeline.nightly import run_steps

    base = tmp_path_factory.mktemp("clean-nightly")
    raw, warehouse = base / RAW_NAME, base / TABLES_NAME
    shutil.copytree(PROJECT / "data" / "sample", raw)
    config = Config(raw_root=str(raw), warehouse=str(warehouse))
    run_steps(spark, config, dt.date(2026, 11, 20))
    return warehouse


@dataclass(frozen=True)
class SampleNightlies:
    """A warehouse holding data/sample's two dates, each date's nightly run in order (the
    first date is the second's baseline, as in production); `counts`: the rows the
    second date's steps wrote."""

    config: Config
    counts: dict[str, dict]


@pytest.fixture(scope="session")
def sample_nightlies(spark, tmp_path_factory) -> SampleNightlies:
    """Shared by test_nightly_job (its checks of the second date), test_backfill (the
    reference a backfill must reproduce, and a backfill over it) and test_report_layout
    (which copies it and adds a date). A test that runs anything on it must assert that
    nothing was committed; one that would change it works on a copy."""
    import datetime as dt

    from fleet_rebalance.pipeline.nightly import run_steps

    warehouse = tmp_path_factory.mktemp("sample-nightlies")
    config = Config(raw_root=str(PROJECT / "data" / "sample"), warehouse=str(warehouse))
    run_steps(spark, config, dt.date(2026, 11, 19))
    counts = run_steps(spark, config, dt.date(2026, 11, 20))
    return SampleNightlies(config, counts)


@pytest.fixture(scope="session")
def small_nightly(spark, tmp_path_factory) -> tuple[Path, Path]:
    """(raw root, warehouse): small_fleet_nightly.SPEC's fleet and its uninterrupted
    local nightly of small_fleet_nightly.DAY."""
    from small_fleet_nightly import DAY, SPEC

    from fleet_rebalance.generate.fleet import write_fleet
    from fleet_rebalance.pipeline.nightly import run_steps

    base = tmp_path_factory.mktemp("small-nightly")
    raw, warehouse = base / "raw", base / "wh"
    write_fleet(SPEC, raw)
    run_steps(spark, Config(raw_root=str(raw), warehouse=str(warehouse)), DAY)
    return raw, warehouse


# small_fleet_nightly's fleet placed in zones: its captures carry the brokers' racks and
# the replicas' sizes, the conf maps its consumers' subnets to their zones (as
# conf/local.yaml does); and a rack_aware threshold of 1 MB a day, so the generator's few
# hours of reads make rack_aware compete with every other change.
ZONED_METRICS = MetricsConfig(change_min_cross_zone_gb_saved=0.001)


@pytest.fixture(scope="session")
def zoned_fleet(spark, small_nightly, tmp_path_factory) -> tuple[Path, Config]:
    """(warehouse, config): a copy of small_nightly's warehouse with the metrics of its
    date run again with zones.consumer_cidrs the generator's (CONSUMER_CIDRS) and
    ZONED_METRICS."""
    import shutil

    from small_fleet_nightly import DAY

    from fleet_rebalance.generate.zones import CONSUMER_CIDRS
    from fleet_rebalance.pipeline import metrics

    raw, warehouse = small_nightly
    copy = tmp_path_factory.mktemp("zoned-fleet") / "wh"
    shutil.copytree(warehouse, copy)
    config = Config(
        raw_root=str(raw),
        warehouse=str(copy),
        zones=ZonesConfig(consumer_cidrs=CONSUMER_CIDRS),
        metrics=ZONED_METRICS,
    )
    metrics.run(spark, config, DAY)
    return copy, config
