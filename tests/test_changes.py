"""The final change of a group (metrics/changes.py) on hand-built facts: each kind with
the evidence that decides it, the thresholds in cost, the attention floor for lag gains,
and the order among candidates. `away_ms` is a member's absence: from its last
heartbeat (at least a session timeout before its expiry line) to its return."""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.changes import GroupFacts, Limits, consumers, decide

LIMITS = Limits.of(MetricsConfig())
KEEP_ROW = {"change_kind": "keep", "declared_assignor": "range", "reason": "keep range: ..."}


def event(seq, cause, departed=None, returned=None, away_ms=None, paused=12, seconds=36.0,
          messages=900):  # fmt: skip
    return {
        "event_seq": seq,
        "cause": cause,
        "departed": departed,
        "returned": returned,
        "away_ms": away_ms,
        "paused_partitions": paused,
        "paused_partition_seconds": seconds,
        "messages_delayed": messages,
    }


def stalls(members: list[str], away_s: list[int], start: int = 2, **cost) -> list[dict]:
    """Each member expired and back `away` s after its last heartbeat: a departure and
    a return each."""
    out = []
    for i, (who, away) in enumerate(zip(members, away_s, strict=True)):
        away_ms = away * 1000
        out.append(event(start + 2 * i, "session_timeout", departed=who, away_ms=away_ms, **cost))
        out.append(event(start + 2 * i + 1, "session_timeout", returned=who, away_ms=away_ms,
                         **cost))  # fmt: skip
    return out


def early(who: str, seq: int, away_s: int = 20) -> list[dict]:
    """A new process of `who` joined before its old member's session expired: the
    return, then the expiry (as a KIP-848 group logs them)."""
    away_ms = away_s * 1000
    return [
        event(seq, "session_timeout", returned=who, away_ms=away_ms),
        event(seq + 1, "session_timeout", departed=who, away_ms=away_ms),
    ]


def replaced(who: str, seq: int) -> dict:
    """A new process of `who` joined before its old member's session expired, and one
    classic generation let the old go and took the new in."""
    return event(seq, "session_timeout", departed=who, returned=who, away_ms=15_000)


def test_a_group_with_nothing_to_change_keeps_what_it_runs():
    assert decide(KEEP_ROW, [], [], LIMITS) == {"change_kind": "keep", "changed_assignor": False}


def test_stalled_members_that_come_back_get_a_session_timeout_covering_their_absence():
    """Given: three members away 50, 66 and 53 s (each 45 s of session timeout before
    its expiry, then 5, 21, 8 s until its return): 6 rebalances, 36 partition-seconds
    each. Then: consumer_config with session.timeout.ms covering the longest absence,
    rounded up to 5 s: 70000, a heartbeat a third of it; all six rebalances saved."""
    got = decide(KEEP_ROW, stalls(["c-1", "c-2", "c-3"], [50, 66, 53]), [], LIMITS)
    assert got["change_kind"] == "consumer_config"
    assert got["rebalances_saved"] == 6
    assert got["paused_partition_seconds_saved"] == 216.0
    assert got["paused_partitions_saved"] == 72
    assert got["messages_delayed_saved"] == 5400
    assert got["reason"] == (
        "session timeouts: 3 expired members came back with a new member id, the longest "
        "away at least 66 s (from its last heartbeat, a session timeout before its expiry, "
        "to its return): silent past the session timeout (a long GC pause, CPU throttling, "
        "a blocked heartbeat thread, a slow restart); session.timeout.ms=70000 keeps a "
        "member through an absence that long; it saves 6 rebalances, 72 paused partitions, "
        "216.0 partition-seconds, 5,400 messages delayed"
    )
    assert got["prerequisites"].startswith(
        "every consumer with session.timeout.ms=70000 and heartbeat.interval.ms=23000"
    )


def test_a_kip848_groups_session_timeout_is_the_groups_config():
    """Given: the same stalls in a consumer-protocol group. Then: the advice is the
    group's consumer.session.timeout.ms (GroupConfig, kafka-configs.sh --entity-type
    groups), over the brokers' default maximum of 60000, which must be raised first."""
    facts = GroupFacts(protocol="consumer")
    got = decide(KEEP_ROW, stalls(["c-1", "c-2", "c-3"], [50, 66, 53]), [], LIMITS, facts)
    assert got["change_kind"] == "consumer_config"
    assert "the group's consumer.session.timeout.ms=70000 keeps a member" in got["reason"]
    assert (
        "--alter --entity-type groups --entity-name <group> --add-config "
        "consumer.session.timeout.ms=70000"
    ) in got["prerequisites"]
    assert (
        "raise the brokers' group.consumer.max.session.timeout.ms (default 60000)"
        in (got["prerequisites"])
    )


