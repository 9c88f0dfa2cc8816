"""recommendations on tiny rollups: the change a group can make within its protocol, keep
when nothing is better, the texts, and the static membership what-if; the protocol of a
group and what the captures tell of its brokers (protocols.py)."""

from __future__ import annotations

import datetime as dt

import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality

from fleet_rebalance.metrics.protocols import cluster_brokers, group_context, group_protocols
from fleet_rebalance.metrics.recommendations import declared_strategies, recommendations
from fleet_rebalance.pipeline import bronze, gold

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 10, 0)
PROTOCOL = {
    "range": "eager",
    "roundrobin": "eager",
    "sticky": "eager",
    "cooperative-sticky": "cooperative",
    "uniform": "cooperative",
}
EAGER_30 = (30, 1, 2.0, 1.0)  # an eager assignor pausing every partition


def rollups(spark, groups: dict[str, dict[str, tuple]]):
    """(stickiness, skew) from group -> assignor -> (paused, max count spread, mean lag
    skew, stickiness[, protocol, kept, events]); every group is on cluster c."""
    sticky, skewed = [], []
    for group, per_assignor in groups.items():
        for assignor, values in per_assignor.items():
            paused, spread, lag_skew, ratio, *rest = values
            protocol, kept, events = (*rest, *(None, 0, 3)[len(rest) :])
            protocol = protocol or PROTOCOL.get(assignor, "eager")
            sticky.append(("c", group, DAY, assignor, protocol, events, kept, paused, ratio))
            skewed.append(("c", group, DAY, assignor, spread, lag_skew))
    return (
        spark.createDataFrame(
            sticky,
            "cluster string, group_id string, date date, assignor string, protocol string,"
            " events int, kept long, paused_partitions long, stickiness double",
        ),
        spark.createDataFrame(
            skewed,
            "cluster string, group_id string, date date, assignor string,"
            " max_count_spread int, mean_lag_skew double",
        ),
    )


def declared(spark, assignors: dict[str, str | None]):
    return spark.createDataFrame(
        [("c", g, DAY, a) for g, a in assignors.items()],
        "cluster string, group_id string, date date, declared_assignor string",
    )


def context(spark, protocols: dict[str, tuple[str, str | None, list[str]]]):
    return spark.createDataFrame(
        [("c", g, DAY, *values) for g, values in protocols.items()],
        "cluster string, group_id string, date date, protocol string, brokers string,"
        " instance_ids array<string>",
    )


def what_if(spark, rows: dict[str, tuple[int, int, float | None]]):
    """The what-if's rows; messages delayed avoided: 40 per paused partition."""
    return spark.createDataFrame(
        [("c", g, DAY, *values, values[1] * 40) for g, values in rows.items()],
        "cluster string, group_id string, date date, rebalances_avoided int,"
        " paused_partitions_avoided long, paused_partition_seconds_avoided double,"
        " messages_delayed_avoided long",
    )


def by_group(frame) -> dict:
    return {r["group_id"]: r for r in frame.collect()}


