"""Faults while the nightly writes: a killed driver, two runs of one date at once, and
stray or corrupt Parquet files under a table. The reference is one clean local run (of
small_fleet_nightly's fleet: what is proven does not need the sample's size)."""

from __future__ import annotations

import datetime as dt
import shutil
import threading

import pytest
from cluster_support import (
    ALL_TABLES,
    assert_same_tables,
    held_until,
    kill_tree,
    nightly,
    wait_for,
    write_conf,
)
from deltalake import DeltaTable

from fleet_rebalance.cli.job_failures import CONFLICT_HINT, failure_line
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.pipeline.nightly import StepFailed, run_steps
from fleet_rebalance.storage import delta, read_table, write_table

pytestmark = pytest.mark.spark
DAY = "2026-11-20"


def _versions(warehouse) -> dict[str, int]:
    return {name: DeltaTable(str(warehouse / name)).version() for name in ALL_TABLES}


@pytest.mark.slow
@pytest.mark.full
def test_driver_killed_during_the_final_writes(spark, tmp_path, small_nightly):
    """The date's gold rows are deleted first, so a gold table the kill kept from its
    write reads without them; the kill lands among the gold writes."""
    raw, clean = small_nightly
    warehouse = tmp_path / "wh"
    shutil.copytree(clean, warehouse)
    for name in gold.TABLES:
        DeltaTable(str(warehouse / name)).delete()
    before = _versions(warehouse)
    conf = write_conf(tmp_path, "wh", raw_root=str(raw))
    # The first gold table is committed; the kill lands among the others' writes.
    status, output = nightly(conf, DAY, at_line="stickiness: ", then=kill_tree)
    assert status != 0 and "step 3/3 metrics done" not in output, output[-3000:]
    after = _versions(warehouse)
    assert after["stickiness"] == before["stickiness"] + 1
    assert after["rebalance_timeline"] == before["rebalance_timeline"]  # never reached
    # Every table reads at its last committed version: the clean run's rows where the
    # write was committed (ingest found nothing new: bronze has no new version; replay
    # rewrote silver with the same rows, and Delta commits nothing for a table without
    # a row of the date), still none of the date where it was not.
    committed = {name for name in ALL_TABLES if after[name] > before[name]}
    assert committed & set(bronze.TABLES) == set()
    silver_rows = {n for n in silver.TABLES if not read_table(spark, str(clean / n)).isEmpty()}
    assert silver_rows | {"stickiness"} <= committed, committed
    assert_same_tables(spark, warehouse, clean, tables=set(ALL_TABLES) - set(gold.TABLES))
    assert_same_tables(spark, warehouse, clean, tables=committed & set(gold.TABLES))
    for name in set(gold.TABLES) - committed:
        assert read_table(spark, str(warehouse / name)).isEmpty(), name
    status, output = nightly(conf, DAY)
    assert status == 0, output[-3000:]
    assert_same_tables(spark, warehouse, clean)


@pytest.mark.slow
@pytest.mark.full
def test_two_nightlies_of_one_date_at_once(spark, tmp_path, small_nightly, monkeypatch):
    """Given two nightlies of one date on one new warehouse at once, run A's offsets
    write held (its Delta transaction has begun) until run B has committed offsets,
    Then A fails with the conflict's one line and commits nothing; B completes; every
    table reads; and a third run of the date gives the clean run's tables."""
    raw, clean = small_nightly
    config = Config(raw_root=str(raw), warehouse=str(tmp_path / "wh"))
    started, go = tmp_path / "a-started", tmp_path / "b-committed"
    held = held_until(started, go)
    write = delta.write

    def racing(df, table, context, **options):
        if not table.uri.endswith("/offsets") or go.exists():
            return write(df, table, context, **options)
        if threading.current_thread().name == "nightly-a":
            metadata = df.schema["partition"].metadata
            df = df.withColumn("partition", held("partition").alias("partition", metadata=metadata))
            return write(df, table, context, **options)
        wait_for(started)
        write(df, table, context, **options)
        go.touch()
        return None

    monkeypatch.setattr(delta, "write", racing)
    outcomes: dict[str, BaseException | None] = {}

    def run(name: str) -> None:
        try:
            run_steps(spark, config, dt.date.fromisoformat(DAY))
            outcomes[name] = None
        except BaseException as exc:
            outcomes[name] = exc

    threads = [threading.Thread(target=run, args=(n,), name=n) for n in ("nightly-a", "nightly-b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(900)
    assert outcomes["nightly-b"] is None
    failure = outcomes["nightly-a"]
    assert isinstance(failure, StepFailed) and failure.step == "ingest", failure
    line = failure_line(failure)
    assert line is not None and line.endswith(CONFLICT_HINT), line
    assert "a concurrent transaction committed first" in line
    monkeypatch.undo()
    assert_same_tables(spark, config.warehouse, clean)
    run_steps(spark, config, dt.date.fromisoformat(DAY))
    assert_same_tables(spark, config.warehouse, clean)


def test_stray_parquet_is_ignored_and_a_corrupt_referenced_one_is_named(spark, tmp_path):
    path = str(tmp_path / "t")
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, date string")
    write_table(df, path, mode="overwrite", partition_by=("date",))
    for stray in (tmp_path / "t" / "stray.parquet", tmp_path / "t" / "date=a" / "stray.parquet"):
        stray.write_bytes(b"not parquet at all")
    assert sorted(r["id"] for r in read_table(spark, path).collect()) == [1, 2]
    referenced = next((tmp_path / "t" / "date=b").glob("*.parquet"))
    referenced.write_bytes(b"PAR1 truncated")
    with pytest.raises(Exception, match=referenced.name):
        read_table(spark, path).collect()


def test_the_small_reference_fills_every_table_the_sample_fills(
    spark, small_nightly, clean_nightly
):
    """The cluster and fault tests compare every table with small_nightly's: a table
    empty there would be compared on its schema alone."""
    _, small = small_nightly
    for name in ALL_TABLES:
        if read_table(spark, str(clean_nightly / name)).count():
            assert read_table(spark, str(small / name)).count(), name
