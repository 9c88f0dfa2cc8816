"""One SparkSession for the whole run (local[2], few shuffle partitions, UI off)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from s3_support import s3  # noqa: F401  (session fixture: moto S3 server + AWS env)

PROJECT = Path(__file__).resolve().parent.parent


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


@pytest.fixture(autouse=True)
def _no_job_logging_left():
    """Jobs run in-process (test_cli*, test_faults' stubs) add handlers on the test's
    stderr; they go with the test."""
    yield
    from fleet_rebalance.run_job import reset_logging

    reset_logging()


@pytest.fixture(scope="session")
def spark(tmp_path_factory, s3):  # noqa: F811 (the fixture, by name)
    """Started after the S3 server: the JVM and its Python workers take the AWS
    credentials from the environment they start with, as in a real run."""
    from fleet_rebalance.config import Config, StorageConfig
    from fleet_rebalance.session import build_session

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    config = Config(
        warehouse=str(tmp_path_factory.mktemp("warehouse")),
        # delta-rs unless told otherwise: FLEET_TEST_ENGINE=auto with Spark's Delta jars on
        # the classpath runs the storage suite's delta-spark leg.
        storage=StorageConfig(engine=os.environ.get("FLEET_TEST_ENGINE", "delta-rs")),
        spark={
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse")),
        },
    )
    session = build_session(config, job="pytest", master="local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def clean_nightly(spark, tmp_path_factory) -> Path:
    """A warehouse holding one uninterrupted local nightly of data/sample for 2026-11-20
    (no previous date), the reference that cluster and fault runs must reproduce."""
    import datetime as dt

    from fleet_rebalance.config import Config
    from fleet_rebalance.pipeline.nightly import run_steps

    warehouse = tmp_path_factory.mktemp("clean-nightly")
    config = Config(raw_root=str(PROJECT / "data" / "sample"), warehouse=str(warehouse))
    run_steps(spark, config, dt.date(2026, 11, 20))
    return warehouse
