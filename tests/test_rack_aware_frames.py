"""The rack_aware change through the Spark glue: recommendations.cross_zone_facts (the
cross_zone_traffic row and the replay of its rack-aware assignor), final_changes weighing
it beside the assignor choice, and group_health mirroring its columns. Tiny frames; the
rule itself is test_rack_aware_change.py's."""

from __future__ import annotations

import pytest
from chispa import assert_df_equality
from pyspark.sql import Row
from test_rack_aware_change import traffic
from test_recommendations import DAY, context, declared, rollups

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.changes import Limits
from fleet_rebalance.metrics.recommendations import (
    cross_zone_facts,
    final_changes,
    recommendations,
)
from fleet_rebalance.pipeline import gold

pytestmark = pytest.mark.spark

GB = 10**9
LIMITS = Limits.of(MetricsConfig())
# kip848: a consumer-protocol group that keeps uniform, its reads crossing 120.5 GB a day
# (12.3 GB even with follower fetching); rr: a roundrobin group the assignor rule moves
# to sticky (26 fewer paused partitions, 2.2 times the threshold) whose cooperative-sticky
# replay keeps 200 GB a day in zone (4 times; follower fetching alone 100 GB); eager:
# range to cooperative-sticky (12
# fewer, just enough) with no cross_zone_traffic row; small: keeps range, 3.2 GB a day.
ROLLUPS = {
    "kip848": {
        "uniform": (5, 1, 2.0, 1.0),
        "cooperative-sticky": (2, 1, 1.0, 1.0),
        "observed": (5, 1, 2.0, 1.0, "cooperative"),
    },
    "rr": {
        "roundrobin": (30, 1, 2.0, 1.0),
        "sticky": (4, 1, 2.0, 1.0),
        "cooperative-sticky": (6, 1, 2.5, 1.0),
        "observed": (30, 1, 2.0, 1.0),
    },
    "eager": {
        "range": (15, 1, 3.9, 0.5),
        "cooperative-sticky": (3, 1, 3.5, 1.0),
        "observed": (15, 1, 3.9, 0.5),
    },
    "small": {"range": (6, 1, 1.0, 1.0), "observed": (6, 1, 1.0, 1.0)},
}
DECLARED = {"kip848": "uniform", "rr": "roundrobin", "eager": "range", "small": "range"}
CONTEXT = {
    "kip848": ("consumer", "consumer_groups", []),
    **{g: ("classic", None, []) for g in ("rr", "eager", "small")},
}
TRAFFIC = {  # group -> (protocol, leader, follower, rack-aware assignor, its saving)
    "kip848": ("consumer", 120_500_000_000, 12_300_000_000, None, 108_200_000_000),
    "rr": ("classic", 212_300_000_000, 112_300_000_000, "cooperative-sticky", 200 * GB),
    "small": ("classic", 4 * GB, GB, "range", 3_200_000_000),
}


def traffic_frame(spark):
    schema = gold.TABLES["cross_zone_traffic"]
    rows = []
    for group, (protocol, leader, follower, assignor, saving) in TRAFFIC.items():
        cells = {
            "cluster": "c",
            "group_id": group,
            "date": DAY,
            **traffic(protocol, assignor, saving, leader, follower),
        }
        rows.append(Row(**({f.name: None for f in schema.fields} | cells)))
    return spark.createDataFrame(rows, schema)


@pytest.fixture(scope="module")
def decided(spark):
    """(cross_zone_facts' frame, final_changes' frame) over ROLLUPS and TRAFFIC, each
    group with one scale_out rebalance."""
    sticky, skewed = rollups(spark, ROLLUPS)
    groups = context(spark, CONTEXT)
    chosen = recommendations(sticky, skewed, declared(spark, DECLARED), groups)
    moved = spark.createDataFrame(
        [("c", g, DAY, 2, "scale_out", None, None, None) for g in ROLLUPS],
        "cluster string, group_id string, date date, event_seq int, cause string,"
        " departed string, returned string, away_ms long",
    )
    replayed = spark.createDataFrame(
        [],
        "cluster string, group_id string, event_date date, event_seq int, assignor string,"
        " paused_partitions long, paused_partition_seconds double, messages_delayed long",
    )
    stuck = spark.createDataFrame(
        [],
        "cluster string, group_id string, date date, topic string, partition int,"
        " offset long, lag long, since timestamp",
    )
    facts = groups.selectExpr("*", "CAST(NULL AS BIGINT) AS max_lag")
    cross_zone = cross_zone_facts(traffic_frame(spark), sticky, skewed)
    final = final_changes(
        chosen, moved, replayed, stuck, facts, LIMITS, gold.TABLES["recommendations"], cross_zone
    )
    return cross_zone, final


