"""One SparkSession for the whole run (local[2], few shuffle partitions, UI off)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from fleet_rebalance.config import Config, StorageConfig
    from fleet_rebalance.session import build_session

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    config = Config(
        warehouse=str(tmp_path_factory.mktemp("warehouse")),
        storage=StorageConfig(engine="delta-rs"),
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
