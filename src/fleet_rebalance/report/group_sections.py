"""A section per listed group (needing attention or with a change to make): its status
and why, its generations on a timeline coloured by cause and listed with cause and
duration, the replay's declared vs recommended comparison, its lag per topic."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from fleet_rebalance.metrics.attention import hms, present
from fleet_rebalance.report import actions, svg
from fleet_rebalance.report.details import GroupDetails
from fleet_rebalance.report.facts import AttentionRow, Cell, DayFacts, GroupRow
from fleet_rebalance.report.links import anchor
from fleet_rebalance.report.page import Links, status_badge, table, timeline_marks
from fleet_rebalance.report.templating import Macros

# Generations listed in a section's table (all of them are on its timeline).
LISTED_GENERATIONS = 12


def render(f: DayFacts, d: GroupDetails, links: Links) -> Markup:
    sections = [_section(f, d, r) for r in f.listed.itertuples()]
    return _groups().groups(sections, actions.more(len(f.listed), f.listed_total))


def _groups() -> Macros:
    return Macros("groups.html.j2")


def _mine(frame: pd.DataFrame, r: GroupRow) -> pd.DataFrame:
    return frame[(frame.cluster == r.cluster) & (frame.group_id == r.group_id)]


def _section(f: DayFacts, d: GroupDetails, r: AttentionRow) -> Markup:
    name = f"{r.cluster}/{r.group_id}"
    return _groups().section(
        anchor(r.cluster, r.group_id),
        name,
        status_badge(actions.status_text(r), r.last_status),
        [] if r.attention is None else list(r.attention),
        _change(r),
        _convergence(r),
        _timeline(d, r, name),
        _comparison(d, r),
        _lag(d, r),
    )


def _convergence(r: AttentionRow) -> str | None:
    """KIP-848: how fast the group reached each epoch's target (captures bound it from
    above), members stuck reconciling, classic members left in it."""
    bumps = getattr(r, "epoch_bumps", None)
    if bumps is None or pd.isna(bumps):
        return None
    text = f"{int(bumps)} epoch bumps, {int(r.epochs_converged)} converged"
    if not pd.isna(r.convergence_max_seconds):
        text += (
            f", each within at most {r.convergence_max_seconds:.1f} s (median "
            f"{r.convergence_median_seconds:.1f} s, as the captures bound it)"
        )
    if r.members_stuck_reconciling:
        text += f"; {int(r.members_stuck_reconciling)} member(s) stuck reconciling"
    if not pd.isna(r.classic_members) and r.classic_members:
        text += f"; {int(r.classic_members)} classic member(s) left: a migration in progress"
    return text


def _change(r: AttentionRow) -> tuple[str, str] | None:
    """The change and what it saves; None for keep."""
    text = actions.change_text(r)
    return None if text == "keep" else (text, actions.saving(r))


def _timeline(d: GroupDetails, r: GroupRow, name: str) -> Markup:
    mine = _mine(d.timeline, r)
    marks = timeline_marks(mine).get((r.cluster, r.group_id), [])
    if not marks:
        return _groups().timeline(None, None, 0)
    chart = svg.timeline(f"Generations of {name}, by cause", {name: marks})
    rows = [
        [
            str(g.generation),
            f"{g.started_at:%H:%M:%S}" if not pd.isna(g.started_at) else "n/a",
            f"{int(g.duration_ms):,} ms" if present(g.duration_ms) else "n/a",
            g.cause_kind,
            g.cause if isinstance(g.cause, str) else "not logged",
        ]
        for g in mine.head(LISTED_GENERATIONS).itertuples()
    ]
    listed = table(
        ["generation", "started (UTC)", "duration", "cause", "logged reason"],
        rows,
        numeric=frozenset({0, 1, 2}),
        words=frozenset({3}),
    )
    return _groups().timeline(chart, listed, len(mine) - len(rows))


def _comparison(d: GroupDetails, r: GroupRow) -> Markup:
    mine = _mine(d.recommendations, r)
    if mine.empty:
        return _groups().comparison(None, "", "", None, None)
    c = next(mine.itertuples())
    declared = c.compared_with if isinstance(c.compared_with, str) else c.declared_assignor
    metrics: tuple[tuple[str, str, svg.Unit], ...] = (
        ("paused partitions (sum)", "paused_partitions", "count"),
        ("max count spread", "max_count_spread", "count"),
        ("mean lag skew", "mean_lag_skew", "ratio"),
        ("stickiness", "stickiness", "percent"),
    )
    rows = [
        [
            label,
            svg.fmt(_number(getattr(c, f"declared_{m}")), unit),
            svg.fmt(_number(getattr(c, f"recommended_{m}")), unit),
        ]
        for label, m, unit in metrics
    ]
    compared = table(
        [
            "metric",
            f"declared ({declared or 'n/a'})",
            f"recommended ({c.recommended_assignor})",
        ],
        rows,
        numeric=frozenset({1, 2}),
    )
    return _groups().comparison(
        f"{int(c.events)} events" if present(c.events) else "its events",
        declared or "n/a",
        c.recommended_assignor or "n/a",
        compared,
        c.reason if isinstance(c.reason, str) else None,
    )


def _number(v: Cell) -> float | None:
    return float(v) if present(v) else None


def _lag(d: GroupDetails, r: GroupRow) -> Markup:
    mine = _mine(d.lag, r)
    rows = [
        [
            g.topic,
            svg.fmt(_number(g.lag_p50), "count"),
            svg.fmt(_number(g.lag_p99), "count"),
            svg.fmt(_number(g.lag_max), "count"),
            hms(_number(g.time_lag_p50_seconds)),
            hms(_number(g.time_lag_max_seconds)),
        ]
        for g in mine.itertuples()
    ]
    headers = ["topic", "p50", "p99", "max", "time lag p50", "time lag max"]
    topics = None if mine.empty else table(headers, rows, numeric=frozenset({1, 2, 3, 4, 5}))
    return _groups().lag(topics)
