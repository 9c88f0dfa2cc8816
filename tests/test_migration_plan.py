"""protocol_migration_plan's Spark glue on tiny DataFrames: which groups it lists, what
it joins from each table, and the fleet order it writes."""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.metrics.migration_plan import migration_plan
from fleet_rebalance.pipeline import gold

DAY = dt.date(2026, 11, 20)
AT = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def test_the_plan_lists_every_classic_group_with_its_wave_or_blocker(spark):
    health = spark.createDataFrame(
        [
            ("prod", "orders", DAY, 4, 4, 400, 600.0, 1),
            ("prod", "custom", DAY, 2, 2, 80, 100.0, 0),
            ("prod", "static", DAY, 1, 1, 10, 5.0, 0),
            ("prod", "kip848", DAY, 3, 3, 5, 1.0, 0),
            ("prod", "assign-only", DAY, 0, 0, None, None, None),
        ],
        "cluster string, group_id string, date date, rebalances int, generations_logged int,"
        " paused_partitions long, paused_partition_seconds double, max_count_spread int",
    )
    stickiness = spark.createDataFrame(
        [
            ("prod", "orders", DAY, "uniform", 40, 60.0),
            ("prod", "orders", DAY, "range", 400, 600.0),
            ("prod", "custom", DAY, "uniform", 20, 30.0),
            ("prod", "static", DAY, "uniform", 10, 5.0),
        ],
        "cluster string, group_id string, date date, assignor string, paused_partitions long,"
        " paused_partition_seconds double",
    )
    skew = spark.createDataFrame(
        [("prod", "orders", DAY, "uniform", 1)],
        "cluster string, group_id string, date date, assignor string, max_count_spread int",
    )
    states = spark.createDataFrame(
        [
            ("prod", "orders", DAY, AT, "range"),
            ("prod", "custom", DAY, AT, "com.acme.StickyRackAssignor"),
            ("prod", "static", DAY, AT, "cooperative-sticky"),
            ("prod", "kip848", DAY, AT, "uniform"),
        ],
        "cluster string, group_id string, capture_date date, captured_at timestamp,"
        " assignment_strategy string",
    )
    members = spark.createDataFrame(
        [
            ("prod", "orders", DAY, AT, "c-1", None),
            ("prod", "orders", DAY, AT, "c-2", None),
            ("prod", "custom", DAY, AT, "c-1", None),
            ("prod", "static", DAY, AT, "s-1", "pod-1"),
            ("prod", "static", DAY, AT, "s-2", "pod-2"),
        ],
        "cluster string, group_id string, capture_date date, captured_at timestamp,"
        " consumer_id string, group_instance_id string",
    )
    context = spark.createDataFrame(
        [
            ("prod", "orders", DAY, "classic", "consumer_groups", []),
            ("prod", "custom", DAY, "classic", "consumer_groups", []),
            ("prod", "static", DAY, "classic", "consumer_groups", ["pod-1", "pod-2"]),
            ("prod", "kip848", DAY, "consumer", "consumer_groups", []),
        ],
        "cluster string, group_id string, date date, protocol string, brokers string,"
        " instance_ids array<string>",
    )
    schema = gold.TABLES["protocol_migration_plan"]
    plan = migration_plan(health, stickiness, skew, states, members, context, schema)
    assert plan.schema == schema
    rows = {r["group_id"]: r.asDict() for r in plan.collect()}
    assert set(rows) == {"orders", "custom", "static", "assign-only"}  # kip848 has moved
    orders = rows["orders"]
    assert (orders["readiness"], orders["wave"], orders["migration_order"]) == ("ready", 1, 1)
    assert (orders["paused_partitions_now"], orders["paused_partitions_uniform"]) == (400, 40)
    assert (orders["paused_partitions_saved"], orders["paused_partition_seconds_saved"]) == (
        360,
        540.0,
    )
    assert (orders["members"], orders["max_count_spread_uniform"]) == (2, 1)
    custom = rows["custom"]
    assert (custom["blockers"], custom["readiness"], custom["wave"]) == (
        ["custom_assignor"],
        "blocked",
        None,
    )
    assert custom["migration_order"] is None
    assert "com.acme.StickyRackAssignor cannot run under the consumer protocol" in custom["reason"]
    static = rows["static"]
    assert (static["cautions"], static["static_members"], static["wave"]) == (
        ["static_membership"],
        2,
        3,
    )
    assert static["migration_order"] == 2
    idle = rows["assign-only"]
    assert (idle["blockers"], idle["readiness"], idle["members"]) == (
        ["assign_only"],
        "not_applicable",
        0,
    )
    assert all(r["prerequisites"].startswith("clients that run") for r in rows.values())
