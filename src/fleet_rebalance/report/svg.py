"""Inline SVG charts: the report must open offline, with no JavaScript or fonts to fetch.

Charts are drawn in a narrow coordinate space (WIDTH) and scaled by the page to the
width they get: a row's label sits on its own line above its bars, so a phone shows the
whole id at a readable size and a wide screen places charts side by side. This module
computes every position, tick, colour and text; charts.svg.j2 draws them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeGuard

from markupsafe import Markup

from fleet_rebalance.metrics.attention import hms
from fleet_rebalance.report.shown import Shown, visible
from fleet_rebalance.report.templating import Macros
from fleet_rebalance.vocabulary import Cause, Status

WIDTH, LINE, BAR = 440, 14, 10
# A timeline's lanes start here, leaving room for the first tick's text.
LANE_START = 12
# How a chart writes its values (fmt): a ratio with two decimals, a whole count, h:mm:ss
# from seconds, a percentage from a 0..1 ratio, partition-seconds.
Unit = Literal["ratio", "count", "duration", "percent", "partition-s"]
COLOURS = ("#3b6ea8", "#e07b39", "#5a9e5a", "#b54a4a", "#8063a8")
# Rebalance causes as rebalance_causes names them (DESIGN.md), each its own colour; a
# generation no cause row matched is `not classified`, a cooperative revocation round
# `follow-up round`.
CAUSE_COLOURS: dict[str, str] = {
    Cause.DEPLOY_RESTART: "#3b6ea8",
    Cause.SESSION_TIMEOUT: "#c62828",
    Cause.POLL_TIMEOUT: "#e07b39",
    Cause.SCALE_OUT: "#2e7d32",
    Cause.SCALE_IN: "#81c784",
    Cause.SUBSCRIPTION_CHANGED: "#8063a8",
    Cause.PARTITIONS_ADDED: "#00838f",
    Cause.LEADER_REJOIN: "#a1887f",
    Cause.METADATA_CHANGE: "#6d4c41",
    Cause.UNKNOWN: "#757575",
    "follow-up round": "#bdbdbd",
    "not classified": "#424242",
}
EXTRA_CAUSE_COLOURS = ("#f9a825", "#ad1457", "#283593", "#558b2f")
# Burrow statuses: ERR red, WARN amber, OK neutral (STOP and STALL make a group ERR,
# REWIND a group WARN); always drawn with the status written beside.
STATUS_COLOURS: dict[str, str] = {
    Status.ERR: "#c62828",
    Status.STOP: "#c62828",
    Status.STALL: "#c62828",
    Status.WARN: "#f9a825",
    Status.REWIND: "#f9a825",
    Status.OK: "#9e9e9e",
}
NO_STATUS = "#e0e0e0"


def status_colour(status: object) -> str:
    return STATUS_COLOURS.get(status, NO_STATUS) if isinstance(status, str) else NO_STATUS


@dataclass(frozen=True)
class Frame:
    """A chart scaled by the page (class chart), its own title on top, on as many lines
    as WIDTH needs (SVG text does not wrap itself)."""

    width: int
    height: float
    title: str
    lines: list[Shown]


@dataclass(frozen=True)
class Swatch:
    """A legend entry at (x, y): a square of its colour, or the max tick's bar."""

    x: float
    y: float
    colour: str
    label: str
    tick: bool = False


@dataclass(frozen=True)
class Label:
    """A row's label on its own line above the row (baseline y), whole in its tooltip;
    `note` (a count) follows it; `href` the group's section where it has one."""

    y: float
    text: str
    shown: Shown
    href: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Tick:
    x: float
    text: str


@dataclass(frozen=True)
class Axis:
    """Grid lines and labels of a log axis under the rows, from top to bottom."""

    top: float
    bottom: float
    ticks: list[Tick]


@dataclass(frozen=True)
class Bar:
    """One series' bar of a row, in a slot of BAR px (no bar without a value), its value
    written after it."""

    y: float
    width: float | None
    colour: str
    text_x: float
    text: str


@dataclass(frozen=True)
class BarRow:
    label: Label
    bars: list[Bar]


@dataclass(frozen=True)
class Band:
    """A row's percentile band: 0..p50, p50..p90, p90..p99 as x positions."""

    p50: float
    p90: float
    p99: float


