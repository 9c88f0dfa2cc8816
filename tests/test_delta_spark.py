"""Spark's own Delta connector (jvm/pom.xml's delta set, on the test session's classpath)
against the embedded delta-rs engine, on a small generated fleet: the same nightly
tables from both, each engine reading the other's, a commit race the connector loses,
maintain on its tables, and Delta's SQL (time travel, history) from the sql job."""

from __future__ import annotations

import datetime as dt
import io
import threading
import time
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from cluster_support import ALL_TABLES, assert_same_tables, storage_engine

from fleet_rebalance.config import Config
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.pipeline import maintain, sql
from fleet_rebalance.pipeline.nightly import run_steps
from fleet_rebalance.sql.statements import split_statements
from fleet_rebalance.storage import read_table, write_table
from fleet_rebalance.storage.engine import DELTA_RS, DELTA_SPARK
from fleet_rebalance.storage.errors import CommitConflictError

pytestmark = pytest.mark.spark
DAY = dt.date(2026, 11, 20)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """Two clusters of four groups, three hours of 20-minute captures and their logs."""
    raw = tmp_path_factory.mktemp("delta-spark-fleet")
    spec = FleetSpec(
        clusters=2,
        groups_per_cluster=4,
        start=dt.datetime(2026, 11, 20, 1, tzinfo=dt.UTC),
        hours=3,
    )
    write_fleet(spec, raw)
    return raw


@pytest.fixture(scope="module")
def warehouses(spark, fleet, tmp_path_factory) -> dict[str, Config]:
    """The nightly of the fleet's day, once per engine."""
    configs = {}
    for engine in (DELTA_RS, DELTA_SPARK):
        config = Config(raw_root=str(fleet), warehouse=str(tmp_path_factory.mktemp(f"wh-{engine}")))
        with storage_engine(spark, engine):
            run_steps(spark, config, DAY)
        configs[engine] = config
    return configs


def test_the_nightly_writes_the_same_tables_with_either_engine(spark, warehouses):
    """Every table, every column but the run's own (ids and times), read by delta-rs."""
    rs, ds = (Path(warehouses[e].warehouse) for e in (DELTA_RS, DELTA_SPARK))
    assert_same_tables(spark, ds, rs)


def test_each_engine_reads_the_other_engines_tables(spark, warehouses):
    rs, ds = (warehouses[e].warehouse for e in (DELTA_RS, DELTA_SPARK))
    for name in ALL_TABLES:
        with storage_engine(spark, DELTA_SPARK):
            by_spark = read_table(spark, f"{rs}/{name}").count()
        with storage_engine(spark, DELTA_RS):
            by_rs = read_table(spark, f"{ds}/{name}").count()
            own = read_table(spark, f"{rs}/{name}").count()
        assert by_spark == by_rs == own, name


def test_a_commit_that_loses_the_race_is_a_conflict_with_the_jobs_line(spark, tmp_path):
    """Given: writer A overwrites the table and, while its tasks write (a Python UDF
    holds them until told: Delta's transaction has read the table by then), writer B
    overwrites it and commits.
    Then: A's commit fails as CommitConflictError (Delta's ConcurrentAppendException or
    a sibling), A commits nothing, and the job's one line says to run it again."""
    from fleet_rebalance.cli.job_failures import CONFLICT_HINT, failure_line

    table = str(tmp_path / "offsets")
    started, go = tmp_path / "a-started", tmp_path / "b-committed"

    def rows(group: str):
        return spark.createDataFrame(
            [(group, 1, DAY)], "group_id string, lag int, capture_date date"
        )

    @F.udf("int")
    def held(lag: int) -> int:
        started.touch()
        deadline = time.monotonic() + 60
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return lag

    with storage_engine(spark, DELTA_SPARK):
        write_table(rows("seed"), table, partition_by=("capture_date",))
        failure: list[BaseException] = []

        def writer_a() -> None:
            try:
                write_table(
                    rows("a").withColumn("lag", held("lag")),
                    table,
                    mode="overwrite",
                    partition_by=("capture_date",),
                )
            except BaseException as exc:
                failure.append(exc)

        thread = threading.Thread(target=writer_a)
        thread.start()
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "writer A never started writing"
        write_table(rows("b"), table, mode="overwrite", partition_by=("capture_date",))
        go.touch()
        thread.join(120)
        assert not thread.is_alive()
        assert len(failure) == 1 and isinstance(failure[0], CommitConflictError), failure
        assert [r.group_id for r in read_table(spark, table).collect()] == ["b"]
    line = failure_line(failure[0])
    assert line is not None and line.endswith(CONFLICT_HINT)
    assert "a concurrent transaction committed first" in line


def test_maintain_runs_delta_s_own_optimize_and_vacuum(spark, warehouses, tmp_path):
    """On a warehouse of three of the delta-spark nightly's tables (a table's directory
    holds all of it): compaction and VACUUM through Delta's SQL, rows unchanged."""
    import shutil

    source = Path(warehouses[DELTA_SPARK].warehouse)
    names = ["offsets", "rebalance_events", "group_health"]
    for name in names:
        shutil.copytree(source / name, tmp_path / name)
    config = Config(warehouse=str(tmp_path))
    with storage_engine(spark, DELTA_SPARK):
        before = {n: read_table(spark, str(tmp_path / n)).count() for n in names}
        lines = maintain.run(spark, config, retain_days=7)
        after = {n: read_table(spark, str(tmp_path / n)).count() for n in names}
    assert lines[0].startswith(f"maintain {tmp_path}: 3 tables, retention 7 days")
    assert [line.split(":")[0] for line in lines[1:-1]] == sorted(names)
    assert lines[-1].startswith("total: ")
    assert after == before


def test_sql_time_travels_and_shows_history_with_delta_s_sql(spark, warehouses):
    """Under delta-spark the sql job's tables are Delta tables of the session's catalog:
    `VERSION AS OF` and `DESCRIBE HISTORY` take their names."""
    config = warehouses[DELTA_SPARK]
    with storage_engine(spark, DELTA_SPARK):
        tables = sql.register_views(spark, config)
        assert "group_health" in tables
        text = (
            "SELECT count(*) AS n FROM group_health VERSION AS OF 0;\nDESCRIBE HISTORY group_health"
        )
        out = io.StringIO()
        sql.run_statements(spark, split_statements(text), "csv", 100, tables, config.warehouse, out)
    printed = out.getvalue()
    n = read_table(spark, f"{config.warehouse}/group_health").count()
    assert printed.startswith(f"n\r\n{n}\r\n")
    assert "version,timestamp" in printed and "WRITE" in printed
