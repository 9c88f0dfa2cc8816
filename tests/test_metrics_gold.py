"""Gold transforms on tiny DataFrames with hand-computed answers."""

from __future__ import annotations

import datetime as dt

import pytest
from chispa import assert_df_equality

from fleet_rebalance.metrics.flapping import partition_flapping
from fleet_rebalance.metrics.offset_samples import offset_samples
from fleet_rebalance.metrics.rollups import skew, stickiness
from fleet_rebalance.metrics.timeline import coordinator_partition, rebalance_timeline
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.pipeline.metrics import consumer_status

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 10, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def frame(spark, schema, rows: list[dict]):
    return spark.createDataFrame(
        [tuple(r.get(f.name) for f in schema.fields) for r in rows], schema
    )


def offsets(spark, rows: list[dict]):
    defaults = {"cluster": "c", "group_id": "g", "topic": "t", "capture_date": DAY}
    filled = [{**defaults, "source_file": "f", "line_number": i, **r} for i, r in enumerate(rows)]
    return offset_samples(frame(spark, bronze.TABLES["offsets"], filled))


def metric_rows(spark, rows: list[dict]):
    base = {"cluster": "c", "group_id": "g", "event_date": DAY, "protocol": "eager"}
    return frame(spark, silver.TABLES["replay_metrics"], [{**base, **r} for r in rows])


def test_gold_schemas_match_transform_outputs(spark):
    empty_metrics = metric_rows(spark, [])
    assert set(stickiness(empty_metrics).columns) == set(gold.TABLES["stickiness"].fieldNames())
    assert set(skew(empty_metrics).columns) == set(gold.TABLES["skew"].fieldNames())


def test_stickiness_pools_the_day_and_skips_undefined_events(spark):
    rows = metric_rows(
        spark,
        [
            # kept 6 / (6 + 2); then an event with nothing to keep (stickiness null).
            dict(
                event_seq=1,
                assignor="sticky",
                kept=6,
                reassigned=2,
                orphaned=1,
                fresh=0,
                stickiness=0.75,
                revoked=2,
                rounds=1,
                paused_partitions=9,
                paused_partition_seconds=27.0,  # a 3 s rebalance
                conforms=True,
                differing_partitions=0,
                count_spread=1,
                count_max=3,
                lag_skew=1.5,
                lag_max_member=30,
            ),
            dict(
                event_seq=2,
                assignor="sticky",
                kept=0,
                reassigned=0,
                orphaned=0,
                fresh=4,
                stickiness=None,
                revoked=0,
                rounds=1,
                paused_partitions=4,
                conforms=None,
                differing_partitions=None,
                count_spread=2,
                count_max=4,
                lag_skew=None,
                lag_max_member=0,
            ),
        ],
    )
    got = stickiness(rows).collect()[0].asDict()
    assert got["events"] == 2 and got["kept"] == 6 and got["fresh"] == 4
    assert got["stickiness"] == pytest.approx(0.75)
    assert got["mean_stickiness"] == pytest.approx(0.75)
    assert got["paused_partitions"] == 13 and got["max_paused_partitions"] == 9
    assert (got["conforming_events"], got["nonconforming_events"]) == (1, 0)
    # Partition-seconds over the events a log times; none timed is unknown, not 0.
    assert (got["paused_partition_seconds"], got["timed_events"]) == (27.0, 1)
    untimed = stickiness(rows.where("event_seq = 2")).collect()[0]
    assert (untimed["paused_partition_seconds"], untimed["timed_events"]) == (None, 0)
    s = skew(rows).collect()[0].asDict()
    assert s["mean_count_spread"] == pytest.approx(1.5) and s["max_count_spread"] == 2
    assert s["unbalanced_events"] == 1 and s["max_partitions_per_member"] == 4
    assert s["mean_lag_skew"] == pytest.approx(1.5) and s["last_count_spread"] == 2
    assert s["last_lag_skew"] is None  # the day ended with no lag to be skewed


def _status_rows(partition: int, offsets_and_lags, owner: str | None = "m1") -> list[dict]:
    return [
        {
            "partition": partition,
            "captured_at": at(60 * i),
            "current_offset": o,
            "log_end_offset": o + lag,
            "lag": lag,
            "consumer_id": owner,
        }
        for i, (o, lag) in enumerate(offsets_and_lags)
    ]


