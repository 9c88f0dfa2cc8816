"""The replay job on real Spark and Delta: data/sample end to end, and the oracle test."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyspark.sql.functions as F
import pytest

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import ingest, replay, silver
from fleet_rebalance.replay.engine import default_assignors
from fleet_rebalance.replay.group import replay_group
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)


@pytest.fixture(scope="module")
def replayed(spark, tmp_path_factory):
    config = Config(
        raw_root=str(PROJECT / "data" / "sample"),
        warehouse=str(tmp_path_factory.mktemp("replay-warehouse")),
    )
    ingest.run(spark, config, None)  # every date: 2026-11-19 gives the baseline
    counts = replay.run(spark, config, DAY)
    return config, counts


def table(spark, config, name):
    return read_table(spark, config.table_path(name))


def test_silver_tables_have_their_schemas_and_no_errors(spark, replayed):
    config, counts = replayed
    for name, schema in silver.TABLES.items():
        assert [(f.name, f.dataType) for f in table(spark, config, name).schema.fields] == [
            (f.name, f.dataType) for f in schema.fields
        ], name
    assert counts["replay_errors"] == 0
    assert counts["rebalance_events"] > 20
    assert (
        counts["replay_metrics"]
        == counts["rebalance_events"] * 5
        + table(spark, config, "replay_metrics").where(F.col("assignor") == "observed").count()
    )


def test_events_have_real_triggers_and_the_baseline_removes_initial(spark, replayed):
    config, _ = replayed
    triggers = {r["trigger"] for r in table(spark, config, "rebalance_events").collect()}
    assert "initial" not in triggers  # the 2026-11-19 captures are the baseline
    assert {"members_replaced", "partitions_added", "subscription_changed"} <= triggers


def test_metrics_follow_the_definitions(spark, replayed):
    config, _ = replayed
    metrics = table(spark, config, "replay_metrics")
    assert (
        metrics.where(
            F.col("kept") + F.col("reassigned") + F.col("orphaned") + F.col("fresh")
            != F.col("partition_count")
        ).count()
        == 0
    )
    eager = metrics.where(F.col("protocol") == "eager")
    assert eager.where(F.col("paused_partitions") != F.col("partition_count")).count() == 0
    by_assignor = {
        r["assignor"]: r["kept"]
        for r in metrics.groupBy("assignor").agg(F.sum("kept").alias("kept")).collect()
    }
    assert by_assignor["sticky"] >= by_assignor["roundrobin"]
    observed = metrics.where(F.col("assignor") == "observed")
    assert observed.where(F.col("conforms").isNotNull()).count() > 0


def test_the_failed_capture_is_a_gap_not_everyone_leaving(spark, replayed):
    """prod-west's 03:00 offsets capture is an empty file, so subscriptions (inferred from
    offsets) are unknown there: carried forward, not read as "subscribed to nothing". The
    only subscription change on prod-west is the regex group picking up a new topic."""
    config, _ = replayed
    changes = (
        table(spark, config, "rebalance_events")
        .where((F.col("cluster") == "prod-west") & (F.col("trigger") == "subscription_changed"))
        .collect()
    )
    assert [(r["group_id"], r["event_at"].hour) for r in changes] == [("audit-archiver-5", 6)]


def test_oracle_pandas_function_equals_spark(spark, replayed):
    """The same function on the same rows with plain pandas gives Spark's output."""
    config, _ = replayed
    keys = replay.capture_keys(spark, config, DAY)
    captures = replay.capture_rows(spark, config, DAY, keys)
    lags = replay.lag_rows(spark, config, DAY, keys)
    key = (
        captures.select("cluster", "group_id")
        .distinct()
        .orderBy("cluster", "group_id")
        .collect()[0]
    )
    mine = (F.col("cluster") == key["cluster"]) & (F.col("group_id") == key["group_id"])
    history = replay.topic_history(spark, config, DAY)
    columns = silver.union_schema().fieldNames()
    local = replay_group(
        (key["cluster"], key["group_id"]),
        captures.where(mine).toPandas(),
        lags.where(mine).toPandas(),
        run_date=DAY,
        assignors=default_assignors(),
        topic_history=history,
        columns=columns,
    )
    local_metrics = (
        local[local["_table"] == "replay_metrics"][
            ["event_seq", "assignor", "kept", "reassigned", "paused_partitions"]
        ]
        .astype({"event_seq": int, "kept": int, "reassigned": int, "paused_partitions": int})
        .sort_values(["event_seq", "assignor"])
        .reset_index(drop=True)
    )
    spark_metrics = (
        table(spark, config, "replay_metrics")
        .where((F.col("cluster") == key["cluster"]) & (F.col("group_id") == key["group_id"]))
        .select("event_seq", "assignor", "kept", "reassigned", "paused_partitions")
        .toPandas()
        .astype({"event_seq": int, "kept": int, "reassigned": int, "paused_partitions": int})
        .sort_values(["event_seq", "assignor"])
        .reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(local_metrics, spark_metrics)
