"""The ingest job end to end on real Spark and real Delta tables, plus its transforms."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable

from fleet_rebalance.config import Config
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.pipeline import bronze, ingest
from fleet_rebalance.pipeline.members_enrichment import enrich_members
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)
AT = dt.datetime(2026, 11, 20, 6, 0)


@pytest.fixture(scope="module")
def sample(spark, tmp_path_factory):
    """data/sample ingested once for 2026-11-20."""
    config = Config(
        raw_root=str(PROJECT / "data" / "sample"),
        warehouse=str(tmp_path_factory.mktemp("sample-warehouse")),
    )
    counts = ingest.run(spark, config, DAY)
    return config, counts


def table(spark, config, name):
    return read_table(spark, config.table_path(name))


def test_every_bronze_table_has_the_documented_schema(spark, sample):
    config, counts = sample
    for name, schema in bronze.TABLES.items():
        actual = table(spark, config, name).schema
        assert [(f.name, f.dataType) for f in actual.fields] == [
            (f.name, f.dataType) for f in schema.fields
        ], name
    assert counts["offsets"] > 5000 and counts["members"] > 1000
    assert counts["quarantine"] == 1


def test_sample_rows_land_as_expected(spark, sample):
    config, _ = sample
    state = (
        table(spark, config, "group_states")
        .where((F.col("group_id") == "audit-enricher-5") & (F.col("captured_at") == AT))
        .select(
            "cluster",
            "coordinator_host",
            "coordinator_id",
            "assignment_strategy",
            "state",
            "member_count",
            "line_number",
        )
    )
    expected = spark.createDataFrame(
        [("prod-east", "kafka-3.prod-east.example.net:9092", 3, "range", "Stable", 3, 3)],
        state.schema,
    )
    assert_df_equality(state, expected, ignore_nullable=True)
    offsets = (
        table(spark, config, "offsets")
        .where(
            (F.col("group_id") == "orders-processor-3")
            & (F.col("captured_at") == AT)
            & (F.col("topic") == "clickstream")
            & F.col("partition").isin(0, 3)
        )
        .select("partition", "current_offset", "lag", "client_id")
        .orderBy("partition")
    )
    expected = spark.createDataFrame(
        [
            (0, 3546070, 0, "consumer-orders-processor-3-4"),
            (3, 5261550, 0, "consumer-orders-processor-3-4"),
        ],
        offsets.schema,
    )
    assert_df_equality(offsets, expected, ignore_nullable=True)


def test_failed_capture_is_recorded_not_read_as_no_groups(spark, sample):
    config, _ = sample
    files = table(spark, config, "ingested_files")
    failed = files.where(F.col("status") == "failed_capture").collect()
    assert [r["path"] for r in failed] == [
        "prod-west/captures/2026-11-20T0300Z/consumer-groups-offsets.txt"
    ]
    assert files.where(F.col("status") == "ok").count() == files.count() - 1
    (quarantined,) = table(spark, config, "quarantine").collect()
    assert quarantined["line_number"] is None and "failed capture" in quarantined["reason"]


def test_topicless_assignments_resolve_and_subscriptions_are_inferred(spark, sample):
    config, _ = sample
    members = table(spark, config, "members").where(F.col("cluster") == "prod-west")
    resolved = members.where(F.col("assignment").isNotNull() & (F.col("partition_count") > 0))
    assert resolved.count() > 0  # 3.9 prints "(0,4), (2)": topics come from the offsets view
    assert members.where(~F.col("subscription_inferred")).count() == 0
    assert members.where(F.size("subscription") == 0).count() < members.count()


def test_rerun_of_a_date_changes_nothing(spark, sample):
    config, _ = sample
    versions = {t: DeltaTable(config.table_path(t)).version() for t in bronze.TABLES}
    assert ingest.run(spark, config, DAY) == {}
    assert {t: DeltaTable(config.table_path(t)).version() for t in bronze.TABLES} == versions


def test_a_late_file_adds_exactly_its_rows(spark, tmp_path):
    raw = tmp_path / "raw"
    write_fleet(
        FleetSpec(
            clusters=1,
            groups_per_cluster=2,
            topics_per_cluster=2,
            start=dt.datetime(2026, 11, 20, 8, tzinfo=dt.UTC),
            hours=1,
            interval_minutes=30,
        ),
        raw,
    )
    config = Config(raw_root=str(raw), warehouse=str(tmp_path / "wh"))
    ingest.run(spark, config, DAY)
    before = table(spark, config, "offsets").drop("source_file", "line_number")
    late = raw / "prod-east" / "captures" / "2026-11-20T1000Z"
    late.mkdir()
    shutil.copy(
        raw / "prod-east" / "captures" / "2026-11-20T0900Z" / "consumer-groups-offsets.txt",
        late / "consumer-groups-offsets.txt",
    )
    counts = ingest.run(spark, config, DAY)
    after = table(spark, config, "offsets")
    added = after.where(F.col("source_file").contains("T1000Z"))
    assert added.count() > 0
    assert_df_equality(
        after.where(~F.col("source_file").contains("T1000Z")).drop("source_file", "line_number"),
        before,
        ignore_row_order=True,
        ignore_nullable=True,
    )
    assert counts["offsets"] == before.count() + added.count()
    paths = [r["path"] for r in table(spark, config, "ingested_files").collect()]
    assert len(paths) == len(set(paths))


def test_a_file_that_does_not_reconcile_fails_the_run_loudly(spark):
    payload = {
        "source_file": "c/2026-11-20T0000Z/o.txt",
        "kind": "offsets",
        "status": "ok",
        "lines": 3,
        "parsed_lines": 1,
        "structural": 1,
        "quarantined": 0,
        "rows": 1,
        "reconciles": False,
        "notes": "{}",
        "capture_date": "2026-11-20",
    }
    summaries = spark.createDataFrame(
        [{"_table": "_file", "_payload": json.dumps(payload)}], bronze.union_schema()
    )
    with pytest.raises(
        ingest.ReconciliationError, match=r"1 file\(s\) do not reconcile .*c/2026-11-20T0000Z/o.txt"
    ):
        ingest._check_reconciliation(summaries)


def test_enrichment_transforms_on_tiny_frames(spark):
    members = spark.createDataFrame(
        [
            ("c", "g", "m1", AT, None, [[0, 2]], None, None),
            ("c", "g", "m2", AT, None, [[1, 5]], None, None),
            ("c", "g", "m3", AT, [("t", 9)], None, ["t"], False),
        ],
        "cluster string, group_id string, consumer_id string, captured_at timestamp, "
        "assignment array<struct<topic:string,partition:int>>, "
        "assignment_groups array<array<int>>, subscription array<string>, "
        "subscription_inferred boolean",
    )
    offsets = spark.createDataFrame(
        [
            ("c", "g", "m1", AT, "t", 0),
            ("c", "g", "m1", AT, "u", 2),
            ("c", "g", "m2", AT, "t", 1),
            ("c", "g", None, AT, "v", 0),
        ],
        "cluster string, group_id string, consumer_id string, captured_at timestamp, "
        "topic string, partition int",
    )
    result = enrich_members(members, offsets)
    rows = {r["consumer_id"]: r for r in result.collect()}
    assert [tuple(a) for a in rows["m1"]["assignment"]] == [("t", 0), ("u", 2)]
    assert rows["m2"]["assignment"] is None  # (1,5) but offsets only show partition 1
    assert (rows["m1"]["subscription"], rows["m1"]["subscription_inferred"]) == (
        ["t", "u", "v"],
        True,
    )
    assert (rows["m3"]["subscription"], rows["m3"]["subscription_inferred"]) == (["t"], False)
    unknown = enrich_members(members.limit(1), offsets.limit(0)).collect()[0]
    assert (unknown["subscription"], unknown["subscription_inferred"]) == (None, None)
    assert "assignment_groups" not in result.columns


def test_config_overrides_keep_dataclass_semantics():
    assert dataclasses.replace(Config(), raw_root="x").raw_root == "x"
