"""group_health: why a group needs attention (pure), the table from tiny gold tables
(Spark), and on data/sample, every number it and the summary show equal to the tables
they come from."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.attention import Limits, attention, causes_text, hms

DAY = dt.date(2026, 11, 20)
LIMITS = Limits.of(MetricsConfig())
THREE_REBALANCES = dataclasses.replace(LIMITS, rebalances=3)


def row(**values):
    base = {
        "last_status": "OK",
        "worst_status": "OK",
        "partitions": 12,
        "non_ok_partitions": 0,
        "rebalances": 0,
        "rebalances_by_cause": {},
        "paused_partition_seconds": None,
        "mean_lag_skew": None,
        "max_count_spread": 0,
        "max_lag": 0,
    }
    return {**base, **values}


def test_a_healthy_group_needs_nothing():
    assert attention(row(), LIMITS) == (0, [])
    assert attention(row(last_status=None, worst_status=None), LIMITS) == (0, [])


def test_burrow_err_at_the_last_capture_comes_first_with_the_worst_of_the_day():
    severity, reasons = attention(
        row(last_status="ERR", worst_status="STOP", non_ok_partitions=3), LIMITS
    )
    assert severity == 3
    assert reasons == [
        "Burrow ERR at the last capture: 3 of 12 partitions not OK (worst of the day STOP)"
    ]
    assert attention(row(last_status="WARN", worst_status="WARN", non_ok_partitions=1), LIMITS)[
        1
    ] == ["Burrow WARN at the last capture: 1 of 12 partitions not OK"]
    assert attention(row(last_status="WARN", worst_status="WARN"), LIMITS)[0] == 2


def test_a_stuck_partition_that_recovered_is_still_named_a_passing_warn_is_not():
    assert attention(row(worst_status="STALL"), LIMITS) == (
        1,
        ["Burrow STALL earlier in the day, OK at the last capture"],
    )
    assert attention(row(worst_status="WARN"), LIMITS) == (0, [])


def test_heavy_rebalancing_names_the_causes_and_the_paused_time():
    heavy = row(
        rebalances=9,
        rebalances_by_cause={"poll_timeout": 4, "deploy_restart": 5},
        paused_partition_seconds=3723.4,
    )
    assert attention(heavy, LIMITS) == (
        1,
        ["9 rebalances (5 deploy_restart, 4 poll_timeout), 3,723.4 paused partition-seconds"],
    )
    # Below the limit, or with no log to time it.
    assert attention(row(rebalances=5, rebalances_by_cause={"scale_in": 5}), LIMITS) == (0, [])
    untimed = row(rebalances=6, rebalances_by_cause=[("scale_in", 6)])
    assert attention(untimed, LIMITS)[1] == ["6 rebalances (6 scale_in)"]


def test_lag_skew_counts_only_where_there_is_lag_to_skew():
    skewed = row(mean_lag_skew=3.5, max_lag=25_000)
    assert attention(skewed, LIMITS) == (
        1,
        [
            "mean lag skew 3.50: its most lagging member holds 3.50x the mean member's lag "
            "(partition lag up to 25,000 messages)"
        ],
    )
    assert attention(row(mean_lag_skew=5.0, max_lag=12), LIMITS) == (0, [])
    assert attention(row(mean_lag_skew=1.99, max_lag=25_000), LIMITS) == (0, [])
    assert attention(row(mean_lag_skew=float("nan"), max_lag=25_000), LIMITS) == (0, [])


def test_unbalanced_counts():
    assert attention(row(max_count_spread=3.0), LIMITS) == (
        1,
        ["unbalanced: one member owns up to 3 partitions more than another"],
    )
    assert attention(row(max_count_spread=1), LIMITS) == (0, [])


def test_human_time_and_cause_lists():
    assert [hms(v) for v in (0, 7.4, 59.6, 3600, 93_790, None, float("nan"))] == [
        "0:00:00",
        "0:00:07",
        "0:01:00",
        "1:00:00",
        "26:03:10",
        "n/a",
        "n/a",
    ]
    assert causes_text({"b": 2, "a": 2, "c": 7}) == "7 c, 2 a, 2 b"
    assert causes_text(None) == ""


# -- the table from tiny gold tables -------------------------------------------------------


@pytest.mark.spark
def test_group_health_joins_every_group_any_table_knows(spark):
    from pyspark.sql import Row

    from fleet_rebalance.metrics.group_health import group_health
    from fleet_rebalance.pipeline import gold

    def frame(name, rows):
        schema = gold.TABLES[name]
        full = [{f.name: None for f in schema.fields} | r for r in rows]
        return spark.createDataFrame([Row(**r) for r in full], schema)

    g = {"cluster": "c", "date": DAY}
    tables = {
        "stickiness": frame(
            "stickiness",
            [
                g
                | {
                    "group_id": "busy",
                    "assignor": "observed",
                    "paused_partitions": 40,
                    "paused_partition_seconds": 80.5,
                },
                g | {"group_id": "busy", "assignor": "range", "paused_partitions": 99},
            ],
        ),
        "skew": frame(
            "skew",
            [
                g
                | {
                    "group_id": "busy",
                    "assignor": "observed",
                    "max_count_spread": 2,
                    "mean_lag_skew": 1.5,
                }
            ],
        ),
        "consumer_status": frame(
            "consumer_status",
            [
                g
                | {
                    "group_id": "lagging",
                    "partition": p,
                    "status": s,
                    "group_status": "ERR",
                    "group_worst_status": "STOP",
                }
                for p, s in enumerate(["OK", "STOP", "WARN"])
            ],
        ),
        "rebalance_causes": frame(
            "rebalance_causes",
            [
                g | {"group_id": "busy", "event_seq": i, "cause": c}
                for i, c in enumerate(["scale_in", "poll_timeout", "poll_timeout"], start=1)
            ],
        ),
        "rebalance_timeline": frame(
            "rebalance_timeline", [g | {"group_id": "busy", "generation": n} for n in range(4)]
        ),
        "lag_distribution": frame(
            "lag_distribution",
            [
                g | {"group_id": "lagging", "topic": t, "lag_max": m, "time_lag_max_seconds": s}
                for t, m, s in [("a", 10, 5.0), ("b", 7000, 120.0)]
            ],
        ),
        "recommendations": frame(
            "recommendations",
            [
                g
                | {
                    "group_id": "busy",
                    # What the group runs is measured on observed (its declared
                    # assignor was not replayed): range's 99 is no baseline.
                    "compared_with": "observed",
                    "change_kind": "static_membership",
                    "protocol": "classic",
                    "rebalances_saved": 1,
                    "reason": "why",
                }
            ],
        ),
    }
    health = group_health(tables, THREE_REBALANCES, gold.TABLES["group_health"])
    assert health.schema == gold.TABLES["group_health"]
    rows = {r["group_id"]: r.asDict() for r in health.collect()}
    assert set(rows) == {"busy", "lagging"}
    busy, lagging = rows["busy"], rows["lagging"]
    assert (busy["rebalances"], busy["rebalances_by_cause"], busy["generations_logged"]) == (
        3,
        {"poll_timeout": 2, "scale_in": 1},
        4,
    )
    assert (busy["paused_partitions"], busy["paused_partition_seconds"]) == (40, 80.5)
    assert (busy["change_kind"], busy["rebalances_saved"], busy["change_reason"]) == (
        "static_membership",
        1,
        "why",
    )
    assert busy["severity"] == 1 and busy["attention"] == [
        "3 rebalances (2 poll_timeout, 1 scale_in), 80.5 paused partition-seconds",
        "unbalanced: one member owns up to 2 partitions more than another",
    ]
    assert (lagging["last_status"], lagging["worst_status"]) == ("ERR", "STOP")
    assert (lagging["partitions"], lagging["non_ok_partitions"]) == (3, 2)
    assert (lagging["max_lag"], lagging["max_time_lag_seconds"]) == (7000, 120.0)
    assert (lagging["rebalances"], lagging["generations_logged"]) == (0, 0)
    assert lagging["rebalances_by_cause"] is None and lagging["change_kind"] is None
    assert lagging["severity"] == 3
    assert lagging["epoch_bumps"] is None  # no convergence table: unknown, not 0

    # With convergence_frame's rows: its columns, and a stuck member as a reason.
    from fleet_rebalance.metrics.convergence_frame import SCHEMA

    tables["convergence"] = spark.createDataFrame(
        [("c", "lagging", DAY, 7, 5, 9.9, 5.2, 1, 2)], SCHEMA
    )
    health = group_health(tables, THREE_REBALANCES, gold.TABLES["group_health"])
    lagging = {r["group_id"]: r.asDict() for r in health.collect()}["lagging"]
    assert (lagging["epoch_bumps"], lagging["epochs_converged"]) == (7, 5)
    assert (lagging["convergence_max_seconds"], lagging["convergence_median_seconds"]) == (9.9, 5.2)
    assert (lagging["members_stuck_reconciling"], lagging["classic_members"]) == (1, 2)
    assert lagging["attention"][-1].startswith("1 KIP-848 member stuck reconciling")


def test_a_member_stuck_reconciling_needs_attention():
    assert attention(row(members_stuck_reconciling=None), LIMITS) == (0, [])
    assert attention(row(members_stuck_reconciling=0), LIMITS) == (0, [])
    severity, reasons = attention(row(members_stuck_reconciling=2), LIMITS)
    assert severity == 1 and reasons[0].startswith("2 KIP-848 members stuck reconciling")


# -- on data/sample ------------------------------------------------------------------------


@pytest.mark.spark
def test_group_health_and_the_summary_agree_with_the_tables(spark, clean_nightly):
    import pyspark.sql.functions as F

    from fleet_rebalance.config import Config
    from fleet_rebalance.generate.share_streams import SHARE_GROUP, STREAMS_GROUP
    from fleet_rebalance.report.facts import gather
    from fleet_rebalance.report.summary import summary_lines
    from fleet_rebalance.storage import read_table

    def table(name):
        return read_table(spark, str(clean_nightly / name))

    keys = ["cluster", "group_id"]
    health = table("group_health").where(F.col("date") == F.lit(DAY))
    groups = table("recommendations").select(*keys).union(table("consumer_status").select(*keys))
    # The lab's share and streams groups get neither (no consumer assignor replays them,
    # no committed offsets), but their health: their lag and rebalances.
    own = table("lag_distribution").where(F.col("group_id").isin(SHARE_GROUP, STREAMS_GROUP))
    groups = groups.union(own.select(*keys))
    assert health.count() == health.select(*keys).distinct().count() == groups.distinct().count()
    causes = table("rebalance_causes").groupBy(*keys).agg(F.count(F.lit(1)).alias("n"))
    joined = health.join(causes, keys, "left").fillna(0, ["n"])
    assert joined.where(F.col("rebalances") != F.col("n")).isEmpty()
    sizes = health.select(
        *keys,
        F.aggregate(
            F.map_values(F.coalesce("rebalances_by_cause", F.create_map())),
            F.lit(0),
            lambda a, b: a + b,
        ).alias("total"),
        "rebalances",
    )
    assert sizes.where(F.col("total") != F.col("rebalances")).isEmpty()
    # What the group runs is the recommendation's baseline: its paused partitions agree.
    baseline = table("recommendations").select(
        *keys, F.col("compared_with").alias("assignor"), "declared_paused_partitions"
    )
    runs = (
        table("stickiness")
        .join(baseline, [*keys, "assignor"], "inner")
        .select(*keys, F.col("paused_partition_seconds").alias("seconds"), "paused_partitions",
                "declared_paused_partitions")
    )  # fmt: skip
    priced = health.drop("paused_partitions").join(runs, keys, "inner")
    assert priced.where(~F.col("paused_partition_seconds").eqNullSafe(F.col("seconds"))).isEmpty()
    assert priced.where(
        ~F.col("paused_partitions").eqNullSafe(F.col("declared_paused_partitions"))
    ).isEmpty()
    recs = table("recommendations").select(*keys, F.col("change_kind").alias("kind"))
    assert health.join(recs, keys).where(F.col("change_kind") != F.col("kind")).isEmpty()
    needing = health.where(F.col("severity") > 0)
    assert needing.where(F.size("attention") == 0).isEmpty()
    assert health.where(F.col("severity") == 0).where(F.size("attention") > 0).isEmpty()

    config = Config(raw_root="data/sample", warehouse=str(clean_nightly))
    facts = gather(spark, config, DAY)
    lines = summary_lines(facts)
    events = table("rebalance_events")
    initial = events.where(F.col("trigger") == "initial").count()
    moved = events.where(F.col("trigger") != "initial")
    logged = moved.where(F.col("source") != "captures").count()
    generations = table("rebalance_timeline").count()
    assert lines[0].startswith(
        f"fleet_rebalance {DAY}: {facts.groups} groups analysed, {moved.count()} rebalances "
        f"({logged} from the coordinator logs, {moved.count() - logged} seen only by "
        f"captures) + {initial} initial joins; the logs' {generations} generations = "
        f"{logged} replayed + {facts.follow_ups} cooperative follow-up rounds + "
    )
    assert lines[1].startswith(f"Groups that need attention: {needing.count()} of {facts.groups};")
    listed = {(r.cluster, r.group_id) for r in facts.listed.itertuples()}
    for r in facts.attention.itertuples():
        assert (r.cluster, r.group_id) in listed
    kinds = {r["change_kind"]: r["count"] for r in health.groupBy("change_kind").count().collect()}
    assert facts.changes_by_kind == {k: n for k, n in kinds.items() if k is not None}
    # The rolling deploys need attention for their restarts.
    reasons = {(r["cluster"], r["group_id"]): r["attention"] for r in needing.collect()}
    for key in (("prod-east", "search-processor-1"), ("prod-west", "orders-enricher-1")):
        assert any("deploy_restart" in why for why in reasons[key]), key