def test_a_static_group_is_never_told_to_use_static_membership_but_to_cover_its_absences():
    """Given: a group whose members have group.instance.id; static membership as the
    recommendation's choice (it would avoid both rebalances of lab-static-1's absence
    of 61 s, which the replay names deploy_restart: a static member back past its
    session timeout). Then: not static membership, which the group has, but the session
    timeout that covers the absence: 65000 ms, both rebalances saved."""
    row = {
        "change_kind": "static_membership",
        "declared_assignor": "range",
        "rebalances_saved": 2,
        "paused_partitions_saved": 24,
        "paused_partition_seconds_saved": 72.0,
        "messages_delayed_saved": 1800,
    }
    events = [
        event(2, "deploy_restart", departed="lab-static-1", away_ms=61_000),
        event(3, "deploy_restart", returned="lab-static-1", away_ms=61_000),
    ]
    static = GroupFacts(instance_ids=frozenset({"lab-static-1", "lab-static-2"}))
    got = decide(row, events, [], LIMITS, static)
    assert got["change_kind"] == "consumer_config"
    assert got["reason"].startswith(
        "session timeouts: static member lab-static-1 (group.instance.id) expired and came "
        "back, the longest away at least 61 s"
    )
    assert got["reason"].endswith(
        "session.timeout.ms=65000 keeps a member through an absence that long (a static "
        "member keeps its place and partitions while it lasts); it saves 2 rebalances, 24 "
        "paused partitions, 72.0 partition-seconds, 1,800 messages delayed"
    )
    assert (got["rebalances_saved"], got["paused_partition_seconds_saved"]) == (2, 72.0)
    # A dynamic group's restarts (a LeaveGroup, then a new member) are no session matter.
    assert decide(row, events, [], LIMITS)["change_kind"] == "static_membership"


def test_members_named_together_are_each_an_incident():
    """Given: two members expired in one generation and came back in one (the replay
    names both, comma-separated), away 50 and 66 s. Then: the session timeout covers the
    longer absence, both consumers counted."""
    events = [
        event(2, "session_timeout", departed="c-1, c-2", away_ms=66_000, seconds=40.0),
        event(3, "session_timeout", returned="c-1, c-2", away_ms=66_000, seconds=40.0),
    ]
    got = decide(KEEP_ROW, events, [], LIMITS)
    assert got["reason"].startswith(
        "session timeouts: 2 expired members came back with a new member id, the longest "
        "away at least 66 s"
    )
    assert "session.timeout.ms=70000" in got["reason"] and got["rebalances_saved"] == 2


def test_one_consumer_back_while_its_old_member_was_in_the_group_is_a_crash_loop():
    """Given: c-1 back four times, twice while its old member was still in the group
    (once as a KIP-848 group logs it, the return before the expiry; once in one classic
    generation that replaced it); c-2 once. Then: fix_crash_loop names c-1 and saves
    its eight rebalances, not c-2's."""
    events = [
        *stalls(["c-1"], [75], start=2),
        *early("c-1", 4),
        replaced("c-1", 6),
        *stalls(["c-1", "c-2"], [57, 54], start=7),
    ]
    got = decide(KEEP_ROW, events, [], LIMITS)
    assert got["change_kind"] == "fix_crash_loop"
    assert got["rebalances_saved"] == 7
    assert "c-1 (4 restarts)" in got["reason"] and "2 times before" in got["reason"]
    assert "c-2" not in got["reason"]


def test_a_consumer_that_only_ever_came_back_after_its_expiry_is_no_crash_loop():
    """Given: c-1 expired and back 3 times, always after the expiry (a stall each time:
    its departure comes first). Then: a session timeout change, not a crash loop."""
    got = decide(KEEP_ROW, stalls(["c-1"] * 3, [49, 51, 50]), [], LIMITS)
    assert got["change_kind"] == "consumer_config"