# A classic eager group, a classic cooperative group that uniform would serve better, a
# KIP-848 group for which a classic assignor would do better, and a classic group whose
# best other candidate is worse than what it runs (prod-west/search-processor-2).
FLEET = {
    "eager": {
        "range": (15, 1, 3.9, 0.5),
        "roundrobin": (15, 1, 3.5, 1.0),
        "sticky": (15, 1, 3.5, 1.0),
        "cooperative-sticky": (3, 1, 3.5, 1.0),
        "uniform": (3, 1, 3.6, 1.0),
        "observed": (15, 1, 3.9, 0.5),
    },
    "coop": {
        "range": EAGER_30,
        "roundrobin": EAGER_30,
        "sticky": EAGER_30,
        "cooperative-sticky": (6, 1, 2.5, 1.0),
        "uniform": (3, 1, 2.0, 1.0),
        "observed": (6, 1, 2.5, 1.0, "cooperative"),
    },
    "kip848": {
        "range": EAGER_30,
        "roundrobin": EAGER_30,
        "sticky": EAGER_30,
        "cooperative-sticky": (2, 1, 1.0, 1.0),
        "uniform": (5, 1, 2.0, 1.0),
        "observed": (5, 1, 2.0, 1.0, "cooperative"),
    },
    "worse": {
        "range": (48, 0, 4.0, 1.0),
        "roundrobin": (48, 0, 2.925125, 1.0),
        "sticky": (48, 0, 2.925125, 1.0),
        "cooperative-sticky": (12, 0, 2.925125, 1.0),
        "uniform": (12, 0, 4.0, 1.0),
        "observed": (11, 0, 2.925125, 0.925926, "cooperative", 25, 3),
    },
}
DECLARED = {"eager": "range", "coop": "cooperative-sticky", "kip848": "uniform"}
DECLARED["worse"] = "cooperative-sticky"
NAN = float("nan")
# The other cases, all in the one recommendations() call of the module's `result`.
MORE = {
    # uniform and cooperative-sticky pause as many; their skews differ by < 0.01
    "close": {
        "range": (15, 1, 2.8565, 0.9),
        "cooperative-sticky": (3, 1, 2.8614, 1.0),
        "uniform": (3, 1, 2.8565, 1.0),
        "observed": (15, 1, 2.8565, 0.9),
    },
    # a KIP-848 group (known from its member ids) on server-side range, which the replay
    # does not run: its `range` is the classic one
    "srange": {
        "range": (60, 1, 1.0, 0.5),
        "cooperative-sticky": (2, 1, 1.0, 1.0),
        "uniform": (12, 1, 1.5, 1.0),
        "observed": (60, 1, 1.5, 0.7, "eager", 40),
    },
    "half": {  # NaN skew on the declared side
        "range": (15, 1, NAN, 0.5),
        "cooperative-sticky": (3, 1, 1.5, 1.0),
        "observed": (15, 1, NAN, 0.5),
    },
    "none": {  # no skew anywhere
        "range": (30, 1, None, None),
        "cooperative-sticky": (3, 1, None, 1.0),
        "observed": (3, 1, None, 1.0, "cooperative"),
    },
    "ratios": {
        "range": (15, 1, 1.1, 0.123456789),
        "cooperative-sticky": (3, 1, 1.23449999, 0.987654321),
        "observed": (15, 1, 1.1, 0.123456789),
    },
    "tie": {a: (6, 1, 1.0, 1.0) for a in ("range", "uniform", "observed")},
    "plugin": {  # its declared assignor was not replayed
        "range": (6, 1, None, 0.5),
        "sticky": (6, 1, 1.1, 0.8),
        "observed": (9, 3, 2.0, 0.1),
    },
    **{g: FLEET["coop"] for g in ("old", "serving", "unknown", "coop-static")},
    "eager-static": FLEET["eager"],
    "kip848-static": FLEET["kip848"],
    # its members already have group.instance.id: its restarts' what-if is no change
    "has-static": FLEET["eager"],
}
MORE_DECLARED = {
    **dict.fromkeys(("close", "srange", "half", "ratios"), "range"),
    **dict.fromkeys(("none", "old", "serving", "unknown", "coop-static"), "cooperative-sticky"),
    "tie": "uniform",
    "plugin": "com.acme:Mine",
    "eager-static": "range",
    "kip848-static": "uniform",
    "has-static": "range",
}
CONTEXT = {
    "srange": ("consumer", "consumer_groups", []),
    "old": ("classic", "classic_coordinator", []),
    "serving": ("classic", "consumer_groups", []),
    "unknown": ("classic", None, []),
    "has-static": ("classic", None, ["pod-0", "pod-1"]),
}
# Restarts that came back in time: 14 paused partitions avoided where the assignor
# change saves 12; 2 where nothing else is better; 3, as many as the migration saves.
WHAT_IF = {
    "eager-static": (4, 14, 37.5),
    "kip848-static": (1, 2, None),
    "coop-static": (2, 3, 9.0),
    "worse": (0, 0, 0.0),
    "has-static": (4, 14, 37.5),
}