@dataclass(frozen=True)
class BandRow:
    label: Label
    y: float
    band: Band | None
    max_x: float | None
    written: str


@dataclass(frozen=True)
class Mark:
    x: float
    colour: str
    tip: str


@dataclass(frozen=True)
class Lane:
    label: Label
    y: float
    marks: list[Mark]


def _charts() -> Macros:
    return Macros("charts.svg.j2")


def _frame(height: float, title: str) -> Frame:
    return Frame(WIDTH, height, title, [Shown(line) for line in _title_lines(title)])


def _title_lines(title: str) -> list[str]:
    return _wrap(visible(title), int(WIDTH / 7.0))


def _title_height(title: str) -> int:
    return 15 * len(_title_lines(title))


def _wrap(text: str, most: int) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > most:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def _label(y: float, text: str, href: str | None = None, note: str = "") -> Label:
    """Cut in the middle only when longer than the chart is wide, so the part that tells
    groups apart (cluster at the start, the id's end) stays; cut as shown: spelled-out
    characters count."""
    return Label(y + 11, text, Shown(_ellipsized(visible(text))), href, note)


def _ellipsized(text: str, width: int = WIDTH - 4) -> str:
    """text cut in its middle with an ellipsis to fit `width` px at 12 px sans-serif
    (~6.6 px a character), keeping its start and its end."""
    most = max(8, int(width / 6.6))
    if len(text) <= most:
        return text
    head = (most - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (most - 1 - head) :]


def _present(v: float | None) -> TypeGuard[float]:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _scale(values: Sequence[float | None], log: bool, span: float) -> Callable[[float], float]:
    present = [v for v in values if _present(v)]
    top = max(present, default=0.0) or 1.0
    if log:
        top_log = math.log10(_log_top(top) + 1)
        return lambda v: span * math.log10(max(v, 0) + 1) / (top_log or 1)
    return lambda v: span * max(v, 0) / top


def _log_top(top: float) -> float:
    """The log axis ends at the power of ten at or above the largest value, so its last
    tick is drawn."""
    return 10 ** math.ceil(math.log10(max(top, 1.0)))


# Ticks of a log axis of durations (seconds): 1 s, 10 s, 1 min, 10 min, 1 h, 1 d, 10 d.
DURATION_TICKS = (1, 10, 60, 600, 3600, 86400, 864000)


def _log_ticks(values: Sequence[float | None], unit: Unit) -> list[float]:
    present = [v for v in values if _present(v)]
    top = _log_top(max(present, default=1.0))
    if unit == "duration":
        ticks = [t for t in DURATION_TICKS if t <= max(top, 1)]
        return [float(t) for t in ticks]
    return [10.0**k for k in range(0, round(math.log10(top)) + 1)]


def _tick_text(v: float, unit: Unit) -> str:
    if unit == "duration":
        if v < 60:
            return f"{v:.0f} s"
        if v < 3600:
            return f"{v / 60:.0f} min"
        if v < 86400:
            return f"{v / 3600:.0f} h"
        return f"{v / 86400:.0f} d"
    if v >= 1_000_000:
        return f"{v / 1_000_000:.0f}M"
    if v >= 1000:
        return f"{v / 1000:.0f}k"
    return f"{v:.0f}"


def _axis(
    top_y: float, bottom_y: float, x: Callable[[float], float], ticks: Sequence[float], unit: Unit
) -> Axis:
    return Axis(top_y, bottom_y, [Tick(x(t), _tick_text(t, unit)) for t in ticks])


def fmt(v: float | None, unit: Unit = "ratio") -> str:
    """A value as its unit reads: `count` a whole number, `duration` h:mm:ss (seconds in),
    `percent` (a 0..1 ratio in), `partition-s` partition-seconds, `ratio` two decimals."""
    if not _present(v):
        return "n/a"
    if unit == "count":
        return f"{v:,.0f}"
    if unit == "duration":
        return hms(v)
    if unit == "percent":
        return f"{v * 100:.1f} %"
    if unit == "partition-s":
        return f"{v:,.1f} partition-s"
    return f"{v:,.2f}"


