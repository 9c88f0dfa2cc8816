"""The ingest job end to end on real Spark and real Delta tables, plus its transforms."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
from pathlib import Path

import pyarrow as pa
import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable

from fleet_rebalance.capture.members_enrichment import MEMBERS_SCHEMA, CaptureOffsets
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, ingest
from fleet_rebalance.pipeline.ingest import reconcile, tasks
from fleet_rebalance.pipeline.ingest_files import RawFile
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)
AT = dt.datetime(2026, 11, 20, 6, 0)


@pytest.fixture(scope="module")
def sample(spark, tmp_path_factory):
    """data/sample ingested once for 2026-11-20."""
    config = Config(
        raw_root=str(PROJECT / "tests" / "data" / "fleet_v1"),
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
    # The file's row says why, for the date it was ingested for.
    assert (failed[0]["reason"], failed[0]["capture_date"]) == (quarantined["reason"], DAY)


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


def test_the_broker_views_land_in_brokers_and_partition_sizes(spark, tmp_path):
    """Given the lab's real kafka-configs.sh --all and kafka-log-dirs.sh output in one
    capture, Then ingest stores each broker's rack and every replica's size, nothing
    quarantined (the views' parsing: test_broker_views)."""
    capture = tmp_path / "raw" / "lab" / "captures" / "2026-11-20T0600Z"
    capture.mkdir(parents=True)
    views = PROJECT / "tests" / "data" / "broker_views" / "4.4.0"
    for name in ("brokers.txt", "log-dirs.txt"):
        shutil.copy(views / name, capture / name)
    config = Config(raw_root=str(tmp_path / "raw"), warehouse=str(tmp_path / "wh"))
    counts = ingest.run(spark, config, DAY)
    racks = table(spark, config, "brokers").select("cluster", "broker", "rack", "captured_at")
    expected = spark.createDataFrame(
        [("lab", b, f"rack-{b}", AT) for b in (1, 2, 3)],
        "cluster string, broker int, rack string, captured_at timestamp",
    )
    assert_df_equality(
        racks, expected, ignore_nullable=True, ignore_metadata=True, ignore_row_order=True
    )
    sizes = table(spark, config, "partition_sizes")
    assert counts["partition_sizes"] == sizes.count() > 0
    assert sizes.where(F.col("topic") == "__consumer_offsets").count() > 0
    files = table(spark, config, "ingested_files").select("kind", "status").collect()
    assert sorted(tuple(r) for r in files) == [("brokers", "ok"), ("log_dirs", "ok")]
    assert counts["quarantine"] == 0


def test_a_late_file_adds_exactly_its_rows(spark, small_fleet):
    config, raw = small_fleet
    before = table(spark, config, "offsets").drop("source_file", "line_number").localCheckpoint()
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


def test_a_file_that_does_not_reconcile_fails_the_run_loudly():
    payload = {
        "source_file": "c/2026-11-20T0000Z/o.txt",
        "kind": "offsets",
        "status": "ok",
        "lines": 3,
        "parsed_lines": 1,
        "structural": 1,
        "quarantined": 0,
        "quarantined_lines": 0,
        "rows": 1,
        "reconciles": False,
        "notes": {},
        "capture_date": "2026-11-20",
    }
    with pytest.raises(
        ingest.ReconciliationError, match=r"1 file\(s\) do not reconcile .*c/2026-11-20T0000Z/o.txt"
    ):
        reconcile.check_reconciliation([payload])


def test_members_are_completed_from_the_same_captures_offsets():
    at = AT.replace(tzinfo=dt.UTC)  # as parsed: aware, UTC

    def member(consumer, assignment=None, groups=None, subscription=None, inferred=None):
        return {
            "cluster": "c",
            "group_id": "g",
            "captured_at": at,
            "consumer_id": consumer,
            "assignment": assignment,
            "assignment_groups": groups,
            "subscription": subscription,
            "subscription_inferred": inferred,
        }

    def offset(consumer, topic, partition, group="g", at=at):
        return {
            "cluster": "c",
            "group_id": group,
            "captured_at": at,
            "consumer_id": consumer,
            "topic": topic,
            "partition": partition,
        }

    rows = [offset("m1", "u", 2), offset("m2", "t", 1), offset(None, "v", 0)]
    # Another group and another capture in the same unit must not leak in.
    rows += [offset("m1", "w", 7, group="h"), offset("m1", "x", 0, at=at + dt.timedelta(1))]
    batch = pa.Table.from_pylist([offset("m1", "t", 0)])
    capture = CaptureOffsets.of([pa.Table.from_pylist(rows), batch])

    def enrich(capture, *members):
        table = pa.Table.from_pylist(list(members), schema=MEMBERS_SCHEMA)
        return capture.enrich(table).to_pylist()

    m1, m2, m9, m3 = enrich(
        capture,
        member("m1", groups=[[2, 0]]),
        # (1,5) listed but the offsets view shows only partition 1: unknown, not guessed.
        member("m2", groups=[[1, 5]]),
        member("m9", groups=[[]]),
        member("m3", [{"topic": "t", "partition": 9}], None, ["t"]),
    )
    assert m1["assignment"] == [{"topic": "t", "partition": 0}, {"topic": "u", "partition": 2}]
    assert (m1["subscription"], m1["subscription_inferred"]) == (["t", "u", "v"], True)
    assert "assignment_groups" not in m1
    assert m2["assignment"] is None
    assert m9["assignment"] is None
    assert (m3["subscription"], m3["subscription_inferred"]) == (["t"], False)
    assert m3["assignment"] == [{"topic": "t", "partition": 9}]
    (unknown,) = enrich(CaptureOffsets.of([]), member("m1", groups=[[0]]))
    assert (unknown["assignment"], unknown["subscription"]) == (None, None)
    assert unknown["subscription_inferred"] is None


def test_files_of_one_capture_are_parsed_together():
    at = dt.datetime(2026, 11, 20, 2, 40, tzinfo=dt.UTC)
    pattern = "^(?P<cluster>[^/]+)/"
    files = [
        RawFile.at("east/captures/2026-11-20T0240Z/consumer-groups-offsets.txt", 900, pattern),
        RawFile.at("east/captures/2026-11-20T0240Z/consumer-groups-members.txt", 100, pattern),
        RawFile.at("west/captures/2026-11-20T0240Z/consumer-groups-offsets.txt", 50, pattern),
        # Known logs (by their content) are parsed alone, whatever their path says.
        dataclasses.replace(
            RawFile.at("east/logs/broker-1/server.log.2026-11-20-02", 70, pattern), is_log=True
        ),
        dataclasses.replace(
            RawFile.at("east/logs/broker-2/server.log.2026-11-20-02", 60, pattern), is_log=True
        ),
    ]
    units = tasks.capture_units(files)
    assert sorted(len(u) for u in units) == [1, 1, 1, 2]
    day = at.date()
    slices = tasks.balanced_slices([(u, day) for u in units], 2)
    assert [sum(len(r) for r, _ in s) for s in slices] == [2, 3]
    # Each file travels with its path as discovery parsed it.
    assert slices[0] == [
        (
            [
                ("east/captures/2026-11-20T0240Z/consumer-groups-offsets.txt", "east", at, None),
                ("east/captures/2026-11-20T0240Z/consumer-groups-members.txt", "east", at, None),
            ],
            day,
        )
    ]


def test_config_overrides_copy_the_model():
    assert Config().model_copy(update={"raw_root": "x"}).raw_root == "x"