@pytest.fixture(scope="module")
def result(spark):
    """(frame, rows by group) of one recommendations() call over FLEET and MORE."""
    sticky, skewed = rollups(spark, {**FLEET, **MORE})
    # Coordinator logs time every event at 2.5 s, but the "none" group's; each paused
    # partition delays 100 messages.
    timed = F.when(F.col("group_id") != "none", F.col("paused_partitions") * 2.5)
    sticky = sticky.withColumn("paused_partition_seconds", timed).withColumn(
        "messages_delayed", F.when(timed.isNotNull(), F.col("paused_partitions") * 100)
    )
    frame = recommendations(
        sticky,
        skewed,
        declared(spark, {**DECLARED, **MORE_DECLARED}),
        context(spark, CONTEXT),
        static_what_if=what_if(spark, WHAT_IF),
        static_session_timeout_s=600,
    ).cache()
    yield frame, by_group(frame)
    frame.unpersist()


def test_each_protocol_chooses_only_what_it_can_run(spark, result):
    """Given: the four groups of FLEET.
    Then: the eager group switches assignor; the cooperative one is told to migrate to
    the consumer protocol (never a plain swap to uniform); the KIP-848 group keeps its
    server-side assignor (never a classic one, however good); the last keeps what it
    runs, as every candidate is worse or no better.
    Expected: the rows below."""
    frame, _ = result
    got = frame.where(F.col("group_id").isin(*FLEET)).select(
        "group_id",
        "protocol",
        "change_kind",
        "declared_assignor",
        "recommended_assignor",
        "compared_with",
        "paused_partitions_saved",
        "rebalances_saved",
    )
    want = spark.createDataFrame(
        [
            ("eager", "classic", "assignor", "range", "cooperative-sticky", "range", 12, None),
            ("coop", "classic", "protocol_migration", "cooperative-sticky", "uniform",
             "cooperative-sticky", 3, None),
            ("kip848", "consumer", "keep", "uniform", "uniform", "uniform", 0, None),
            ("worse", "classic", "keep", "cooperative-sticky", "cooperative-sticky",
             "cooperative-sticky", 0, None),
        ],
        "group_id string, protocol string, change_kind string, declared_assignor string,"
        " recommended_assignor string, compared_with string, paused_partitions_saved long,"
        " rebalances_saved int",
    )  # fmt: skip
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)
    # The table's columns, and the brokers final_changes weighs a migration with.
    assert frame.columns == [*gold.TABLES["recommendations"].fieldNames(), "brokers"]