def test_cross_zone_facts_carry_the_row_and_the_rack_aware_assignors_replay(spark, decided):
    """Given: the three groups' cross_zone_traffic rows. Then: the columns the rule reads,
    and the replay of the rack-aware assignor where there is one (rr's cooperative-sticky:
    6 paused partitions, spread 1, skew 2.5, stickiness 1.0), null where there is none."""
    cross_zone, _ = decided
    got = cross_zone.select(
        "group_id",
        "rack_aware_assignor",
        "rack_aware_saving_bytes",
        "rack_aware_paused_partitions",
        "rack_aware_max_count_spread",
        "rack_aware_mean_lag_skew",
        "rack_aware_stickiness",
    )
    want = spark.createDataFrame(
        [
            ("kip848", None, 108_200_000_000, None, None, None, None),
            ("rr", "cooperative-sticky", 200 * GB, 6, 1, 2.5, 1.0),
            ("small", "range", 3_200_000_000, 6, 1, 1.0, 1.0),
        ],
        "group_id string, rack_aware_assignor string, rack_aware_saving_bytes long,"
        " rack_aware_paused_partitions long, rack_aware_max_count_spread int,"
        " rack_aware_mean_lag_skew double, rack_aware_stickiness double",
    )
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)


def test_final_changes_weigh_the_cross_zone_saving_beside_the_assignor_choice(spark, decided):
    """Given: the four groups. Then: kip848 told follower fetching (108.2 GB, 2.164);
    rr told to switch to cooperative-sticky rack-aware (4 times its threshold beats
    sticky's 2.2), its recommended side cooperative-sticky's replay; eager keeps its
    assignor change (no cross_zone_traffic row: no saving in bytes, null); small keeps
    range with 0 bytes saved."""
    _, final = decided
    got = final.select(
        "group_id",
        "change_kind",
        "recommended_assignor",
        "recommended_paused_partitions",
        "paused_partitions_delta",
        "mean_lag_skew_delta",
        "paused_partitions_saved",
        "cross_zone_bytes_saved",
        "cross_zone_cost_saved",
    )
    want = spark.createDataFrame(
        [
            ("kip848", "rack_aware", "uniform", 5, 0, 0.0, None, 108_200_000_000, 2.164),
            ("rr", "rack_aware", "cooperative-sticky", 6, -24, 0.5, None, 200 * GB, 4.0),
            ("eager", "assignor", "cooperative-sticky", 3, -12, -0.4, 12, None, None),
            ("small", "keep", "range", 6, 0, 0.0, 0, 0, 0.0),
        ],
        "group_id string, change_kind string, recommended_assignor string,"
        " recommended_paused_partitions long, paused_partitions_delta long,"
        " mean_lag_skew_delta double, paused_partitions_saved long,"
        " cross_zone_bytes_saved long, cross_zone_cost_saved double",
    )
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)
    assert final.schema == gold.TABLES["recommendations"]
    rows = {r["group_id"]: r.asDict() for r in final.collect()}
    assert rows["rr"]["reason"].endswith(
        "; it saves 200.0 GB/day, 4.00 at zones.price_per_gb 0.02; that is 4.0 times its "
        "threshold, more than switching to sticky (26 paused partitions: 2.2 times its own)"
    )
    assert rows["rr"]["prerequisites"].startswith(
        "two-bounce rolling upgrade (KIP-429): roll every consumer with client.rack=<zone> and "
        "partition.assignment.strategy=cooperative-sticky,roundrobin"
    )
    assert rows["small"]["reason"].endswith(
        "below the threshold (50.0 GB/day, metrics.change_min_cross_zone_gb_saved: 1.00 at "
        "zones.price_per_gb 0.02)"
    )


def test_group_health_mirrors_the_rack_aware_change(spark):
    """Given: a recommendations row telling rack_aware (108.2 GB, 2.164 a day). Then:
    group_health's change columns are its own, the bytes and cost included."""
    from fleet_rebalance.metrics.attention import Limits as AttentionLimits
    from fleet_rebalance.metrics.group_health import group_health

    def frame(name, rows):
        schema = gold.TABLES[name]
        full = [{f.name: None for f in schema.fields} | r for r in rows]
        return spark.createDataFrame([Row(**r) for r in full], schema)

    g = {"cluster": "c", "group_id": "kip848", "date": DAY}
    told = g | {
        "compared_with": "uniform",
        "change_kind": "rack_aware",
        "protocol": "consumer",
        "reason": "cross-zone reads: ...",
        "prerequisites": "client.rack=<zone> ...",
        "cross_zone_bytes_saved": 108_200_000_000,
        "cross_zone_cost_saved": 2.164,
    }
    tables = {
        name: frame(name, [told] if name == "recommendations" else [])
        for name in gold.TABLES
        if name not in ("group_health", "protocol_migration_plan")
    }
    limits = AttentionLimits.of(MetricsConfig())
    health = group_health(tables, limits, gold.TABLES["group_health"])
    [row] = health.collect()
    assert (row["change_kind"], row["cross_zone_bytes_saved"], row["cross_zone_cost_saved"]) == (
        "rack_aware",
        108_200_000_000,
        2.164,
    )
    assert (row["change_reason"], row["prerequisites"]) == (
        "cross-zone reads: ...",
        "client.rack=<zone> ...",
    )
