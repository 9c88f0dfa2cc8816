"""The report's "last N days" section: fleet totals per day, small multiples of the
listed groups' days, and what is new since last week."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from fleet_rebalance.metrics.attention import present
from fleet_rebalance.report import actions, svg
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.history import HistoryFacts
from fleet_rebalance.report.page import Links, group_cell, status_badge, table
from fleet_rebalance.report.svg import safe_text
from fleet_rebalance.vocabulary import Status

BAD = (Status.ERR, Status.STOP, Status.STALL)


def render(f: DayFacts, h: HistoryFacts, links: Links) -> str:
    held = list(h.fleet.date)
    parts = [
        f"<h2 id='history'>Last {len(h.dates)} days: {h.dates[0]} to {h.dates[-1]}</h2>",
        f"<p class='note'>{len(held)} of the {len(h.dates)} dates have rows in the "
        "warehouse (group_health); a date without is a gap in every line below.</p>",
        _fleet(h),
        _new(h, links),
        _groups(f, h, links),
    ]
    return "".join(parts)


def _by_date(frame: pd.DataFrame, dates: Sequence[dt.date], column: str) -> list:
    """One value per window date: the column's, or None where the date has no row."""
    values = {d: v for d, v in zip(frame.date, frame[column], strict=True)}
    return [values.get(d) if present(values.get(d)) else None for d in dates]


def _fleet(h: HistoryFacts) -> str:
    series = (
        ("rebalances per day", "rebalances", "count"),
        ("paused partition-time per day", "paused_partition_seconds", "partition-s"),
        ("groups needing attention", "needing_attention", "count"),
        ("groups with a change to make", "changes", "count"),
    )
    figures = "".join(
        f"<figure><figcaption>{safe_text(caption)}</figcaption>"
        f"{svg.sparkline(_by_date(h.fleet, h.dates, column))}"
        f"{_latest(h, h.fleet, column, unit)}</figure>"
        for caption, column, unit in series
    )
    rows = [
        [
            str(r.date),
            f"{int(r.groups):,}",
            f"{int(r.rebalances):,}" if present(r.rebalances) else "n/a",
            _seconds(r.paused_partition_seconds),
            f"{int(r.needing_attention):,}",
            f"{int(r.changes):,}",
        ]
        for r in h.fleet.itertuples()
    ]
    headers = [
        "date",
        "groups rated",
        "rebalances",
        "paused (partition-s)",
        "needing attention",
        "changes to make",
    ]
    return f"<h3>Fleet totals per day</h3><div class='multiples'>{figures}</div>" + table(
        headers, rows, numeric=frozenset({1, 2, 3, 4, 5}), cls="totals"
    )


def _seconds(value: float | None) -> str:
    """Partition-seconds as a number (the header carries the unit)."""
    return f"{value:,.1f}" if present(value) else "n/a"


def _latest(h: HistoryFacts, frame: pd.DataFrame, column: str, unit: str) -> str:
    values = _by_date(frame, h.dates, column)
    last = next((i for i in range(len(values) - 1, -1, -1) if values[i] is not None), None)
    if last is None:
        return "<span class='note'>no rows</span>"
    return (
        f"<span class='num'>{safe_text(_value(values[last], unit))}</span> "
        f"<span class='note'>on {h.dates[last]:%m-%d}</span>"
    )


def _value(v: float | None, unit: str) -> str:
    if not present(v):
        return "n/a"
    if unit == "partition-s":
        return actions.partition_seconds(v)
    if unit == "messages":
        return f"{v:,.0f} messages"
    return f"{v:,.0f}"


def _new(h: HistoryFacts, links: Links) -> str:
    if h.baseline is None:
        return (
            "<h3>New since last week</h3><p>No earlier date of the past week is in the "
            "warehouse to compare with.</p>"
        )
    run_date = h.dates[-1]
    parts = [
        f"<h3>New since last week: {run_date} compared with {h.baseline}</h3>",
        "<ul>",
        _items(
            f"{h.started_total} started needing attention",
            h.started,
            h.started_total,
            links,
            lambda r: "; ".join(r.attention) if r.attention is not None else "",
        ),
        _items(
            f"{h.appeared_total} changes appeared",
            h.appeared,
            h.appeared_total,
            links,
            lambda r: f"{r.change_kind} (was {_kind(r.was)})",
        ),
        _items(
            f"{h.gone_total} changes went away",
            h.gone,
            h.gone_total,
            links,
            lambda r: f"{r.was} (now {_kind(r.change_kind)})",
        ),
        "</ul>",
    ]
    return "".join(parts)


def _kind(kind: object) -> str:
    return kind if isinstance(kind, str) else "no row"


def _items(
    title: str, frame: pd.DataFrame, total: int, links: Links, text: Callable[[Any], str]
) -> str:
    """A list of the frame's groups, each with `text` of its row (the frame's columns)."""
    entries = "".join(
        f"<li>{group_cell(links, r.cluster, r.group_id)}: {safe_text(text(r))}</li>"
        for r in frame.itertuples()
    )
    more = actions.more(len(frame), total)
    tail = f"<li class='note'>{safe_text(more)}</li>" if more else ""
    return (
        f"<li>{safe_text(title)}<ul>{entries}{tail}</ul></li>"
        if total
        else (f"<li>{safe_text(title)}</li>")
    )


def _groups(f: DayFacts, h: HistoryFacts, links: Links) -> str:
    if f.listed.empty:
        return ""
    rows = []
    for r in f.listed.itertuples():
        mine = h.groups[(h.groups.cluster == r.cluster) & (h.groups.group_id == r.group_id)]
        statuses = _by_date(mine, h.dates, "last_status")
        rated = [s for s in statuses if s is not None]
        bad = sum(s in BAD for s in rated)
        latest = next((s for s in reversed(statuses) if s is not None), None)
        rows.append(
            [
                group_cell(links, r.cluster, r.group_id),
                _spark_cell(h, mine, "rebalances", "count"),
                _spark_cell(h, mine, "paused_partition_seconds", "partition-s"),
                _spark_cell(h, mine, "lag_p99", "messages"),
                svg.status_strip(statuses)
                + (status_badge(latest, latest) if latest else "not rated")
                + f" <span class='note'>ERR {bad} of {len(rated)} days</span>",
            ]
        )
    headers = [
        "group",
        "rebalances per day",
        "paused partition-time per day",
        "p99 lag of its worst topic",
        "Burrow (last capture) per day",
    ]
    return (
        "<h3>The listed groups, day by day</h3>"
        + table(headers, rows)
        + "<p class='note'>Each line one point per date of the window (a gap where the "
        "group has no row), the last date's value written beside it.</p>"
    )


def _spark_cell(h: HistoryFacts, mine: pd.DataFrame, column: str, unit: str) -> str:
    return svg.sparkline(_by_date(mine, h.dates, column)) + _latest(h, mine, column, unit)