def test_the_texts_say_the_change_its_saving_and_what_it_takes(result):
    _, rows = result
    eager = rows["eager"]
    assert eager["reason"] == (
        "cooperative-sticky instead of range: pauses 12 fewer partitions over 3 replayed events"
        " (-80 %), 30.0 fewer partition-seconds, 1,200 fewer messages delayed, mean lag skew"
        " 3.50 vs 3.90; needs the two-bounce rolling upgrade (first beside the eager assignor,"
        " then alone)"
    )
    assert eager["messages_delayed_saved"] == 1200
    assert eager["prerequisites"] == (
        "two-bounce rolling upgrade (KIP-429), clients >= 2.4: roll every consumer with"
        " partition.assignment.strategy=cooperative-sticky,range (the group stays eager),"
        " then roll again with cooperative-sticky alone"
    )
    coop = rows["coop"]
    assert coop["reason"] == (
        "migrate to the consumer protocol (KIP-848) with uniform instead of"
        " cooperative-sticky: pauses 3 fewer partitions over 3 replayed events (-50 %), 7.5"
        " fewer partition-seconds, 300 fewer messages delayed, mean lag skew 2.00 vs 2.50; no"
        " classic assignor does better than cooperative-sticky"
    )
    assert coop["prerequisites"].startswith(
        "brokers and clients >= 4.0 (this cluster's release is not in the captures); the"
        " brokers' group.version feature >= 1"
    )
    for needed in ("group.protocol=consumer", "group.consumer.migration.policy"):
        assert needed in coop["prerequisites"]
    assert rows["kip848"]["reason"] == (
        "keep uniform: the group runs the consumer protocol (KIP-848), whose assignor is"
        " server-side (classic client assignors do not apply), and no replayed server-side"
        " assignor does better over 3 replayed events than its 5 paused partitions (max count"
        " spread 1, mean lag skew 2.00)"
    )
    worse = rows["worse"]
    assert worse["reason"] == (
        "keep cooperative-sticky: no classic assignor, nor uniform under the consumer"
        " protocol, does better over 3 replayed events than its 12 paused partitions (max count"
        " spread 0, mean lag skew 2.93)"
    )
    assert worse["prerequisites"] is None
    # Partition-seconds as the replay's timed rebalances give them (2.5 s each here).
    assert (eager["paused_partition_seconds_saved"], worse["paused_partition_seconds_saved"]) == (
        30.0,
        0.0,
    )
    assert rows["none"]["paused_partition_seconds_saved"] is None  # no log timed it
    assert worse["declared_paused_partitions"] == worse["recommended_paused_partitions"] == 12


def test_migration_prerequisites_say_what_the_captures_tell_of_the_brokers(result):
    _, rows = result
    assert {g: rows[g]["change_kind"] for g in ("old", "serving", "unknown")} == dict.fromkeys(
        ("old", "serving", "unknown"), "protocol_migration"
    )
    assert rows["old"]["prerequisites"].startswith(
        "brokers >= 4.0 first (this cluster's coordinator logs are the pre-4.0"
        " GroupCoordinator's), then clients >= 4.0;"
    )
    assert rows["serving"]["prerequisites"].startswith(
        "brokers: this cluster already serves consumer-protocol groups; clients >= 4.0;"
    )
    assert rows["unknown"]["prerequisites"].startswith(
        "brokers and clients >= 4.0 (this cluster's release is not in the captures);"
    )


def test_uniform_must_beat_the_best_classic_choice_not_just_what_runs(result):
    """Given: range declared; cooperative-sticky and uniform both pause 3 (range 15) and
    their mean lag skews differ by less than the 0.01 the reason shows.
    Then: the classic swap, not a protocol migration for nothing visible."""
    r = result[1]["close"]
    assert (r["change_kind"], r["recommended_assignor"]) == ("assignor", "cooperative-sticky")
    assert r["reason"].startswith(
        "cooperative-sticky instead of range: pauses 12 fewer partitions over 3 replayed events"
        " (-80 %), 30.0 fewer partition-seconds, 1,200 fewer messages delayed; needs the"
        " two-bounce"
    )  # 2.86 vs 2.86 is no clause


def test_a_consumer_group_on_server_side_range_is_compared_as_observed(result):
    """Then: observed is the baseline, its pauses counted as the consumer protocol's (all
    partitions but the kept: 60 - 40), and uniform is a server-side assignor change;
    cooperative-sticky, however good, is never offered."""
    r = result[1]["srange"]
    assert (r["protocol"], r["change_kind"], r["recommended_assignor"], r["compared_with"]) == (
        "consumer",
        "assignor",
        "uniform",
        "observed",
    )
    assert (r["declared_paused_partitions"], r["paused_partitions_saved"]) == (20, 8)
    assert r["reason"] == (
        "uniform instead of range (as observed): pauses 8 fewer partitions over 3 replayed events"
        " (-40 %)"
    )
    assert r["prerequisites"].startswith("roll every consumer with group.remote.assignor=uniform")