def test_consumer_status_follows_burrows_rules(spark):
    rows = (
        _status_rows(0, [(10, 5), (20, 0), (30, 5)])  # lag was zero in the window
        + _status_rows(1, [(10, 5), (20, 6), (15, 9)])  # offset went back
        + _status_rows(2, [(10, 5), (10, 6), (10, 7)])  # owned, offset never moves
        + _status_rows(3, [(10, 5), (10, 6), (10, 7)], owner=None)  # nobody commits
        + _status_rows(4, [(10, 5), (20, 6), (30, 7)])  # moving, lag never shrinks
        + _status_rows(5, [(10, 7), (20, 6), (30, 5)])  # catching up
    )
    got = {
        r["partition"]: r.asDict()
        for r in consumer_status(offsets(spark, rows), DAY, intervals=3).collect()
    }
    assert {p: r["status"] for p, r in got.items()} == {
        0: "OK",
        1: "REWIND",
        2: "STALL",
        3: "STOP",
        4: "WARN",
        5: "OK",
    }
    assert got[1]["worst_status"] == "REWIND" and got[1]["worst_status_at"] == at(120)
    assert got[1]["windows"] == 3 and got[1]["non_ok_windows"] == 2  # WARN, then REWIND
    assert got[5]["current_lag"] == 5
    # Burrow caps a group's status at ERR; the worst partition status is kept beside it.
    assert {r["group_status"] for r in got.values()} == {"ERR"}
    assert {r["group_worst_status"] for r in got.values()} == {"REWIND"}


def test_consumer_status_windows_slide(spark):
    # With 2-entry windows the early rewind (20 -> 15) has left the last window.
    rows = _status_rows(0, [(20, 5), (15, 6), (25, 4), (30, 3)])
    (r,) = consumer_status(offsets(spark, rows), DAY, intervals=2).collect()
    assert (r["status"], r["worst_status"], r["group_status"]) == ("OK", "REWIND", "OK")


def test_consumer_status_of_a_group_spans_its_topics(spark):
    """Partitions are rated per topic (one call per cluster and topic), the group's
    status over all its topics: g's STALL on `t` and OK on `u`; h reads `t` too."""
    rows = (
        _status_rows(0, [(10, 5), (10, 6), (10, 7)])  # STALL
        + [r | {"topic": "u"} for r in _status_rows(0, [(10, 7), (20, 6), (30, 5)])]
        + [r | {"group_id": "h"} for r in _status_rows(1, [(10, 7), (20, 6), (30, 5)])]
    )
    got = {
        (r["group_id"], r["topic"]): r.asDict()
        for r in consumer_status(offsets(spark, rows), DAY, intervals=3).collect()
    }
    assert {k: r["status"] for k, r in got.items()} == {
        ("g", "t"): "STALL",
        ("g", "u"): "OK",
        ("h", "t"): "OK",
    }
    assert {k: (r["group_status"], r["group_worst_status"]) for k, r in got.items()} == {
        ("g", "t"): ("ERR", "STALL"),
        ("g", "u"): ("ERR", "STALL"),
        ("h", "t"): ("OK", "OK"),
    }


def test_partition_flapping_counts_owner_changes_per_assignor(spark):
    def owns(seq, member, *parts):
        return {
            "cluster": "c",
            "group_id": "g",
            "event_seq": seq,
            "assignor": "observed",
            "member_id": member,
            "event_date": DAY,
            "partitions": [{"topic": "t", "partition": p} for p in parts],
        }

    assignments = frame(
        spark,
        silver.TABLES["assignment_replay"],
        [owns(1, "A", 0, 1), owns(2, "B", 0), owns(3, "A", 0, 1)],
    )
    events = frame(
        spark,
        silver.TABLES["rebalance_events"],
        [{"cluster": "c", "group_id": "g", "event_seq": s, "event_date": DAY} for s in (1, 2, 3)],
    )
    got = partition_flapping(assignments, events).select(
        "partition", "events", "owner_changes", "distinct_owners", "unowned_events"
    )
    want = spark.createDataFrame(
        [(0, 3, 2, 2, 0), (1, 3, 0, 1, 1)],
        "partition int, events int, owner_changes int, distinct_owners int, unowned_events int",
    )
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)


