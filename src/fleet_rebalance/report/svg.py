"""Inline SVG charts: the report must open offline, with no JavaScript or fonts to fetch.

Charts are drawn in a narrow coordinate space (WIDTH) and scaled by the page to the
width they get: a row's label sits on its own line above its bars, so a phone shows the
whole id at a readable size and a wide screen places charts side by side.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Literal, TypeGuard

from fleet_rebalance.metrics.attention import hms
from fleet_rebalance.vocabulary import Cause, Status

WIDTH, LINE = 440, 14
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
# Invisible characters str.isprintable() lets through (they are marks or letters):
# variation selectors, the combining grapheme joiner, Hangul and Khmer fillers.
INVISIBLE = frozenset(
    {
        0x034F,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x3164,
        0xFFA0,
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    }
)


def safe_text(value: object) -> str:
    """value as the report shows it, in element text and in attributes alike: every
    control, format (bidi overrides and isolates such as U+202E, zero-width characters),
    separator other than the space, private-use, unassigned or otherwise invisible
    character spelled out as \\uXXXX, so a group id cannot pose as another; a backslash
    doubled, so an id that spells out \\u202e itself stays distinct; then HTML-escaped,
    quotes included."""
    return escape(visible(value), quote=True)


def visible(value: object) -> str:
    """safe_text without the HTML escaping: for the terminal summary."""
    return "".join(_visible(c) for c in str(value))


def _visible(c: str) -> str:
    if c == "\\":
        return "\\\\"
    code = ord(c)
    if c.isprintable() and code not in INVISIBLE:
        return c
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def status_colour(status: object) -> str:
    return STATUS_COLOURS.get(status, NO_STATUS) if isinstance(status, str) else NO_STATUS


def _svg(height: float, body: list[str], title: str) -> str:
    """A chart scaled by the page (class chart), its own title on top."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} '
        f'{height:.0f}" width="{WIDTH}" height="{height:.0f}" role="img" '
        f'aria-label="{safe_text(title)}" font-family="sans-serif" font-size="12">'
        f'<text x="0" y="14" font-weight="bold">{_wrapped_title(title)}</text>'
        f"{''.join(body)}</svg>"
    )


def _wrapped_title(title: str) -> str:
    """The title on as many lines as WIDTH needs (SVG text does not wrap itself)."""
    lines = _wrap(visible(title), int(WIDTH / 7.0))
    return "".join(
        f'<tspan x="0" dy="{0 if i == 0 else 15}">{escape(line, quote=True)}</tspan>'
        for i, line in enumerate(lines)
    )


def _title_height(title: str) -> int:
    return 15 * len(_wrap(visible(title), int(WIDTH / 7.0)))


def _wrap(text: str, most: int) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > most:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def _label(y: float, text: str, href: str | None = None, note: str = "") -> str:
    """A row's label on its own line above the row, whole in its tooltip; cut in the
    middle only when longer than the chart is wide, so the part that tells groups apart
    (cluster at the start, the id's end) stays; `note` (a count) follows it; a link to
    the group's section where it has one."""
    shown = _ellipsized(visible(text))  # cut as shown: spelled-out characters count
    note_text = f'<tspan fill="#555"> {escape(note)}</tspan>' if note else ""
    label = (
        f'<text x="0" y="{y + 11}"><title>{safe_text(text)}</title>'
        f"{escape(shown, quote=True)}{note_text}</text>"
    )
    return f'<a href="#{href}" fill="#1a4f8b">{label}</a>' if href else label


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
) -> str:
    """Grid lines and labels of a log axis under the rows."""
    parts = []
    for t in ticks:
        gx = x(t)
        parts.append(
            f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{top_y}" y2="{bottom_y}" stroke="#e4e4e4"/>'
            f'<text x="{gx:.1f}" y="{bottom_y + 11}" text-anchor="middle" font-size="10" '
            f'class="tick">{_tick_text(t, unit)}</text>'
        )
    return '<g class="axis">' + "".join(parts) + "</g>"


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


