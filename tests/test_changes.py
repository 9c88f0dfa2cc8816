"""The final change of a group (metrics/changes.py) on hand-built facts: each kind with
the evidence that decides it, the thresholds, and the order among candidates."""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.metrics.changes import Limits, decide

LIMITS = Limits()
KEEP_ROW = {"change_kind": "keep", "declared_assignor": "range", "reason": "keep range: ..."}


def event(seq, cause, departed=None, returned=None, away_ms=None, paused=12, seconds=36.0):
    return {
        "event_seq": seq,
        "cause": cause,
        "departed": departed,
        "returned": returned,
        "away_ms": away_ms,
        "paused_partitions": paused,
        "paused_partition_seconds": seconds,
    }


def stalls(members: list[str], away_s: list[int], start: int = 2) -> list[dict]:
    """Each member expired and back `away` s later: a departure and a return each."""
    out = []
    for i, (who, away) in enumerate(zip(members, away_s, strict=True)):
        out.append(event(start + 2 * i, "session_timeout", departed=who, away_ms=away * 1000))
        out.append(event(start + 2 * i + 1, "session_timeout", returned=who, away_ms=away * 1000))
    return out


def test_a_group_with_nothing_to_change_keeps_what_it_runs():
    assert decide(KEEP_ROW, [], [], LIMITS) == {"change_kind": "keep", "changed_assignor": False}


def test_stalled_members_that_come_back_get_a_longer_session_timeout():
    """Given: three members expired and back 5, 21 and 8 s later (6 rebalances, 36
    partition-seconds each). Then: consumer_config with session.timeout.ms covering the
    45 s default plus the longest stall (21 s), rounded up to 5 s: 70000, a heartbeat a
    third of it; all six rebalances saved."""
    got = decide(KEEP_ROW, stalls(["c-1", "c-2", "c-3"], [5, 21, 8]), [], LIMITS)
    assert got["change_kind"] == "consumer_config"
    assert got["rebalances_saved"] == 6
    assert got["paused_partition_seconds_saved"] == 216.0
    assert got["paused_partitions_saved"] == 72
    assert "session.timeout.ms=70000" in got["reason"]
    assert "heartbeat.interval.ms=23000" in got["prerequisites"]


def test_one_consumer_restarting_before_its_session_expired_is_a_crash_loop():
    """Given: c-1 back four times, twice before its old session expired (away 0); c-2
    once. Then: fix_crash_loop names c-1 and saves its eight rebalances, not c-2's."""
    events = stalls(["c-1", "c-1", "c-1", "c-1", "c-2"], [0, 30, 0, 12, 9])
    got = decide(KEEP_ROW, events, [], LIMITS)
    assert got["change_kind"] == "fix_crash_loop"
    assert got["rebalances_saved"] == 8
    assert "c-1 (4 restarts)" in got["reason"] and "2 times before" in got["reason"]
    assert "c-2" not in got["reason"]


def test_a_consumer_that_only_ever_came_back_after_its_expiry_is_no_crash_loop():
    """Given: c-1 expired and back 3 times, always after the expiry (a stall each time).
    Then: a session timeout change, not a crash loop."""
    got = decide(KEEP_ROW, stalls(["c-1"] * 3, [4, 6, 5]), [], LIMITS)
    assert got["change_kind"] == "consumer_config"


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
        event(2, "poll_timeout", departed="c-9", away_ms=1_500_000),
        event(3, "poll_timeout", departed="c-8", away_ms=None),
    ]
    got = decide(KEEP_ROW, events, [], LIMITS)
    assert got["change_kind"] == "consumer_config"
    assert "came back 25 min after leaving" in got["reason"]
    assert "max.poll.interval.ms" in got["prerequisites"]


def test_a_change_below_every_threshold_is_keep_saying_what_it_would_save():
    """Given: an assignor change that pauses 6 fewer partitions (16.8 partition-seconds)
    and lowers mean lag skew by 0.13. Then: keep, the gain named against the thresholds."""
    row = {
        "change_kind": "assignor",
        "declared_assignor": "range",
        "recommended_assignor": "cooperative-sticky",
        "reason": "cooperative-sticky instead of range: ...",
        "paused_partitions_saved": 6,
        "paused_partition_seconds_saved": 16.8,
        "rebalances_saved": float("nan"),
        "mean_lag_skew_delta": -0.13,
        "declared_max_count_spread": 1,
        "recommended_max_count_spread": 1,
    }
    got = decide(row, [], [], LIMITS)
    assert got["change_kind"] == "keep"
    assert got["reason"].startswith(
        "keep range: gain too small: switching to cooperative-sticky would save 6 paused "
        "partitions, 16.8 partition-seconds, mean lag skew 0.13 lower, below the thresholds"
    )
    assert "nan" not in got["reason"]
    assert got["paused_partitions_saved"] == 0


def test_a_migration_that_needs_broker_upgrades_must_gain_more():
    """Given: a protocol migration saving 100 partition-seconds; brokers on the old
    coordinator (upgrade first) against brokers already serving consumer groups. Then:
    keep (100 < 60 x 3) against protocol_migration."""
    row = {
        "change_kind": "protocol_migration",
        "declared_assignor": "range",
        "recommended_assignor": "uniform",
        "paused_partition_seconds_saved": 100.0,
        "paused_partitions_saved": 20,
    }
    old = decide({**row, "brokers": "classic_coordinator"}, [], [], LIMITS)
    assert old["change_kind"] == "keep" and "x3: the brokers need upgrading first" in old["reason"]
    ready = decide({**row, "brokers": "consumer_groups"}, [], [], LIMITS)
    assert ready == {"change_kind": "protocol_migration", "changed_assignor": True}
    small = decide({**row, "brokers": "consumer_groups", "paused_partition_seconds_saved": 9.0,
                    "paused_partitions_saved": 2}, [], [], LIMITS)  # fmt: skip
    assert small["change_kind"] == "keep"
    assert small["reason"].startswith(
        "keep range: gain too small: migrating to the consumer protocol (uniform) would save"
    )


def test_the_larger_saving_wins_and_equal_savings_take_the_cheaper_change():
    """Given: static membership (from the recommendation) saving the same six session
    timeout rebalances as the session-timeout change. Then: the config change (cheaper);
    with static membership saving more, static membership."""
    events = stalls(["c-1", "c-2", "c-3"], [5, 21, 8])
    static = {
        "change_kind": "static_membership",
        "declared_assignor": "range",
        "rebalances_saved": 6,
        "paused_partition_seconds_saved": 216.0,
        "paused_partitions_saved": 72,
    }
    assert decide(static, events, [], LIMITS)["change_kind"] == "consumer_config"
    more = {**static, "rebalances_saved": 9, "paused_partition_seconds_saved": 324.0}
    assert decide(more, events, [], LIMITS) == {
        "change_kind": "static_membership",
        "changed_assignor": False,
    }
