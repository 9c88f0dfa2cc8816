"""A warehouse that lives for years: a run reads and writes its own dates, and a re-run
that changes nothing commits nothing (issue 22). The nightly's own no-op re-run and the
replay's cut topic history on data/sample are in test_nightly_job.py; the storage
layer's comparison in test_storage.py."""

from __future__ import annotations

import datetime as dt
import logging
import shutil

import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable, write_deltalake

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, ingest, replay
from fleet_rebalance.storage import read_table, write_table
from fleet_rebalance.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark
DAY = dt.date(2026, 11, 20)


def at(days_before: int, hour: int) -> dt.datetime:
    return dt.datetime.combine(DAY - dt.timedelta(days=days_before), dt.time(hour))


def bronze_rows(spark, name: str, rows: list[dict]):
    schema = bronze.TABLES[name]
    full = [{**r, "capture_date": r["captured_at"].date()} for r in rows]
    return spark.createDataFrame(
        [tuple(r.get(f) for f in schema.fieldNames()) for r in full], schema
    )


# cluster -> topics captures (days before DAY, hour), and its first members capture.
TOPICS = {
    "a": [(5, 10), (1, 0), (1, 12), (0, 6)],  # the one at 00:00 yesterday precedes
    "b": [(6, 8), (3, 9), (3, 10), (0, 1)],  # none yesterday: 3 days back
    "d": [(1, 3)],  # no member captured: not replayed
}
FIRST_MEMBERS = {"a": (1, 6), "b": (1, 5), "c": (1, 4)}  # c: never a topics capture


def test_the_topic_history_holds_what_the_replayed_captures_look_up(spark, tmp_path, monkeypatch):
    """Given topics captures over a week, Then each cluster gets the topics captures of
    the replayed days and the latest one at or before its first capture: found
    yesterday for a, three days back for b (reading one date, then two), none for c
    (every earlier date read once); no read covers the whole table. Topic ids come from
    the same captures, the latest one's: orders was recreated every time, audit has an
    id in one capture only (an older date's for b)."""
    config = Config(warehouse=str(tmp_path / "w"))
    topics = [
        {"cluster": c, "topic": t, "partition": p, "captured_at": at(*when), "topic_id": topic_id}
        for c, times in TOPICS.items()
        for i, when in enumerate(times)
        for t, p, topic_id in (
            ("orders", i, f"{c}-orders-{i}"),
            ("audit", 0, f"{c}-audit" if i == 2 else None),
        )
    ]
    members = [
        {"cluster": c, "group_id": "g", "consumer_id": "m", "captured_at": at(*when)}
        for c, when in FIRST_MEMBERS.items()
    ]
    for name, rows in (("topic_partitions", topics), ("members", members), ("group_states", [])):
        frame = bronze_rows(spark, name, rows)
        write_table(frame, config.table_path(name), partition_by=("capture_date",))
    reads: list[tuple[str, list[str] | None]] = []
    read = Warehouse.read

    def recorded(self, name, **kwargs):
        where = kwargs.get("where")
        reads.append((name, None if where is None else sorted(map(str, where["capture_date"]))))
        return read(self, name, **kwargs)

    monkeypatch.setattr(Warehouse, "read", recorded)
    history, ids = replay.topic_metadata(spark, config, DAY)

    def counts(i: int) -> dict[str, int]:
        return {"orders": i + 1, "audit": 1}

    assert history == {
        "a": [(at(1, 0), counts(1)), (at(1, 12), counts(2)), (at(0, 6), counts(3))],
        "b": [(at(3, 10), counts(2)), (at(0, 1), counts(3))],
    }
    assert ids == {
        "a": {"orders": "a-orders-3", "audit": "a-audit"},
        "b": {"orders": "b-orders-3", "audit": "b-audit"},
    }
    topic_reads = [days for name, days in reads if name == "topic_partitions"]
    assert topic_reads == [
        ["2026-11-19", "2026-11-20"],  # the replayed days
        ["2026-11-17"],  # the newest earlier date (b and c need one): b is found
        ["2026-11-14", "2026-11-15"],  # c: the next two, and nothing is left
        ["2026-11-17"],  # b's capture itself
    ]
    assert all(days is not None for _, days in reads)


def versions(config: Config) -> dict[str, int]:
    return {name: DeltaTable(config.table_path(name)).version() for name in bronze.TABLES}


def test_an_unpartitioned_ingested_files_is_partitioned_once_and_runs_commit_only_changes(
    spark, small_fleet, caplog
):
    """Given ingested_files as it was written before (unpartitioned, rewritten whole by
    every run), Then the next run rewrites it partitioned by capture_date in one commit,
    rows as they were, saying so once at WARNING; a run with nothing new commits
    nothing; a late file re-ingests its date: one commit per bronze table holding rows
    (Delta commits nothing for a write that adds and removes no file)."""
    config, raw = small_fleet
    path = config.table_path("ingested_files")
    rows = read_table(spark, path).toArrow()
    before = rows.to_pylist()
    shutil.rmtree(path)
    write_deltalake(path, rows)
    assert DeltaTable(path).metadata().partition_columns == []

    with caplog.at_level(logging.WARNING, logger="fleet_rebalance.ingest"):
        assert ingest.run(spark, config, DAY) == {}
        assert ingest.run(spark, config, DAY) == {}
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"ingested_files is not partitioned by capture_date: rewriting its {len(before)} "
        "row(s) partitioned, once"
    ]
    assert DeltaTable(path).metadata().partition_columns == ["capture_date"]
    assert DeltaTable(path).version() == 1
    after = read_table(spark, path)
    assert_df_equality(after, spark.createDataFrame(before, after.schema), ignore_row_order=True)

    unchanged = versions(config)
    late = raw / "prod-east" / "captures" / "2026-11-20T1000Z"
    late.mkdir()
    shutil.copy(
        raw / "prod-east" / "captures" / "2026-11-20T0900Z" / "consumer-groups-offsets.txt",
        late / "consumer-groups-offsets.txt",
    )
    ingest.run(spark, config, DAY)
    held = {n: int(not read_table(spark, config.table_path(n)).isEmpty()) for n in bronze.TABLES}
    assert {n: v - unchanged[n] for n, v in versions(config).items()} == held