def _legend(y: float, entries: Sequence[tuple[str, str]]) -> tuple[str, float]:
    """A legend of (SVG shape, label) entries, each as wide as its label, wrapped onto
    as many rows as WIDTH needs; returns it and the y below it."""
    parts, x = [], 0.0
    for shape, label in entries:
        wide = 22 + 6.6 * len(label)
        if x and x + wide > WIDTH:
            x, y = 0.0, y + 16
        parts.append(
            f'<g transform="translate({x:.0f},{y - 10})">{shape}'
            f'<text x="14" y="10">{safe_text(label)}</text></g>'
        )
        x += wide + 8
    return '<g class="legend">' + "".join(parts) + "</g>", y + 10


def _swatch(colour: str) -> str:
    return f'<rect width="10" height="10" fill="{colour}"/>'


def bars(
    title: str,
    labels: Sequence[str],
    series: dict[str, Sequence[float | None]],
    log: bool = False,
    unit: Unit = "ratio",
    links: Sequence[str | None] | None = None,
) -> str:
    """Grouped horizontal bars: one row per label (the label above, linked to the
    group's section where `links` gives one), one bar per series, a legend of the
    series; values written in `unit` (see _fmt); a log axis gets ticks."""
    title = title + (" (log scale)" if log else "")
    names = list(series)
    values = [v for vals in series.values() for v in vals]
    widest = max((len(fmt(v, unit)) for v in values), default=3)
    span = WIDTH - 8 - widest * 6.0
    x = _scale(values, log, span)
    y: float = _title_height(title) + 14
    legend, y = _legend(y, [(_swatch(COLOURS[i % len(COLOURS)]), n) for i, n in enumerate(names)])
    body = [legend]
    top_y = y
    h = 10
    for row, label in enumerate(labels):
        body.append(_label(y, label, links[row] if links else None))
        y += LINE + 1
        for i, name in enumerate(names):
            v = series[name][row]
            if _present(v):
                body.append(
                    f'<rect x="0" y="{y:.1f}" width="{x(v):.1f}" height="{h - 1}" '
                    f'fill="{COLOURS[i % len(COLOURS)]}"/>'
                )
            body.append(
                f'<text x="{x(v if _present(v) else 0) + 4:.1f}" y="{y + h - 1:.1f}" '
                f'font-size="10">{fmt(v, unit)}</text>'
            )
            y += h
        y += 6
    if log:  # under the bars: drawn first
        body.insert(1, _axis(top_y, y, x, _log_ticks(values, unit), unit))
        y += 14
    return _svg(y + 4, body, title)


BAND_LOW, BAND_MID, BAND_HIGH, MAX_TICK = "#c9d6e8", "#3b6ea8", "#9fb8d8", "#b54a4a"


