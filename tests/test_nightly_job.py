"""The nightly on data/sample end to end: every table and the report (a re-run of a date
is test_backfill.py's resume)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality

from fleet_rebalance.config import Config
from fleet_rebalance.generate.share_streams import SHARE_GROUP, SHARE_TOPIC, STREAMS_GROUP
from fleet_rebalance.pipeline import bronze, gold, replay, silver, tagged
from fleet_rebalance.pipeline.nightly import StepFailed, report, run_steps
from fleet_rebalance.replay.assignor_runs import default_assignors
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)
ALL_TABLES = {**bronze.TABLES, **silver.TABLES, **gold.TABLES}


@pytest.fixture(scope="module")
def nightly(spark, sample_nightlies):
    """The session's two sample nightlies (conftest.sample_nightlies), the second date's
    report written."""
    config = sample_nightlies.config
    return config, sample_nightlies.counts, report(spark, config, DAY)


def table(spark, config, name):
    return read_table(spark, config.table_path(name))


def test_every_table_has_its_documented_schema(spark, nightly):
    config, *_ = nightly
    for name, schema in ALL_TABLES.items():
        got = [(f.name, f.dataType) for f in table(spark, config, name).schema.fields]
        assert got == [(f.name, f.dataType) for f in schema.fields], name


def test_gold_tables_have_sensible_content(spark, nightly):
    config, counts, *_ = nightly
    metrics = counts["metrics"]
    # Audits, empty on clean data: no partition of the sample fleet is owned twice or
    # orphaned at a settled capture (its share group's workers share partitions by
    # design), and no capture reads an absurd log end.
    empty = ("ownership_audit", "log_end_quarantine")
    assert [n for n in gold.TABLES if n not in empty and not metrics[n] > 0] == [], metrics
    assert [metrics[name] for name in empty] == [0, 0], metrics
    day = F.col("date") == F.lit(DAY)
    # The sample's captures give every broker's zone (brokers.txt), so cross_zone_traffic
    # has its rows; Config()'s defaults place no consumer (no zones.consumer_cidrs, and the
    # CLI's views print no client.rack): every member's zone and every byte's crossing is
    # unknown, never counted as in zone, and no rack-aware saving is claimed.
    traffic = table(spark, config, "cross_zone_traffic").where(day).collect()
    assert traffic and all(
        r["members"] == r["members_unknown_zone"]
        and r["cross_zone_leader_bytes"] == r["cross_zone_follower_bytes"] == 0
        and r["read_bytes"] == r["unknown_zone_bytes"] + r["unowned_bytes"]
        and r["rack_aware_saving_bytes"] is None
        for r in traffic
    ), traffic
    assert sum(r["unknown_zone_bytes"] for r in traffic) > 0
    # The share and streams groups' rebalances are events too, but no consumer assignor
    # replays them: no recommendation, no stickiness (test_the_sample_share_and_...).
    events = (
        table(spark, config, "rebalance_events")
        .where(F.col("event_date") == F.lit(DAY))
        .where(~F.col("group_id").isin(SHARE_GROUP, STREAMS_GROUP))
    )
    groups_with_events = events.select("cluster", "group_id").distinct().count()
    recs = table(spark, config, "recommendations").where(day)
    assert recs.count() == groups_with_events
    assert recs.where(F.col("recommended_assignor") == "observed").count() == 0
    sticky = table(spark, config, "stickiness").where(day)
    # Every replayed assignor sees each of a group's events; `observed` only those whose
    # capture shows every member's assignment.
    replayed = sticky.where(F.col("assignor") != "observed")
    per_group = replayed.groupBy("cluster", "group_id").agg(F.countDistinct("events").alias("n"))
    assert per_group.where("n != 1").count() == 0
    assert replayed.agg(F.sum("events")).first()[0] == 5 * events.count()
    eager = sticky.where(F.col("assignor") == "range").agg(F.sum("paused_partitions")).first()[0]
    coop = sticky.where(F.col("assignor") == "cooperative-sticky")
    assert coop.agg(F.sum("paused_partitions")).first()[0] < eager
    timeline = table(spark, config, "rebalance_timeline").where(day)
    # Each group's coordinator partition is the one its coordinator's log lines name.
    logged = (
        table(spark, config, "coordinator_events")
        .select(
            "cluster",
            "group_id",
            F.regexp_extract("line", r"(?:__consumer_offsets-|partition=)(\d+)", 1).alias("p"),
        )
        .where(F.col("p") != "")
        .distinct()
    )
    mismatched = timeline.join(logged, ["cluster", "group_id"], how="inner").where(
        F.col("p").cast("int") != F.col("coordinator_partition")
    )
    assert timeline.count() > 0 and mismatched.count() == 0
    assert timeline.where(F.col("duration_ms") < 0).count() == 0
    statuses = {r[0] for r in table(spark, config, "consumer_status").select("status").collect()}
    assert statuses <= {"OK", "WARN", "STOP", "STALL", "REWIND"} and "OK" in statuses
    lag = table(spark, config, "lag_distribution").where(day)
    assert lag.where(F.col("lag_p50") > F.col("lag_p99")).count() == 0
    assert (
        lag.where(
            F.aggregate("histogram", F.lit(0).cast("long"), lambda a, b: a + b) != F.col("samples")
        ).count()
        == 0
    )


def test_the_sample_share_and_streams_groups_reach_their_tables(spark, nightly):
    """Given data/sample's lab cluster with its share group (three workers on every
    partition of share-jobs) and its streams group (a member restarted at 03:00 with a
    new member id, generate/share_streams.py), Then the share group has its lag
    distribution of share-jobs (every sample's lag unknown: 4.1 prints none) and no
    consumer status, the streams group its task movements, the restart's among them,
    moving active and standby tasks, and neither a consumer assignor's replay."""
    config, *_ = nightly
    day = F.col("date") == F.lit(DAY)

    def rows(name, group, where=day):
        return table(spark, config, name).where(where & (F.col("group_id") == group)).collect()

    (lag,) = rows("lag_distribution", SHARE_GROUP)
    assert (lag["cluster"], lag["topic"]) == ("lab", SHARE_TOPIC)
    # The lab runs Kafka 4.1, whose share tool prints no LAG (KIP-1226 came in 4.2):
    # every sample of the day's 31 captures x 4 partitions is an unknown lag.
    assert (lag["partitions"], lag["samples"], lag["unknown_lag_samples"]) == (4, 0, 124)
    assert rows("consumer_status", SHARE_GROUP, F.lit(True)) == []
    for name in ("recommendations", "stickiness", "replay_metrics"):
        assert rows(name, SHARE_GROUP, F.lit(True)) == [], name
        assert rows(name, STREAMS_GROUP, F.lit(True)) == [], name
    moves = rows("task_movements", STREAMS_GROUP, F.lit(True))
    assert moves and {r["cluster"] for r in moves} == {"lab"}
    assert any(r["active_moved"] > 0 and r["standby_moved"] > 0 and r["left"] for r in moves)
    assert rows("task_movements", SHARE_GROUP, F.lit(True)) == []


def full_topic_history(spark, config, run_date):
    """The replay's topic history before it was cut: every topics capture up to the
    run date, collected whole."""
    counts = (
        table(spark, config, "topic_partitions")
        .where(F.col("capture_date") <= F.lit(run_date))
        .groupBy("cluster", "captured_at", "topic")
        .agg((F.max("partition") + 1).alias("count"))
        .collect()
    )
    history = {}
    for r in counts:
        history.setdefault(r["cluster"], {}).setdefault(r["captured_at"], {})[r["topic"]] = r[
            "count"
        ]
    return {c: sorted(by_time.items()) for c, by_time in history.items()}


def test_the_replay_with_the_cut_topic_history_equals_the_replay_with_all_of_it(spark, nightly):
    """Every silver row of the day (every group, every column) is what the replay gives
    with every topics capture up to the run date, as it was shipped before."""
    config, *_ = nightly
    full = full_topic_history(spark, config, DAY)
    cut = replay.topic_history(spark, config, DAY)
    assert set(cut) == set(full)
    assert all(dict(full[c])[at] == counts for c in cut for at, counts in cut[c])
    function = replay.group_function(spark, config, DAY, default_assignors(), full)
    result = replay.per_group(spark, config, DAY, function).cache()
    rows = tagged.row_counts(result)
    frames = tagged.table_frames(result, silver.TABLES, rows, lambda _: 1)
    for name, expected in frames.items():
        stored = table(spark, config, name).where(F.col("event_date") == F.lit(DAY))
        # The stored columns carry their comments (table_docs.py), the replay's frames none.
        assert_df_equality(
            stored, expected, ignore_row_order=True, ignore_nullable=True, ignore_metadata=True
        )
    result.unpersist()


def test_summary_and_report(nightly):
    config, counts, lines = nightly
    events = counts["replay"]["rebalance_events"]
    head = re.match(
        rf"fleet_rebalance {DAY}: 26 groups analysed, (\d+) rebalances .* \+ (\d+) initial joins;",
        lines[0],
    )
    assert head and int(head[1]) + int(head[2]) == events
    assert lines[1].startswith("Groups that need attention: ")
    assert "; Changes to make: " in lines[1]
    assert lines[2].split() == [
        "group", "Burrow", "rebalances", "paused", "(partition-s)", "change", "saves"
    ]  # fmt: skip
    first = lines[3].split()[0].split("/", 1)[1]  # the first group named
    html = (Path(config.warehouse) / "reports" / f"{DAY}.html").read_text(encoding="utf-8")
    assert html.count("<svg") >= 7
    assert "Rebalance timeline" in html and first in html
    assert "<h2 id='kip848-migration'>KIP-848 migration</h2>" in html and "First to move" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")  # self-contained


def test_a_failing_step_is_named(spark, tmp_path):
    config = Config(raw_root=str(tmp_path / "nothing"), warehouse=str(tmp_path / "w"))
    with pytest.raises(
        StepFailed, match=r"step ingest failed for 2026-11-20: raw_root .*: no such directory"
    ):
        run_steps(spark, config, DAY)


def test_a_date_without_captures_fails_ingest(spark, tmp_path):
    config = Config(raw_root=str(PROJECT / "data" / "sample"), warehouse=str(tmp_path / "w"))
    with pytest.raises(StepFailed, match=r"no capture files for 2026-12-01 under .*sample"):
        run_steps(spark, config, dt.date(2026, 12, 1))


def test_the_migration_plan_lists_every_classic_group_of_the_sample(spark, nightly):
    # Every classic group group_health knows has one plan row with a wave or a blocker;
    # a group already on the consumer protocol has none; the order is a ranking.
    config, *_ = nightly
    day = F.col("date") == F.lit(DAY)
    keys = ["cluster", "group_id"]
    health = table(spark, config, "group_health").where(day)
    health = health.where(~F.col("group_id").isin(SHARE_GROUP, STREAMS_GROUP))  # not classic
    plan = table(spark, config, "protocol_migration_plan").where(day)
    rows = plan.collect()
    assert len(rows) == plan.select(*keys).distinct().count() > 0
    moved = health.where(F.col("protocol") == "consumer").select(*keys)
    assert plan.join(moved, keys, "inner").count() == 0
    assert health.join(moved, keys, "left_anti").join(plan, keys, "left_anti").count() == 0
    assert all(r["wave"] is not None or r["blockers"] for r in rows)
    orders = sorted(r["migration_order"] for r in rows if r["wave"] is not None)
    assert orders == list(range(1, len(orders) + 1))
    verdicts = {"ready", "ready_with_checks", "blocked", "not_applicable"}
    assert {r["readiness"] for r in rows} <= verdicts