def test_a_restart_before_the_old_session_expired_is_no_session_timeout_matter():
    """Given: c-1 back once while its old member was still in the group (one classic
    generation replaced it: a new process, which a longer session timeout would only
    leave waiting for the dead member longer), and c-2 away 66 s.
    Then: the session timeout covers c-2's absence and saves c-2's two rebalances only."""
    got = decide(KEEP_ROW, [replaced("c-1", 2), *stalls(["c-2"], [66], start=3)], [], LIMITS)
    assert got["change_kind"] == "consumer_config"
    assert got["rebalances_saved"] == 2
    assert got["reason"].startswith(
        "session timeouts: 1 expired member came back with a new member id, the longest "
        "away at least 66 s"
    )


def test_a_fault_is_named_whatever_it_costs():
    """Given: a crash loop (c-1 back three times, once while its old member was still
    in the group) whose rebalances cost 0.01 partition-seconds each and no message.
    Then: fix_crash_loop all the same (a fault, not tuning)."""
    cheap = {"paused_partition_seconds": 0.01, "paused_partitions": 1, "messages_delayed": 0}
    events = [*stalls(["c-1"], [60]), *early("c-1", 4), *stalls(["c-1"], [61], start=6)]
    got = decide(KEEP_ROW, [{**e, **cheap} for e in events], [], LIMITS)
    assert got["change_kind"] == "fix_crash_loop"
    assert (got["rebalances_saved"], got["paused_partition_seconds_saved"]) == (6, 0.06)


def test_a_stuck_partition_comes_first_and_is_named():
    """Given: a poll timeout (the stuck consumer left) and a partition STALLed at offset
    106598. Then: stuck_partition, the topic, partition and offset named, the commands
    to look at and skip the record; no saving claimed in pauses."""
    stuck = [
        {
            "topic": "payments",
            "partition": 1,
            "offset": 106598,
            "lag": 88890,
            "since": dt.datetime(2026, 11, 20, 4, 40),
        }
    ]
    events = [event(2, "poll_timeout", departed="c-9", away_ms=1_500_000)]
    got = decide(KEEP_ROW, events, stuck, LIMITS)
    assert got["change_kind"] == "stuck_partition"
    assert "payments-1 at offset 106,598" in got["reason"]
    assert "STALL since 04:40" in got["reason"]
    assert "--partition 1 --offset 106598" in got["prerequisites"]
    assert "--to-offset 106599" in got["prerequisites"]
    assert got["rebalances_saved"] is None and got["paused_partition_seconds_saved"] is None


def test_poll_timeouts_get_a_longer_poll_interval_with_the_rejoin_delay():
    events = [
        event(2, "poll_timeout", departed="c-9", away_ms=1_500_000, seconds=40.0),
        event(3, "poll_timeout", departed="c-8", away_ms=None, seconds=40.0),
    ]
    got = decide(KEEP_ROW, events, [], LIMITS)
    assert got["change_kind"] == "consumer_config"
    assert "came back 25 min after leaving" in got["reason"]
    assert "max.poll.interval.ms" in got["prerequisites"]


ASSIGNOR_ROW = {
    "change_kind": "assignor",
    "declared_assignor": "range",
    "recommended_assignor": "cooperative-sticky",
    "reason": "cooperative-sticky instead of range: ...",
    "paused_partitions_saved": 6,
    "paused_partition_seconds_saved": 16.8,
    "messages_delayed_saved": 140,
    "rebalances_saved": float("nan"),
    "mean_lag_skew_delta": -0.13,
    "declared_max_count_spread": 1,
    "recommended_max_count_spread": 1,
}
ONE_REBALANCE = [event(2, "scale_out")]


def test_a_change_below_every_threshold_is_keep_saying_what_it_would_save():
    """Given: an assignor change that pauses 6 fewer partitions (16.8 partition-seconds,
    140 messages delayed) and lowers mean lag skew by 0.13. Then: keep, the gain named
    against the thresholds."""
    got = decide(ASSIGNOR_ROW, ONE_REBALANCE, [], LIMITS)
    assert got["change_kind"] == "keep"
    assert got["reason"] == (
        "keep range: gain too small: switching to cooperative-sticky would save 6 paused "
        "partitions, 16.8 partition-seconds, 140 messages delayed, a mean lag skew 0.13 "
        "lower, below the thresholds (60 partition-seconds or 10,000 messages delayed, 12 "
        "paused partitions where no log times the rebalances, or a mean lag skew 0.25 lower)"
    )
    assert (got["paused_partitions_saved"], got["messages_delayed_saved"]) == (0, 0)