def test_unknown_skew_is_never_printed_as_a_number(result):
    """Given: NaN and null mean lag skews. Then: stored as null, shown as n/a or not at all."""
    half, none = result[1]["half"], result[1]["none"]
    assert half["declared_mean_lag_skew"] is None and half["mean_lag_skew_delta"] is None
    assert half["reason"].endswith(
        "pauses 12 fewer partitions over 3 replayed events (-80 %), 30.0 fewer"
        " partition-seconds, 1,200 fewer messages delayed, mean lag skew 1.50 vs n/a; needs the"
        " two-bounce rolling upgrade (first beside the eager assignor, then alone)"
    )
    assert none["reason"] == (
        "keep cooperative-sticky: no classic assignor does better over 3 replayed events than its"
        " 3 paused partitions (max count spread 1)"
    )
    for text in (half["reason"], none["reason"]):
        assert not {"nu", "nan", "None", "null"} & set(text.replace(",", " ").split())


def test_ratios_are_rounded_where_they_are_made(result):
    r = result[1]["ratios"]
    assert (r["declared_stickiness"], r["recommended_stickiness"]) == (0.1235, 0.9877)
    assert (r["recommended_mean_lag_skew"], r["mean_lag_skew_delta"]) == (1.2345, 0.1345)
    assert r["stickiness_delta"] == 0.8642


def test_static_membership_is_the_change_where_it_saves_more(result):
    """Given: WHAT_IF. Expected: static membership wherever it saves more paused
    partitions than the group's other change; its savings in the columns."""
    rows = result[1]
    assert {g: rows[g]["change_kind"] for g in (*WHAT_IF, "eager")} == {
        "eager-static": "static_membership",
        "kip848-static": "static_membership",
        "coop-static": "protocol_migration",  # a tie keeps the other change
        "worse": "keep",
        "eager": "assignor",
        "has-static": "assignor",  # the static membership it has is no change
    }
    eager = rows["eager-static"]
    assert (
        eager["recommended_assignor"],
        eager["paused_partitions_saved"],
        eager["rebalances_saved"],
        eager["paused_partition_seconds_saved"],
        eager["paused_partitions_delta"],
    ) == ("range", 14, 4, 37.5, 0)
    assert eager["reason"] == (
        "static membership (group.instance.id) avoids 4 rebalances (members restarted and"
        " back within 600 s): pauses 14 fewer partitions, 37.5 fewer partition-seconds, 560"
        " fewer messages delayed; more than switching to cooperative-sticky, which saves 12"
        " paused partitions"
    )
    assert eager["messages_delayed_saved"] == 560
    assert eager["prerequisites"] == (
        "every consumer sets a unique group.instance.id that survives its restarts (e.g. the"
        " pod name) and session.timeout.ms >= 600000 (the brokers'"
        " group.max.session.timeout.ms, default 1800000, must allow it); clients >= 2.3"
        " (KIP-345)"
    )
    kip848 = rows["kip848-static"]
    assert kip848["reason"] == (
        "static membership (group.instance.id) avoids 1 rebalance (members restarted and back"
        " within 600 s): pauses 2 fewer partitions, 80 fewer messages delayed"
    )
    assert kip848["prerequisites"].endswith(
        "group.consumer.session.timeout.ms (default 45000, at most"
        " group.consumer.max.session.timeout.ms, default 60000), which must be >= 600000"
    )
    coop = rows["coop-static"]
    assert (coop["rebalances_saved"], coop["paused_partition_seconds_saved"]) == (None, 7.5)


def test_the_declared_assignor_is_kept_on_a_tie_and_observed_stands_in_when_not_replayed(
    result,
):
    tie, plugin = result[1]["tie"], result[1]["plugin"]
    assert (tie["recommended_assignor"], tie["change_kind"]) == ("uniform", "keep")
    assert tie["reason"].startswith("keep uniform: the group runs the consumer protocol")
    assert (plugin["recommended_assignor"], plugin["compared_with"]) == ("sticky", "observed")
    assert plugin["paused_partitions_delta"] == -3 and plugin["max_count_spread_delta"] == -2
    assert plugin["reason"] == (
        "sticky instead of com.acme:Mine (as observed): pauses 3 fewer partitions over 3"
        " replayed events (-33 %), 7.5 fewer partition-seconds, 300 fewer messages delayed,"
        " max count spread 1 vs 3, mean lag skew 1.10 vs 2.00"
    )


