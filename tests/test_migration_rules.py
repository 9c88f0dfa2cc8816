"""The KIP-848 migration plan's rules (metrics/migration_rules.py), on hand-made facts."""

from __future__ import annotations

from dataclasses import replace

from fleet_rebalance.metrics.migration_rules import GroupFacts, ranked, verdict

READY_GROUP = GroupFacts(
    cluster="prod",
    group_id="orders-etl",
    declared_assignor="range",
    brokers="consumer_groups",
    members=4,
    static_members=0,
    rebalances=6,
    generations_logged=6,
    paused_partitions_now=96,
    paused_partitions_uniform=10,
    paused_seconds_now=120.0,
    paused_seconds_uniform=8.5,
)


def test_a_group_on_a_built_in_assignor_that_gains_goes_in_the_first_wave():
    v = verdict(READY_GROUP)
    assert (v.blockers, v.cautions, v.readiness, v.wave) == ((), (), "ready", 1)
    assert (v.paused_partitions_saved, v.paused_seconds_saved) == (86, 111.5)
    assert "uniform would pause 10 partitions" in v.reason and "pauses 96" in v.reason


def test_a_custom_client_side_assignor_blocks_the_move():
    v = verdict(replace(READY_GROUP, declared_assignor="com.acme.RackAwareAssignor"))
    assert (v.blockers, v.readiness, v.wave) == (("custom_assignor",), "blocked", None)
    assert "com.acme.RackAwareAssignor cannot run under the consumer protocol" in v.reason


def test_streams_old_brokers_and_assign_only_groups():
    streams = verdict(replace(READY_GROUP, declared_assignor="stream"))
    assert streams.blockers == ("streams_application",) and "KIP-1071" in streams.reason
    old = verdict(replace(READY_GROUP, brokers="classic_coordinator"))
    assert (old.blockers, old.readiness) == (("brokers_pre_4_0",), "blocked")
    idle = replace(
        READY_GROUP, declared_assignor=None, members=0, rebalances=0, generations_logged=0,
        paused_partitions_now=None, paused_partitions_uniform=None,
        paused_seconds_now=None, paused_seconds_uniform=None,
    )  # fmt: skip
    v = verdict(idle)
    assert (v.blockers, v.cautions, v.readiness, v.wave) == (
        ("assign_only",), (), "not_applicable", None,
    )  # fmt: skip


def test_cautions_and_no_gain_set_the_later_waves():
    static = verdict(replace(READY_GROUP, static_members=3))
    assert (static.cautions, static.readiness, static.wave) == (
        ("static_membership",), "ready_with_checks", 3,
    )  # fmt: skip
    assert "UNRELEASED_INSTANCE_ID" in static.reason
    worse = verdict(
        replace(READY_GROUP, paused_partitions_uniform=100, paused_seconds_uniform=130.0)
    )
    assert (worse.readiness, worse.wave, worse.paused_partitions_saved) == ("ready", 2, -4)
    assert "10 paused partition-seconds more" in worse.reason
    unknown = verdict(replace(READY_GROUP, declared_assignor=None))
    assert unknown.cautions == ("assignor_unknown",) and unknown.wave == 3
    unreplayed = verdict(
        replace(READY_GROUP, paused_partitions_uniform=None, paused_seconds_uniform=None)
    )
    assert unreplayed.wave == 2 and "effect unknown" in unreplayed.reason


def test_the_fleet_is_ordered_by_wave_then_by_what_each_group_saves():
    groups = {
        "small-gain": replace(READY_GROUP, group_id="small-gain", paused_seconds_uniform=100.0),
        "big-gain": replace(READY_GROUP, group_id="big-gain"),
        "static": replace(READY_GROUP, group_id="static", static_members=1),
        "custom": replace(READY_GROUP, group_id="custom", declared_assignor="mine"),
        "no-gain": replace(
            READY_GROUP,
            group_id="no-gain",
            paused_partitions_uniform=96,
            paused_seconds_uniform=120.0,
        ),
    }
    order = {g.group_id: place for g, _, place in ranked((g, verdict(g)) for g in groups.values())}
    assert order == {"big-gain": 1, "small-gain": 2, "no-gain": 3, "static": 4, "custom": None}