def _legend(
    y: float, entries: Sequence[tuple[str, str]], tick: str = ""
) -> tuple[list[Swatch], float]:
    """A legend of (colour, label) entries, each as wide as its label, wrapped onto as
    many rows as WIDTH needs (`tick` the label drawn as the max tick); returns it and the
    y below it."""
    swatches, x = [], 0.0
    for colour, label in entries:
        wide = 22 + 6.6 * len(label)
        if x and x + wide > WIDTH:
            x, y = 0.0, y + 16
        swatches.append(Swatch(x, y - 10, colour, label, tick=label == tick))
        x += wide + 8
    return swatches, y + 10


def bars(
    title: str,
    labels: Sequence[str],
    series: dict[str, Sequence[float | None]],
    log: bool = False,
    unit: Unit = "ratio",
    links: Sequence[str | None] | None = None,
) -> Markup:
    """Grouped horizontal bars: one row per label (the label above, linked to the
    group's section where `links` gives one), one bar per series, a legend of the
    series; values written in `unit` (see fmt); a log axis gets ticks."""
    title = title + (" (log scale)" if log else "")
    names = list(series)
    values = [v for vals in series.values() for v in vals]
    widest = max((len(fmt(v, unit)) for v in values), default=3)
    span = WIDTH - 8 - widest * 6.0
    x = _scale(values, log, span)
    y: float = _title_height(title) + 14
    legend, y = _legend(y, [(COLOURS[i % len(COLOURS)], n) for i, n in enumerate(names)])
    top_y = y
    rows = []
    for row, label in enumerate(labels):
        drawn = _label(y, label, links[row] if links else None)
        y += LINE + 1
        row_bars = []
        for i, name in enumerate(names):
            v = series[name][row]
            width = x(v) if _present(v) else None
            text_x = x(v if _present(v) else 0) + 4
            row_bars.append(Bar(y, width, COLOURS[i % len(COLOURS)], text_x, fmt(v, unit)))
            y += BAR
        rows.append(BarRow(drawn, row_bars))
        y += 6
    axis = None
    if log:
        axis = _axis(top_y, y, x, _log_ticks(values, unit), unit)
        y += 14
    return _charts().bars(_frame(y + 4, title), legend, axis, rows)


BAND_LOW, BAND_MID, BAND_HIGH, MAX_TICK = "#c9d6e8", "#3b6ea8", "#9fb8d8", "#b54a4a"


def bands(
    title: str,
    labels: Sequence[str],
    rows: Sequence[tuple[float, ...]],
    links: Sequence[str | None] | None = None,
) -> Markup:
    """Percentile bands of a count (messages) per row on a log axis with ticks: 0..p50
    pale, p50..p90 dark, p90..p99 light, a max tick; the four values written below."""
    x = _scale([v for r in rows for v in r], log=True, span=WIDTH - 20)
    legend, y = _legend(
        _title_height(title) + 14,
        [
            (BAND_LOW, "0 to p50"),
            (BAND_MID, "p50 to p90"),
            (BAND_HIGH, "p90 to p99"),
            (MAX_TICK, "max"),
        ],
        tick="max",
    )
    drawn, top_y = [], y
    for row, (label, (p50, p90, p99, top)) in enumerate(zip(labels, rows, strict=True)):
        row_label = _label(y, label, links[row] if links else None)
        y += LINE + 1
        band = Band(x(p50), x(p90), x(p99)) if all(_present(v) for v in (p50, p90, p99)) else None
        written = " · ".join(
            f"{name} {fmt(v, 'count')}"
            for name, v in (("p50", p50), ("p90", p90), ("p99", p99), ("max", top))
        )
        drawn.append(BandRow(row_label, y, band, x(top) if _present(top) else None, written))
        y += 34
    values = [v for r in rows for v in r]
    axis = _axis(top_y, y, x, _log_ticks(values, "count"), "count")
    colours = {"low": BAND_LOW, "mid": BAND_MID, "high": BAND_HIGH, "max": MAX_TICK}
    return _charts().bands(_frame(y + 18, title), legend, axis, drawn, colours)


