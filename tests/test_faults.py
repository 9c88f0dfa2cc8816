"""Faults while the nightly writes: a killed driver, two runs of one date at once, and
stray or corrupt Parquet files under a table. The reference is one clean local run (of
small_fleet_nightly's fleet: the race is among the gold writes, whatever the fleet's size)."""

from __future__ import annotations

import shutil

import pytest
from cluster_support import ALL_TABLES, assert_same_tables, kill_tree, nightly, write_conf
from deltalake import DeltaTable

from fleet_rebalance.pipeline import gold
from fleet_rebalance.storage import read_table, write_table

pytestmark = pytest.mark.spark
DAY = "2026-11-20"


def _versions(warehouse) -> dict[str, int]:
    return {name: DeltaTable(str(warehouse / name)).version() for name in ALL_TABLES}


@pytest.mark.slow
def test_driver_killed_during_the_final_writes(spark, tmp_path, small_nightly):
    """The date's gold rows are deleted first, so the run has every gold table to write
    (a table whose rows are already there commits nothing); the kill lands among them."""
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
    # write was committed (bronze and silver were unchanged: nothing committed there),
    # still none of the date where it was not.
    committed = {name for name in ALL_TABLES if after[name] > before[name]}
    assert "stickiness" in committed and committed <= set(gold.TABLES), committed
    assert_same_tables(spark, warehouse, clean, tables=committed)
    for name in set(ALL_TABLES) - set(gold.TABLES):
        assert after[name] == before[name], name
    for name in set(gold.TABLES) - committed:
        assert read_table(spark, str(warehouse / name)).isEmpty(), name
    status, output = nightly(conf, DAY)
    assert status == 0, output[-3000:]
    assert_same_tables(spark, warehouse, clean)


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
