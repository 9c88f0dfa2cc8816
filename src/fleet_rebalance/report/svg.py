"""Inline SVG charts: the report must open offline, with no JavaScript or fonts to fetch."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from html import escape

from fleet_rebalance.metrics.attention import hms

WIDTH, LABEL, ROW = 760, 230, 22
COLOURS = ("#3b6ea8", "#e07b39", "#5a9e5a", "#b54a4a", "#8063a8")
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


def _svg(height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'role="img" aria-label="{safe_text(title)}" font-family="sans-serif" font-size="12">'
        f'<text x="0" y="14" font-weight="bold">{safe_text(title)}</text>{"".join(body)}</svg>'
    )


def _label(y: float, text: str) -> str:
    """A row's label, ellipsized to the label column, whole in its tooltip."""
    shown = _ellipsized(visible(text))  # cut as shown: spelled-out characters count
    return (
        f'<text x="{LABEL - 6}" y="{y + 14}" text-anchor="end"><title>{safe_text(text)}</title>'
        f"{escape(shown, quote=True)}</text>"
    )


def _scale(values: Sequence[float | None], log: bool, span: int = WIDTH - LABEL - 70):
    present = [v for v in values if v is not None and not math.isnan(v)]
    top = max(present, default=0.0) or 1.0
    if log:
        top_log = math.log10(top + 1)
        return lambda v: span * math.log10(max(v, 0) + 1) / (top_log or 1)
    return lambda v: span * max(v, 0) / top


