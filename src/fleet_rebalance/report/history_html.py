"""The report's "last N days" section: fleet totals per day, small multiples of the
listed groups' days, and what is new since last week (history.html.j2 writes it)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from markupsafe import Markup

from fleet_rebalance.metrics.attention import present
from fleet_rebalance.report import actions, svg
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.history import HistoryFacts
from fleet_rebalance.report.page import Links, group_cell, status_badge, table
from fleet_rebalance.report.templating import Macros
from fleet_rebalance.vocabulary import Status

BAD = (Status.ERR, Status.STOP, Status.STALL)


@dataclass(frozen=True)
class Latest:
    """A line's last value as the page writes it beside the line, and its date (mm-dd)."""

    value: str
    on: str


@dataclass(frozen=True)
class Items:
    """A list of groups, each with its row's words; `more` says how many it left out."""

    title: str
    entries: list[tuple[Markup, str]]
    more: str | None
    total: int


def render(f: DayFacts, h: HistoryFacts, links: Links) -> Markup:
    return _history().section(
        h.dates, len(h.fleet.date), _fleet(h), _new(h, links), _groups(f, h, links)
    )


def _history() -> Macros:
    return Macros("history.html.j2")


def _by_date(frame: pd.DataFrame, dates: Sequence[dt.date], column: str) -> list:
    """One value per window date: the column's, or None where the date has no row."""
    values = {d: v for d, v in zip(frame.date, frame[column], strict=True)}
    return [values.get(d) if present(values.get(d)) else None for d in dates]


def _fleet(h: HistoryFacts) -> Markup:
    series = (
        ("rebalances per day", "rebalances", "count"),
        ("paused partition-time per day", "paused_partition_seconds", "partition-s"),
        ("groups needing attention", "needing_attention", "count"),
        ("groups with a change to make", "changes", "count"),
    )
    figures = [
        (
            caption,
            svg.sparkline(_by_date(h.fleet, h.dates, column)),
            _latest(h, h.fleet, column, unit),
        )
        for caption, column, unit in series
    ]
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
    totals = table(headers, rows, numeric=frozenset({1, 2, 3, 4, 5}), cls="totals")
    return _history().fleet(figures, totals)


def _seconds(value: float | None) -> str:
    """Partition-seconds as a number (the header carries the unit)."""
    return f"{value:,.1f}" if present(value) else "n/a"


def _latest(h: HistoryFacts, frame: pd.DataFrame, column: str, unit: str) -> Latest | None:
    """The last date's value, written beside its line; None without any row."""
    values = _by_date(frame, h.dates, column)
    last = next((i for i in range(len(values) - 1, -1, -1) if values[i] is not None), None)
    if last is None:
        return None
    return Latest(_value(values[last], unit), f"{h.dates[last]:%m-%d}")


def _value(v: float | None, unit: str) -> str:
    if not present(v):
        return "n/a"
    if unit == "partition-s":
        return actions.partition_seconds(v)
    if unit == "messages":
        return f"{v:,.0f} messages"
    return f"{v:,.0f}"


def _new(h: HistoryFacts, links: Links) -> Markup:
    lists = (
        []
        if h.baseline is None
        else [
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
        ]
    )
    return _history().new(h.baseline, h.dates[-1], lists)


def _kind(kind: object) -> str:
    return kind if isinstance(kind, str) else "no row"


def _items(
    title: str, frame: pd.DataFrame, total: int, links: Links, text: Callable[[Any], str]
) -> Items:
    """The frame's groups, each with `text` of its row (the frame's columns)."""
    entries = [(group_cell(links, r.cluster, r.group_id), text(r)) for r in frame.itertuples()]
    return Items(title, entries, actions.more(len(frame), total), total)


def _groups(f: DayFacts, h: HistoryFacts, links: Links) -> Markup | None:
    if f.listed.empty:
        return None
    rows: list[list[str | Markup]] = []
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
                _history().days(
                    svg.status_strip(statuses),
                    status_badge(latest, latest) if latest else None,
                    bad,
                    len(rated),
                ),
            ]
        )
    headers = [
        "group",
        "rebalances per day",
        "paused partition-time per day",
        "p99 lag of its worst topic",
        "Burrow (last capture) per day",
    ]
    return _history().groups(table(headers, rows))


def _spark_cell(h: HistoryFacts, mine: pd.DataFrame, column: str, unit: str) -> Markup:
    return _history().trend(
        svg.sparkline(_by_date(mine, h.dates, column)), _latest(h, mine, column, unit)
    )
