"""Inline SVG charts: the report must open offline, with no JavaScript or fonts to fetch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

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
    return f'<text x="{LABEL - 6}" y="{y + 14}" text-anchor="end">{safe_text(text)}</text>'


def _scale(values: Sequence[float | None], log: bool, span: int = WIDTH - LABEL - 70):
    present = [v for v in values if v is not None and not math.isnan(v)]
    top = max(present, default=0.0) or 1.0
    if log:
        top_log = math.log10(top + 1)
        return lambda v: span * math.log10(max(v, 0) + 1) / (top_log or 1)
    return lambda v: span * max(v, 0) / top


def _fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}"


def bars(
    title: str, labels: Sequence[str], series: dict[str, Sequence[float | None]], log: bool = False
) -> str:
    """Grouped horizontal bars: one row per label, one bar per series."""
    names = list(series)
    x = _scale([v for values in series.values() for v in values], log)
    body, y = [], 28
    for i, name in enumerate(names):
        body.append(
            f'<rect x="{LABEL + 150 * i}" y="{y - 10}" width="10" height="10" '
            f'fill="{COLOURS[i % len(COLOURS)]}"/><text x="{LABEL + 150 * i + 14}" '
            f'y="{y}">{safe_text(name)}</text>'
        )
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
                f'font-size="10">{_fmt(v)}</text>'
            )
        y += ROW
    return _svg(y + 8, body, title + (" (log scale)" if log else ""))


def bands(title: str, labels: Sequence[str], rows: Sequence[tuple[float, ...]]) -> str:
    """Percentile bands per row on a log axis: p50..p90 dark, p90..p99 light, a max tick."""
    x = _scale([v for r in rows for v in r], log=True, span=WIDTH - LABEL - 250)
    body, y = [], 30
    for label, (p50, p90, p99, top) in zip(labels, rows, strict=True):
        body.append(_label(y, label))
        if p50 is not None:
            body.append(
                f'<rect x="{LABEL}" y="{y + 4}" width="{x(p50):.1f}" height="12" '
                f'fill="#c9d6e8"/><rect x="{LABEL + x(p50):.1f}" y="{y + 4}" '
                f'width="{x(p90) - x(p50):.1f}" height="12" fill="#3b6ea8"/>'
                f'<rect x="{LABEL + x(p90):.1f}" y="{y + 4}" '
                f'width="{x(p99) - x(p90):.1f}" height="12" fill="#9fb8d8"/>'
                f'<line x1="{LABEL + x(top):.1f}" x2="{LABEL + x(top):.1f}" '
                f'y1="{y + 1}" y2="{y + 19}" stroke="#b54a4a" stroke-width="2"/>'
            )
        body.append(
            f'<text x="{LABEL + x(top or 0) + 6:.1f}" y="{y + 15}" font-size="10">'
            f"p50 {_fmt(p50)} · p99 {_fmt(p99)} · max {_fmt(top)}</text>"
        )
        y += ROW
    return _svg(y + 8, body, title)


def timeline(title: str, lanes: dict[str, list[tuple[float, str, str]]]) -> str:
    """One lane per group over the day's 24 hours; each rebalance a mark at its start
    hour, coloured by protocol, its cause in the tooltip."""
    span = WIDTH - LABEL - 20
    body, y = [], 30
    for hour in range(0, 25, 3):
        gx = LABEL + span * hour / 24
        body.append(
            f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="24" y2="{30 + ROW * len(lanes)}" '
            f'stroke="#ddd"/><text x="{gx:.1f}" y="{40 + ROW * len(lanes)}" '
            f'text-anchor="middle" font-size="10">{hour:02d}:00</text>'
        )
    for lane, marks in lanes.items():
        body.append(_label(y, lane))
        for hour, protocol, tip in marks:
            colour = COLOURS[0] if protocol == "classic" else COLOURS[1]
            body.append(
                f'<rect x="{LABEL + span * hour / 24 - 2:.1f}" y="{y + 3}" width="4" '
                f'height="14" fill="{colour}"><title>{safe_text(tip)}</title></rect>'
            )
        y += ROW
    legend = (
        f'<text x="{LABEL}" y="{y + 30}" font-size="10" fill="{COLOURS[0]}">■ classic '
        f'protocol</text><text x="{LABEL + 120}" y="{y + 30}" font-size="10" '
        f'fill="{COLOURS[1]}">■ consumer protocol (KIP-848)</text>'
    )
    return _svg(y + 40, [*body, legend], title)