# -- moved from test_metrics_gold: the rule's order and its baseline ---------------------


def frame(spark, schema, rows: list[dict]):
    return spark.createDataFrame(
        [tuple(r.get(f.name) for f in schema.fields) for r in rows], schema
    )


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _declared(spark, strategy: str | None):
    """The latest known strategy of the day: roundrobin, then `strategy`, then none."""
    states = frame(
        spark,
        bronze.TABLES["group_states"],
        [
            {
                "cluster": "c",
                "group_id": "g",
                "assignment_strategy": s,
                "captured_at": at(t),
                "capture_date": DAY,
            }
            for t, s in ((0, "roundrobin"), (60, strategy), (120, None))
        ],
    )
    return declared_strategies(states)


def test_recommendation_prefers_balance_then_fewer_pauses_then_lag_skew(spark):
    sticky, skewed = rollups(
        spark,
        {
            "g": {  # paused, max spread, mean lag skew, stickiness
                "range": (10, 1, 1.5, 0.5),
                "sticky": (10, 1, 1.2, 0.9),
                "cooperative-sticky": (4, 2, 1.0, 0.9),  # fewest pauses but unbalanced
                "observed": (12, 1, 1.6, 0.4),
            }
        },
    )
    (r,) = recommendations(sticky, skewed, _declared(spark, "range")).collect()
    assert (r["declared_assignor"], r["recommended_assignor"], r["compared_with"]) == (
        "range",
        "sticky",
        "range",
    )
    assert r["paused_partitions_delta"] == 0 and r["max_count_spread_delta"] == 0
    assert r["mean_lag_skew_delta"] == pytest.approx(-0.3)
    assert r["stickiness_delta"] == pytest.approx(0.4)
    assert r["reason"] == (
        "sticky instead of range: pauses as many partitions (10) over 3 replayed events, mean lag"
        " skew 1.20 vs 1.50"
    )
    assert r["prerequisites"].startswith(
        "roll every consumer with partition.assignment.strategy=sticky,range"
    )


# -- protocols.py -------------------------------------------------------------------------

KIP848_ID = "Q7K_qda8THGpKHzSy-UQ8A"
CLASSIC_ID = "consumer-g-1-cda2677f-8ba4-4aa7-8d21-69019ea3ba3f"


def test_a_groups_protocol_comes_from_its_latest_captures(spark):
    """Given: a group declaring uniform; one declaring range whose members carry KIP-848
    member ids (server-side range); one with classic ids, one of them with a
    group.instance.id; one whose KIP-848 members were replaced by classic ones later in
    the day (a downgrade); one only in members.
    Expected: consumer, consumer, classic, classic, consumer; the group.instance.id of
    the static member, no instance id for the others, none known without members."""
    states = frame(
        spark,
        bronze.TABLES["group_states"],
        [
            {"cluster": "c", "group_id": g, "assignment_strategy": s, "captured_at": at(0),
             "capture_date": DAY}
            for g, s in (("uni", "uniform"), ("srange", "range"), ("classic", "range"),
                         ("down", "cooperative-sticky"))
        ],
    )  # fmt: skip
    members = frame(
        spark,
        bronze.TABLES["members"],
        [
            {"cluster": "c", "group_id": g, "consumer_id": m, "group_instance_id": i,
             "captured_at": at(t), "capture_date": DAY}
            for g, m, i, t in (
                ("uni", KIP848_ID, None, 0), ("srange", KIP848_ID, None, 0),
                ("srange", CLASSIC_ID, None, 0), ("classic", CLASSIC_ID, None, 0),
                ("classic", "pod-1-" + CLASSIC_ID[11:], "pod-1", 0),
                ("down", KIP848_ID, None, 0), ("down", CLASSIC_ID, None, 60),
                ("only-members", KIP848_ID, None, 0),
            )
        ],
    )  # fmt: skip
    got = group_protocols(states, members)
    want = spark.createDataFrame(
        [("c", g, DAY, p, i) for g, p, i in (
            ("uni", "consumer", []), ("srange", "consumer", []), ("classic", "classic", ["pod-1"]),
            ("down", "classic", []), ("only-members", "consumer", []))],
        "cluster string, group_id string, date date, protocol string, instance_ids array<string>",
    )  # fmt: skip
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)