def bands(
    title: str,
    labels: Sequence[str],
    rows: Sequence[tuple[float, ...]],
    links: Sequence[str | None] | None = None,
) -> str:
    """Percentile bands of a count (messages) per row on a log axis with ticks: 0..p50
    pale, p50..p90 dark, p90..p99 light, a max tick; the four values written below."""
    x = _scale([v for r in rows for v in r], log=True, span=WIDTH - 20)
    legend, y = _legend(
        _title_height(title) + 14,
        [
            (_swatch(BAND_LOW), "0 to p50"),
            (_swatch(BAND_MID), "p50 to p90"),
            (_swatch(BAND_HIGH), "p90 to p99"),
            (f'<rect x="4" width="2" height="12" y="-1" fill="{MAX_TICK}"/>', "max"),
        ],
    )
    body, top_y = [legend], y
    for row, (label, (p50, p90, p99, top)) in enumerate(zip(labels, rows, strict=True)):
        body.append(_label(y, label, links[row] if links else None))
        y += LINE + 1
        if all(_present(v) for v in (p50, p90, p99)):
            body.append(
                f'<rect x="0" y="{y}" width="{x(p50):.1f}" height="12" '
                f'fill="{BAND_LOW}"/><rect x="{x(p50):.1f}" y="{y}" '
                f'width="{x(p90) - x(p50):.1f}" height="12" fill="{BAND_MID}"/>'
                f'<rect x="{x(p90):.1f}" y="{y}" '
                f'width="{x(p99) - x(p90):.1f}" height="12" fill="{BAND_HIGH}"/>'
            )
        if _present(top):
            body.append(
                f'<line x1="{x(top):.1f}" x2="{x(top):.1f}" y1="{y - 3}" y2="{y + 15}" '
                f'stroke="{MAX_TICK}" stroke-width="2"/>'
            )
        written = " · ".join(
            f"{name} {fmt(v, 'count')}"
            for name, v in (("p50", p50), ("p90", p90), ("p99", p99), ("max", top))
        )
        body.append(f'<text x="0" y="{y + 25}" font-size="10">{written}</text>')
        y += 34
    values = [v for r in rows for v in r]
    body.insert(1, _axis(top_y, y, x, _log_ticks(values, "count"), "count"))  # under the bands
    return _svg(y + 18, body, title)


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
) -> str:
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
        [(_swatch(colours[c]), f"{c} ({counts[c]})") for c in order],
    )

    def at_x(at: dt.datetime) -> float:
        return 12 + span * (at - start).total_seconds() / 3600 / hours

    body, top_y = [legend], y
    for lane, marks in lanes.items():
        body.append(_label(y, lane, (links or {}).get(lane), (notes or {}).get(lane, "")))
        y += LINE + 1
        body.append(f'<line x1="12" x2="{12 + span}" y1="{y + 7}" y2="{y + 7}" stroke="#eee"/>')
        for at, cause, tip in marks:
            body.append(
                f'<rect x="{at_x(at) - 2:.1f}" y="{y}" width="4" height="14" '
                f'fill="{colours[cause]}"><title>{safe_text(tip)}</title></rect>'
            )
        y += 20
    tick, days = start, start.date() != (end - dt.timedelta(seconds=1)).date()
    grid = []
    while tick <= end:
        gx = at_x(tick)
        text = tick.strftime("%m-%d %H:%M" if days and tick.hour == 0 else "%H:%M")
        grid.append(
            f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{top_y}" y2="{y}" stroke="#ddd"/>'
            f'<text x="{gx:.1f}" y="{y + 11}" text-anchor="middle" font-size="10">'
            f"{text}</text>"
        )
        tick += dt.timedelta(hours=step)
    return _svg(y + 18, [body[0], *grid, *body[1:]], full)


def sparkline(values: Sequence[float | None], width: int = 120, height: int = 26) -> str:
    """A small line of one value per day (None: no row that day, a gap), the last
    point marked; one day is one point. The numbers are written beside it by the page."""
    present = [v for v in values if _present(v)]
    top = max(present, default=0.0) or 1.0
    n = len(values)

    def xy(i: int, v: float) -> tuple[float, float]:
        x = 4 + (width - 8) * (i / (n - 1) if n > 1 else 0.5)
        return x, height - 4 - (height - 8) * max(v, 0) / top

    parts, run = [], []
    for i, v in enumerate(values):
        if _present(v):
            run.append(xy(i, v))
        if (not _present(v) or i == n - 1) and run:
            if len(run) > 1:
                points = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
                parts.append(
                    f'<polyline points="{points}" fill="none" stroke="{COLOURS[0]}" '
                    'stroke-width="1.5"/>'
                )
            for x, y in run:
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.8" fill="{COLOURS[0]}"/>')
            run = []
    last = next(((i, v) for i, v in reversed(list(enumerate(values))) if _present(v)), None)
    if last is not None:
        x, y = xy(*last)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{COLOURS[3]}"/>')
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="spark" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" aria-hidden="true">'
        f'<line x1="4" x2="{width - 4}" y1="{height - 4}" y2="{height - 4}" stroke="#ddd"/>'
        f"{''.join(parts)}</svg>"
    )


def status_strip(statuses: Sequence[str | None], size: int = 10) -> str:
    """One square per day coloured by that day's Burrow status (grey where unrated or
    absent); the page writes the statuses beside it."""
    squares = "".join(
        f'<rect x="{i * (size + 2)}" y="0" width="{size}" height="{size}" '
        f'fill="{status_colour(s)}"><title>{safe_text(s or "no row")}</title></rect>'
        for i, s in enumerate(statuses)
    )
    width = max(len(statuses) * (size + 2), size)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="spark" width="{width}" '
        f'height="{size}" viewBox="0 0 {width} {size}" aria-hidden="true">{squares}</svg>'
    )