def test_a_saving_in_rebalances_alone_is_keep():
    """Given: static membership avoiding 12 rebalances that paused 24 partitions for
    0.072 partition-seconds and delayed no message (data/sample's lab/fraud-enricher-1, a
    KIP-848 group). Then: keep, saying what it would save and the thresholds in cost."""
    row = {
        "change_kind": "static_membership",
        "declared_assignor": "uniform",
        "rebalances_saved": 12,
        "paused_partitions_saved": 24,
        "paused_partition_seconds_saved": 0.072,
        "messages_delayed_saved": 0,
    }
    got = decide(row, [event(i, "deploy_restart") for i in range(2, 14)], [], LIMITS)
    assert got["change_kind"] == "keep"
    assert got["reason"].startswith(
        "keep uniform: gain too small: static membership would save 12 rebalances, 24 paused "
        "partitions, 0.1 partition-seconds, 0 messages delayed, below the thresholds (60 "
        "partition-seconds or 10,000 messages delayed"
    )
    assert (got["rebalances_saved"], got["paused_partition_seconds_saved"]) == (None, 0.0)


def test_messages_delayed_alone_can_make_a_change_worth_it():
    """Given: the assignor change pausing 16.8 partition-seconds fewer on busy partitions:
    25,000 messages delayed fewer. Then: the assignor change."""
    row = {**ASSIGNOR_ROW, "messages_delayed_saved": 25_000}
    got = decide(row, ONE_REBALANCE, [], LIMITS)
    assert got == {"change_kind": "assignor", "changed_assignor": True}


def test_lag_skew_and_balance_count_only_above_the_attention_floor():
    """Given: an assignor change that lowers mean lag skew by 0.4 and balances the group
    (count spread 2 -> 1), saving nothing in cost. Then: with the group's largest lag at
    8 messages (below metrics.attention_min_lag, 1000), keep, saying so; at 4,000
    messages, the assignor change."""
    row = {
        **ASSIGNOR_ROW,
        "paused_partitions_saved": 0,
        "paused_partition_seconds_saved": 0.0,
        "messages_delayed_saved": 0,
        "mean_lag_skew_delta": -0.4,
        "declared_max_count_spread": 2,
    }
    quiet = decide(row, ONE_REBALANCE, [], LIMITS, GroupFacts(max_lag=8))
    assert quiet["change_kind"] == "keep"
    assert quiet["reason"].endswith(
        "; balance and lag skew count only while a partition lags 1,000 messages "
        "(metrics.attention_min_lag), and its largest lag today was 8 messages"
    )
    assert "a count spread of 1 or less, a mean lag skew 0.40 lower" in quiet["reason"]
    busy = decide(row, ONE_REBALANCE, [], LIMITS, GroupFacts(max_lag=4000))
    assert busy == {"change_kind": "assignor", "changed_assignor": True}


def test_no_assignor_change_for_a_group_that_never_rebalanced():
    """Given: an assignor change with a much lower lag skew over the group's one
    replayed event, its initial assignment, and lag above the floor. Then: keep: a day
    without a rebalance shows nothing the change would save."""
    row = {**ASSIGNOR_ROW, "mean_lag_skew_delta": -0.41, "paused_partitions_saved": 0}
    got = decide(row, [], [], LIMITS, GroupFacts(max_lag=7470))
    assert got["change_kind"] == "keep"
    assert got["reason"] == (
        "keep range: the group did not rebalance today: switching to cooperative-sticky would "
        "save 16.8 partition-seconds, 140 messages delayed, a mean lag skew 0.41 lower over its "
        "initial assignment only"
    )


MIGRATION_ROW = {
    "change_kind": "protocol_migration",
    "declared_assignor": "range",
    "recommended_assignor": "uniform",
    "prerequisites": "brokers: this cluster already serves consumer-protocol groups; ...",
    "paused_partition_seconds_saved": 100.0,
    "paused_partitions_saved": 20,
    "messages_delayed_saved": 400,
}