def test_a_captured_group_type_decides_the_protocol(spark):
    """Given: a streams group whose member ids look like nothing KIP-848, a share group
    with 22-character member ids, and a group whose state capture says `consumer` but
    whose later list capture says `classic` (a downgrade the list saw last).
    Expected: streams, share, classic: the latest captured type wins over the ids."""
    states = frame(
        spark,
        bronze.TABLES["group_states"],
        [
            {"cluster": "c", "group_id": g, "group_type": k, "captured_at": at(t),
             "capture_date": DAY}
            for g, k, t in (("app", "streams", 0), ("queue", "share", 0),
                            ("down", "consumer", 0), ("down", "classic", 60))
        ],
    )  # fmt: skip
    members = frame(
        spark,
        bronze.TABLES["members"],
        [
            {"cluster": "c", "group_id": g, "consumer_id": m, "captured_at": at(0),
             "capture_date": DAY, "group_type": k}
            for g, m, k in (("app", CLASSIC_ID, "streams"), ("queue", KIP848_ID, "share"),
                            ("down", KIP848_ID, None))
        ],
    )  # fmt: skip
    got = {r["group_id"]: r["protocol"] for r in group_protocols(states, members).collect()}
    assert got == {"app": "streams", "queue": "share", "down": "classic"}


def _log(cluster, seconds, line):
    return {"cluster": cluster, "logged_at": at(seconds), "line": line, "log_date": DAY}


def test_what_the_captures_tell_of_a_clusters_brokers(spark):
    """Given: a cluster whose coordinator logs the pre-4.0 GroupCoordinator; one whose
    logs moved to the new coordinator during the day; one serving a consumer group.
    Expected: classic_coordinator, nothing known (the new coordinator exists from 3.7),
    consumer_groups."""
    old = "[2026-11-20 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group g"
    new = (
        "[2026-11-20 11:00:00,000] INFO [GroupCoordinator id=1 topic=__consumer_offsets "
        "partition=3] Preparing to rebalance group g"
    )
    events = frame(
        spark,
        bronze.TABLES["coordinator_events"],
        [_log("old", 0, old), _log("upgraded", 0, old), _log("upgraded", 60, new)],
    )
    protocols = spark.createDataFrame(
        [("old", "g", DAY, "classic"), ("upgraded", "g", DAY, "classic"),
         ("serving", "g", DAY, "classic"), ("serving", "h", DAY, "consumer")],
        "cluster string, group_id string, date date, protocol string",
    )  # fmt: skip
    got = cluster_brokers(protocols, events)
    want = spark.createDataFrame(
        [("old", DAY, "classic_coordinator"), ("serving", DAY, "consumer_groups")],
        "cluster string, date date, brokers string",
    )
    assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)
    context_rows = group_context(
        frame(spark, bronze.TABLES["group_states"], []),
        frame(
            spark,
            bronze.TABLES["members"],
            [{"cluster": "old", "group_id": "g", "consumer_id": CLASSIC_ID,
              "captured_at": at(0), "capture_date": DAY}],
        ),
        events,
    ).collect()  # fmt: skip
    assert [tuple(r) for r in context_rows] == [
        ("old", "g", DAY, "classic", "classic_coordinator", [])
    ]