def _fmt(v: float | None, unit: str = "ratio") -> str:
    """A value as its unit reads: `count` a whole number, `duration` h:mm:ss (seconds in),
    `percent` (a 0..1 ratio in), `ratio` two decimals."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if unit == "count":
        return f"{v:,.0f}"
    if unit == "duration":
        return hms(v)
    if unit == "percent":
        return f"{v * 100:.1f} %"
    return f"{v:,.2f}"


def _ellipsized(text: str, width: int = LABEL - 10) -> str:
    """text cut with an ellipsis to fit `width` px at 12 px sans-serif (~6.6 px a
    character): the label column never clips an id at its left edge."""
    most = max(4, int(width / 6.6))
    return text if len(text) <= most else text[: most - 1] + "…"


def _legend(y: float, entries: Sequence[tuple[str, str]]) -> str:
    """A legend row of (SVG shape, label) entries, each as wide as its label."""
    parts, x = [], float(LABEL)
    for shape, label in entries:
        parts.append(
            f'<g transform="translate({x:.0f},{y - 10})">{shape}'
            f'<text x="14" y="10">{safe_text(label)}</text></g>'
        )
        x += 34 + 6.6 * len(label)
    return '<g class="legend">' + "".join(parts) + "</g>"


def _swatch(colour: str) -> str:
    return f'<rect width="10" height="10" fill="{colour}"/>'


def bars(
    title: str,
    labels: Sequence[str],
    series: dict[str, Sequence[float | None]],
    log: bool = False,
    unit: str = "ratio",
) -> str:
    """Grouped horizontal bars: one row per label, one bar per series, a legend of the
    series; values written in `unit` (see _fmt)."""
    names = list(series)
    x = _scale([v for values in series.values() for v in values], log)
    body, y = [], 28
    body.append(_legend(y, [(_swatch(COLOURS[i % len(COLOURS)]), n) for i, n in enumerate(names)]))
    y += 8
    for row, label in enumerate(labels):
        body.append(_label(y, label))
        for i, name in enumerate(names):
            v = series[name][row]
            h = (ROW - 4) / len(names)
            top = y + 2 + i * h
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                body.append(
                    f'<rect x="{LABEL}" y="{top:.1f}" width="{x(v):.1f}" '
                    f'height="{h - 1:.1f}" fill="{COLOURS[i % len(COLOURS)]}"/>'
                )
            body.append(
                f'<text x="{LABEL + x(v or 0) + 4:.1f}" y="{top + h - 2:.1f}" '
                f'font-size="10">{_fmt(v, unit)}</text>'
            )
        y += ROW
    return _svg(y + 8, body, title + (" (log scale)" if log else ""))


BAND_LOW, BAND_MID, BAND_HIGH, MAX_TICK = "#c9d6e8", "#3b6ea8", "#9fb8d8", "#b54a4a"


def bands(title: str, labels: Sequence[str], rows: Sequence[tuple[float, ...]]) -> str:
    """Percentile bands of a count (messages) per row on a log axis: 0..p50 pale,
    p50..p90 dark, p90..p99 light, a max tick; the four values written beside."""
    x = _scale([v for r in rows for v in r], log=True, span=WIDTH - LABEL - 330)
    legend = _legend(
        28,
        [
            (_swatch(BAND_LOW), "0 to p50"),
            (_swatch(BAND_MID), "p50 to p90"),
            (_swatch(BAND_HIGH), "p90 to p99"),
            (f'<rect x="4" width="2" height="12" y="-1" fill="{MAX_TICK}"/>', "max"),
        ],
    )
    body, y = [legend], 36
    for label, (p50, p90, p99, top) in zip(labels, rows, strict=True):
        body.append(_label(y, label))
        if all(v is not None and not math.isnan(v) for v in (p50, p90, p99)):
            body.append(
                f'<rect x="{LABEL}" y="{y + 4}" width="{x(p50):.1f}" height="12" '
                f'fill="{BAND_LOW}"/><rect x="{LABEL + x(p50):.1f}" y="{y + 4}" '
                f'width="{x(p90) - x(p50):.1f}" height="12" fill="{BAND_MID}"/>'
                f'<rect x="{LABEL + x(p90):.1f}" y="{y + 4}" '
                f'width="{x(p99) - x(p90):.1f}" height="12" fill="{BAND_HIGH}"/>'
            )
        if top is not None and not math.isnan(top):
            body.append(
                f'<line x1="{LABEL + x(top):.1f}" x2="{LABEL + x(top):.1f}" '
                f'y1="{y + 1}" y2="{y + 19}" stroke="{MAX_TICK}" stroke-width="2"/>'
            )
        values = " · ".join(
            f"{name} {_fmt(v, 'count')}"
            for name, v in (("p50", p50), ("p90", p90), ("p99", p99), ("max", top))
        )
        body.append(
            f'<text x="{LABEL + x(top or 0) + 6:.1f}" y="{y + 15}" font-size="10">{values}</text>'
        )
        y += ROW
    return _svg(y + 8, body, title)


def timeline(title: str, lanes: dict[str, list[tuple[dt.datetime, str, str]]]) -> str:
    """One lane per group; each rebalance a mark at its start, coloured by protocol, its
    cause in the tooltip. The axis runs from the hour before the first mark to the hour
    after the last, ticks every 1, 2, 3, 6 or 12 hours (at most 12 ticks)."""
    span = WIDTH - LABEL - 20
    times = [at for marks in lanes.values() for at, _, _ in marks]
    start = min(times).replace(minute=0, second=0, microsecond=0)
    end = max(times).replace(minute=0, second=0, microsecond=0) + dt.timedelta(hours=1)
    hours = (end - start).total_seconds() / 3600
    step = next(s for s in (1, 2, 3, 6, 12, 24) if hours / s <= 12)

    def at_x(at: dt.datetime) -> float:
        return LABEL + span * (at - start).total_seconds() / 3600 / hours

    body, y = [], 30
    bottom = 30 + ROW * len(lanes)
    tick, days = start, start.date() != (end - dt.timedelta(seconds=1)).date()
    while tick <= end:
        gx = at_x(tick)
        text = tick.strftime("%m-%d %H:%M" if days and tick.hour == 0 else "%H:%M")
        body.append(
            f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="24" y2="{bottom}" stroke="#ddd"/>'
            f'<text x="{gx:.1f}" y="{bottom + 10}" text-anchor="middle" font-size="10">'
            f"{text}</text>"
        )
        tick += dt.timedelta(hours=step)
    for lane, marks in lanes.items():
        body.append(_label(y, lane))
        for at, protocol, tip in marks:
            colour = COLOURS[0] if protocol == "classic" else COLOURS[1]
            body.append(
                f'<rect x="{at_x(at) - 2:.1f}" y="{y + 3}" width="4" '
                f'height="14" fill="{colour}"><title>{safe_text(tip)}</title></rect>'
            )
        y += ROW
    legend = _legend(
        y + 34,
        [
            (_swatch(COLOURS[0]), "classic protocol"),
            (_swatch(COLOURS[1]), "consumer protocol (KIP-848)"),
        ],
    )
    return _svg(y + 44, [*body, legend], f"{title}, {start:%Y-%m-%d %H:%M} to {end:%H:%M} UTC")
