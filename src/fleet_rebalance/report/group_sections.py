"""A section per listed group (needing attention or with a change to make): its status
and why, its generations on a timeline coloured by cause and listed with cause and
duration, the replay's declared vs recommended comparison, its lag per topic."""

from __future__ import annotations

import pandas as pd

from fleet_rebalance.metrics.attention import hms, present
from fleet_rebalance.report import actions, svg
from fleet_rebalance.report.details import GroupDetails
from fleet_rebalance.report.facts import AttentionRow, Cell, DayFacts, GroupRow
from fleet_rebalance.report.links import anchor
from fleet_rebalance.report.page import Links, status_badge, table, timeline_marks
from fleet_rebalance.report.svg import safe_text

# Generations listed in a section's table (all of them are on its timeline).
LISTED_GENERATIONS = 12


def render(f: DayFacts, d: GroupDetails, links: Links) -> str:
    if f.listed.empty:
        return ""
    sections = "".join(_section(f, d, r) for r in f.listed.itertuples())
    more = actions.more(len(f.listed), f.listed_total)
    tail = f"<p class='note'>{safe_text(more)}</p>" if more else ""
    return (
        "<h2 id='groups'>The listed groups, one section each</h2>"
        f"<div class='groups'>{sections}</div>{tail}"
    )


def _mine(frame: pd.DataFrame, r: GroupRow) -> pd.DataFrame:
    return frame[(frame.cluster == r.cluster) & (frame.group_id == r.group_id)]


def _section(f: DayFacts, d: GroupDetails, r: AttentionRow) -> str:
    name = f"{r.cluster}/{r.group_id}"
    reasons = [] if r.attention is None else list(r.attention)
    why = "".join(f"<li>{safe_text(reason)}</li>" for reason in reasons)
    parts = [
        f"<section class='group' id='{anchor(r.cluster, r.group_id)}'>",
        f"<h3><span class='id'>{safe_text(name)}</span> "
        f"{status_badge(actions.status_text(r), r.last_status)}</h3>",
        f"<ul>{why}</ul>" if why else "<p>Needs no attention (listed for its change).</p>",
        _change(r),
        _convergence(r),
        _timeline(d, r, name),
        _comparison(d, r),
        _lag(d, r),
        "<p class='note'><a href='#top'>back to the top</a></p></section>",
    ]
    return "".join(parts)


def _convergence(r: AttentionRow) -> str:
    """KIP-848: how fast the group reached each epoch's target (captures bound it from
    above), members stuck reconciling, classic members left in it."""
    bumps = getattr(r, "epoch_bumps", None)
    if bumps is None or pd.isna(bumps):
        return ""
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
    return f"<p><b>KIP-848 convergence:</b> {safe_text(text)}.</p>"


def _change(r: AttentionRow) -> str:
    text = actions.change_text(r)
    if text == "keep":
        return "<p><b>Change:</b> none recommended (keep).</p>"
    return f"<p><b>Change:</b> {safe_text(text)}; saves {safe_text(actions.saving(r))}.</p>"


def _timeline(d: GroupDetails, r: GroupRow, name: str) -> str:
    mine = _mine(d.timeline, r)
    marks = timeline_marks(mine).get((r.cluster, r.group_id), [])
    if not marks:
        return "<p>No generation of this group in the coordinator logs of this date.</p>"
    chart = svg.timeline(f"Generations of {name}, by cause", {name: marks})
    rows = [
        [
            str(g.generation),
            f"{g.started_at:%H:%M:%S}" if not pd.isna(g.started_at) else "n/a",
            f"{int(g.duration_ms):,} ms" if present(g.duration_ms) else "n/a",
            safe_text(g.cause_kind),
            safe_text(g.cause if isinstance(g.cause, str) else "not logged"),
        ]
        for g in mine.head(LISTED_GENERATIONS).itertuples()
    ]
    listed = table(
        ["generation", "started (UTC)", "duration", "cause", "logged reason"],
        rows,
        numeric=frozenset({0, 1, 2}),
        words=frozenset({3}),
    )
    hidden = len(mine) - len(rows)
    more = (
        f"<p class='note'>... and {hidden} more generations (SELECT ... FROM "
        "rebalance_timeline)</p>"
        if hidden > 0
        else ""
    )
    return chart + listed + more


def _comparison(d: GroupDetails, r: GroupRow) -> str:
    mine = _mine(d.recommendations, r)
    if mine.empty:
        return "<p>No replay comparison for this group on this date (no recommendation row).</p>"
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
            safe_text(label),
            safe_text(svg.fmt(_number(getattr(c, f"declared_{m}")), unit)),
            safe_text(svg.fmt(_number(getattr(c, f"recommended_{m}")), unit)),
        ]
        for label, m, unit in metrics
    ]
    events = f"{int(c.events)} events" if present(c.events) else "its events"
    return (
        f"<p><b>Replay over {safe_text(events)}:</b> declared "
        f"{safe_text(declared or 'n/a')} vs recommended "
        f"{safe_text(c.recommended_assignor or 'n/a')}</p>"
        + table(
            [
                "metric",
                f"declared ({declared or 'n/a'})",
                f"recommended ({c.recommended_assignor})",
            ],
            rows,
            numeric=frozenset({1, 2}),
        )
        + (f"<p class='note'>{safe_text(c.reason)}</p>" if isinstance(c.reason, str) else "")
    )


def _number(v: Cell) -> float | None:
    return float(v) if present(v) else None


def _lag(d: GroupDetails, r: GroupRow) -> str:
    mine = _mine(d.lag, r)
    if mine.empty:
        return "<p>No lag rows for this group on this date.</p>"
    rows = [
        [
            safe_text(g.topic),
            svg.fmt(_number(g.lag_p50), "count"),
            svg.fmt(_number(g.lag_p99), "count"),
            svg.fmt(_number(g.lag_max), "count"),
            hms(_number(g.time_lag_p50_seconds)),
            hms(_number(g.time_lag_max_seconds)),
        ]
        for g in mine.itertuples()
    ]
    return "<p><b>Lag per topic</b> (messages; time lag h:mm:ss)</p>" + table(
        ["topic", "p50", "p99", "max", "time lag p50", "time lag max"],
        rows,
        numeric=frozenset({1, 2, 3, 4, 5}),
    )
