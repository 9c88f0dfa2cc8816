"""KIP-848 convergence after each epoch bump, and members stuck reconciling
(metrics/convergence_rules.py), on hand-made captures."""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.metrics.convergence_rules import (
    Capture,
    MemberEpoch,
    convergences,
    stuck,
    summary,
)

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def capture(seconds: float, *epochs: tuple[str, int | None, int | None]) -> Capture:
    return Capture(at(seconds), tuple(MemberEpoch(*e) for e in epochs))


def test_an_epoch_converges_at_the_first_capture_with_every_member_on_it():
    captures = [
        capture(0, ("a", 4, 4), ("b", 4, 4)),
        capture(30, ("a", 5, 5), ("b", 4, 5)),  # b still reconciling
        capture(60, ("a", 5, 5), ("b", 5, 5)),
    ]
    (row,) = convergences([(at(10), 5)], captures)
    assert (row.epoch, row.outcome, row.converged_by, row.seconds) == (5, "converged", at(60), 50.0)


def test_a_bump_overtaken_by_the_next_is_superseded_and_the_last_open_one_is_open():
    captures = [
        capture(0, ("a", 4, 4), ("b", 4, 4)),
        capture(30, ("a", 5, 6), ("b", 4, 6)),
        capture(60, ("a", 6, 6), ("b", 6, 6)),
        capture(90, ("a", 6, 7), ("b", 6, 7), ("c", 0, 7)),
    ]
    rows = convergences([(at(10), 5), (at(20), 6), (at(80), 7)], captures)
    assert [(r.epoch, r.outcome, r.seconds) for r in rows] == [
        (5, "superseded", None),
        (6, "converged", 40.0),
        (7, "open", None),
    ]
    s = summary(rows, [])
    assert (s.epochs, s.converged, s.max_seconds, s.median_seconds) == (3, 1, 40.0, 40.0)


def test_a_member_behind_its_target_for_long_enough_is_stuck():
    captures = [
        capture(0, ("a", 5, 5), ("b", 4, 5)),
        capture(200, ("a", 5, 5), ("b", 4, 5)),
        capture(400, ("a", 6, 6), ("b", 4, 6)),  # still behind, a newer target
        capture(600, ("a", 6, 6), ("b", 6, 6)),
        capture(700, ("a", 6, 7), ("b", 7, 7)),  # a briefly behind: not stuck
    ]
    found = stuck(captures, dt.timedelta(minutes=5))
    assert [(s.member_id, s.since, s.until, s.member_epoch, s.target_epoch) for s in found] == [
        ("b", at(0), at(400), 4, 6)
    ]
    assert summary([], found).stuck_members == 1


def test_classic_members_without_epochs_and_groups_without_bumps():
    # A classic member of a classic group prints `-`: no epoch, never behind, and a
    # capture of only such members shows no convergence.
    captures = [capture(0, ("a", None, None)), capture(30, ("a", None, None))]
    assert stuck(captures, dt.timedelta(0)) == []
    (row,) = convergences([(at(10), 3)], captures)
    assert row.outcome == "open"
    assert summary([], []).max_seconds is None