# The recommendations tests are in test_recommendations.py.


def test_coordinator_partition_is_kafkas_abs_hash_mod_partitions():
    names = ["hello", "\U0001f600", "polygenelubricants", "billing-enricher-2", ""]
    got = [coordinator_partition(name, 50) for name in names]
    # Java: "hello".hashCode() = 99162322; the emoji is two UTF-16 units -> 1772899;
    # "polygenelubricants".hashCode() = Integer.MIN_VALUE, which Utils.abs maps to 0;
    # billing-enricher-2's log lines name __consumer_offsets-41.
    assert got == [22, 1772899 % 50, 0, 41, 0]


def _log(event, seconds, generation=None, group="g", member=None, reason=None, line="", broker=1):
    return {
        "cluster": "c",
        "broker": broker,
        "logged_at": at(seconds),
        "event": event,
        "group_id": group,
        "generation": generation,
        "member_id": member,
        "reason": reason,
        "line": line,
        "log_date": DAY,
    }


def test_rebalance_timeline_classic_and_consumer_protocol(spark):
    lines = [
        _log("prepare_rebalance", 0, 1, reason="member joined"),
        _log("stabilized", 2.5, 2, line="Stabilized group g generation 2 with 3 members"),
        _log("prepare_rebalance", 3600, 2, reason="removing member m on heartbeat expiration"),
        _log(
            "stabilized", 3601, 3, line="Stabilized group g generation 3 with 2 members", broker=2
        ),
        _log("member_left", 7200, group="h", member="m9"),
        _log("member_left", 7200.05, group="h", member="m8"),
        _log("epoch_bumped", 7200.1, 5, group="h"),
        _log("target_assignment", 7200.3, 5, group="h", reason="uniform"),
        _log("prepare_rebalance", 9000, 3, reason="leader rejoined"),  # never stabilized
    ]
    events = frame(spark, bronze.TABLES["coordinator_events"], lines)
    got = rebalance_timeline(events, DAY, 50).select(
        "group_id",
        "generation",
        "protocol",
        "duration_ms",
        "cause",
        "members_before",
        "members_after",
        "coordinator_broker",
    )
    want = spark.createDataFrame(
        [
            ("g", 2, "classic", 2500, "member joined", None, 3, 1),
            ("g", 3, "classic", 1000, "removing member m on heartbeat expiration", 3, 2, 1),
            ("g", 4, "classic", None, "leader rejoined", 2, None, 1),
            ("h", 5, "consumer", 200, "member_left x2", None, None, 1),
        ],
        "group_id string, generation int, protocol string, duration_ms long, cause string,"
        " members_before int, members_after int, coordinator_broker int",
    )
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)


def test_gold_frames_cover_every_documented_column(spark):
    assert set(gold.TABLES) == {
        "stickiness",
        "skew",
        "lag_distribution",
        "consumer_status",
        "partition_flapping",
        "recommendations",
        "rebalance_timeline",
        "rebalance_causes",
        "ownership_audit",
        "log_end_quarantine",
        "task_movements",
        "cross_zone_traffic",
        "group_health",
        "protocol_migration_plan",
    }
    for schema in gold.TABLES.values():
        assert schema.fieldNames()[:3] == ["cluster", "group_id", "date"]


def test_offset_samples_keep_one_file_per_group_capture(spark):
    def row(source, partition, lag, group="g"):
        return {
            "cluster": "c",
            "group_id": group,
            "topic": "t",
            "partition": partition,
            "lag": lag,
            "captured_at": at(0),
            "capture_date": DAY,
            "source_file": source,
            "line_number": partition,
        }

    rows = [
        row("a/offsets.txt", 0, 5),
        row("a/offsets.txt", 1, 6),
        row("a/export.jsonl", 0, 7),
        row("a/export.jsonl", 1, 8),
        row("a/export.jsonl", 0, 9, group="other"),
    ]
    got = offset_samples(frame(spark, bronze.TABLES["offsets"], rows))
    assert sorted((r["group_id"], r["partition"], r["lag"]) for r in got.collect()) == [
        ("g", 0, 5),
        ("g", 1, 6),
        ("other", 0, 9),  # offsets.txt sorts after export.jsonl
    ]