def cause_colours(causes: Sequence[str]) -> dict[str, str]:
    """A colour per cause: the known ones their own, any other the next spare one."""
    colours, spare = {}, 0
    for cause in causes:
        if cause in CAUSE_COLOURS:
            colours[cause] = CAUSE_COLOURS[cause]
        else:
            colours[cause] = EXTRA_CAUSE_COLOURS[spare % len(EXTRA_CAUSE_COLOURS)]
            spare += 1
    return colours


def timeline(
    title: str,
    lanes: dict[str, list[tuple[dt.datetime, str, str]]],
    links: Mapping[str, str | None] | None = None,
    notes: Mapping[str, str] | None = None,
) -> Markup:
    """One lane per group (in the order given: the caller puts the busiest first), its
    label above it; each rebalance a mark at its start coloured by its cause (the
    legend names each, most frequent first), cause and duration in the tooltip. The axis
    runs from the hour before the first mark to the hour after the last, ticks every 1,
    2, 3, 6 or 12 hours (at most 12 ticks)."""
    times = [at for marks in lanes.values() for at, _, _ in marks]
    start = min(times).replace(minute=0, second=0, microsecond=0)
    end = max(times).replace(minute=0, second=0, microsecond=0) + dt.timedelta(hours=1)
    hours = (end - start).total_seconds() / 3600
    step = next(s for s in (1, 2, 3, 6, 12, 24) if hours / s <= 12)
    span = WIDTH - 24
    counts: dict[str, int] = {}
    for marks in lanes.values():
        for _, cause, _ in marks:
            counts[cause] = counts.get(cause, 0) + 1
    order = sorted(counts, key=lambda c: (-counts[c], c))
    colours = cause_colours(order)
    full = f"{title}, {start:%Y-%m-%d %H:%M} to {end:%H:%M} UTC"
    legend, y = _legend(
        _title_height(full) + 14,
        [(colours[c], f"{c} ({counts[c]})") for c in order],
    )

    def at_x(at: dt.datetime) -> float:
        return LANE_START + span * (at - start).total_seconds() / 3600 / hours

    drawn, top_y = [], y
    for lane, marks in lanes.items():
        label = _label(y, lane, (links or {}).get(lane), (notes or {}).get(lane, ""))
        y += LINE + 1
        drawn.append(
            Lane(label, y, [Mark(at_x(at), colours[cause], tip) for at, cause, tip in marks])
        )
        y += 20
    tick, days = start, start.date() != (end - dt.timedelta(seconds=1)).date()
    ticks = []
    while tick <= end:
        text = tick.strftime("%m-%d %H:%M" if days and tick.hour == 0 else "%H:%M")
        ticks.append(Tick(at_x(tick), text))
        tick += dt.timedelta(hours=step)
    grid = Axis(top_y, y, ticks)
    return _charts().timeline(
        _frame(y + 18, full), legend, grid, drawn, (LANE_START, LANE_START + span)
    )


def sparkline(values: Sequence[float | None], width: int = 120, height: int = 26) -> Markup:
    """A small line of one value per day (None: no row that day, a gap), the last
    point marked; one day is one point. The numbers are written beside it by the page."""
    present = [v for v in values if _present(v)]
    top = max(present, default=0.0) or 1.0
    n = len(values)

    def xy(i: int, v: float) -> tuple[float, float]:
        x = 4 + (width - 8) * (i / (n - 1) if n > 1 else 0.5)
        return x, height - 4 - (height - 8) * max(v, 0) / top

    runs: list[list[tuple[float, float]]] = []
    run: list[tuple[float, float]] = []
    for i, v in enumerate(values):
        if _present(v):
            run.append(xy(i, v))
        if (not _present(v) or i == n - 1) and run:
            runs.append(run)
            run = []
    last = next(((i, v) for i, v in reversed(list(enumerate(values))) if _present(v)), None)
    marked = xy(*last) if last is not None else None
    return _charts().sparkline(width, height, runs, marked, COLOURS[0], COLOURS[3])


def status_strip(statuses: Sequence[str | None], size: int = 10) -> Markup:
    """One square per day coloured by that day's Burrow status (grey where unrated or
    absent); the page writes the statuses beside it."""
    squares = [(i * (size + 2), status_colour(s), s or "no row") for i, s in enumerate(statuses)]
    width = max(len(statuses) * (size + 2), size)
    return _charts().status_strip(width, size, squares)