def test_a_migration_that_needs_broker_upgrades_must_gain_more():
    """Given: a protocol migration saving 100 partition-seconds; brokers on the old
    coordinator (upgrade first) against brokers already serving consumer groups. Then:
    keep (100 < 60 x 3) against protocol_migration."""
    old = decide({**MIGRATION_ROW, "brokers": "classic_coordinator"}, ONE_REBALANCE, [], LIMITS)
    assert old["change_kind"] == "keep" and "x3: the brokers need upgrading first" in old["reason"]
    ready = decide({**MIGRATION_ROW, "brokers": "consumer_groups"}, ONE_REBALANCE, [], LIMITS)
    assert ready == {"change_kind": "protocol_migration", "changed_assignor": True}
    small = decide({**MIGRATION_ROW, "brokers": "consumer_groups",
                    "paused_partition_seconds_saved": 9.0, "paused_partitions_saved": 2},
                   ONE_REBALANCE, [], LIMITS)  # fmt: skip
    assert small["change_kind"] == "keep"
    assert small["reason"].startswith(
        "keep range: gain too small: migrating to the consumer protocol (uniform) would save"
    )


def test_a_migration_agrees_with_the_migration_plan():
    """Given: migrations that pause no less (a lower lag skew only, lag above the floor),
    or whose group the plan blocks (a custom client-side assignor), or that has static
    members. Then: the first two keep (the plan says nothing to gain, or blocked); the
    third migrates with the plan's caution in its prerequisites."""
    skew_only = {
        **MIGRATION_ROW,
        "brokers": "consumer_groups",
        "paused_partitions_saved": 0,
        "paused_partition_seconds_saved": 0.0,
        "messages_delayed_saved": 0,
        "mean_lag_skew_delta": -0.9,
    }
    lagging = GroupFacts(max_lag=50_000)
    assert decide(skew_only, ONE_REBALANCE, [], LIMITS, lagging)["change_kind"] == "keep"
    custom = {**MIGRATION_ROW, "brokers": "consumer_groups", "declared_assignor": "com.acme.A"}
    assert decide(custom, ONE_REBALANCE, [], LIMITS)["reason"] == (
        "keep com.acme.A: migrating to the consumer protocol (uniform) would save 20 paused "
        "partitions, 100.0 partition-seconds, 400 messages delayed, but "
        "protocol_migration_plan blocks the move: custom_assignor"
    )
    static = GroupFacts(instance_ids=frozenset({"a-0", "a-1"}))
    got = decide({**MIGRATION_ROW, "brokers": "consumer_groups"}, ONE_REBALANCE, [], LIMITS,
                 static)  # fmt: skip
    assert got["change_kind"] == "protocol_migration"
    assert got["prerequisites"].endswith(
        "; 2 static member(s): a replacement joining while its group.instance.id is still "
        "held is refused (UNRELEASED_INSTANCE_ID); stop a pod before its replacement starts"
    )


# Static membership as recommendations chose it: six session-timeout rebalances saved.
STATIC = {
    "change_kind": "static_membership",
    "declared_assignor": "range",
    "rebalances_saved": 6,
    "paused_partition_seconds_saved": 216.0,
    "paused_partitions_saved": 72,
    "messages_delayed_saved": 5400,
}


def test_the_larger_saving_wins_and_equal_savings_take_the_cheaper_change():
    """Given: static membership (from the recommendation) saving the same six session
    timeout rebalances as the session-timeout change. Then: the config change (cheaper);
    with static membership saving more, static membership."""
    events = stalls(["c-1", "c-2", "c-3"], [50, 66, 53])
    assert decide(STATIC, events, [], LIMITS)["change_kind"] == "consumer_config"
    more = {**STATIC, "rebalances_saved": 9, "paused_partition_seconds_saved": 324.0}
    assert decide(more, events, [], LIMITS) == {
        "change_kind": "static_membership",
        "changed_assignor": False,
    }


def test_departed_and_returned_name_one_consumer_or_several():
    """Given: a cell as the replay writes it: one consumer, several comma-separated (or
    a list), or null. Then: the consumers it names."""
    assert consumers("c-1") == ["c-1"]
    assert consumers("c-1, c-2") == consumers(["c-1", "c-2"]) == ["c-1", "c-2"]
    assert consumers(None) == [] and consumers(float("nan")) == []
