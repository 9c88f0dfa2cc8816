"""warehouse/reports/<date>.html: one self-contained page (inline CSS and SVG)."""

from __future__ import annotations

import numbers
from html import escape

import pandas as pd

from fleet_rebalance.filesystems import Location, write_bytes
from fleet_rebalance.report import svg
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.summary import summary_lines
from fleet_rebalance.report.svg import safe_text

STYLE = (
    "body{font-family:sans-serif;max-width:820px;margin:24px auto;color:#222}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:12px}td,th{padding:3px 8px;border-bottom:1px solid"
    " #eee;text-align:left}pre{background:#f6f6f6;padding:8px;font-size:12px;white-space:pre-wrap}"
    ".note{color:#666;font-size:12px}"
)


def _group(row) -> str:
    return f"{row.cluster}/{row.group_id}"


def _numbers(series: pd.Series) -> list[float | None]:
    return [None if pd.isna(v) else float(v) for v in series]


def _sections(f: DayFacts) -> list[tuple[str, str, str]]:
    a = f.per_assignor
    paused, skewed, lag = f.top_paused, f.top_lag_skew, f.worst_lag
    lanes: dict[str, list[tuple[float, str, str]]] = {}
    for r in f.timeline.itertuples():
        if pd.isna(r.started_at):
            continue
        hour = r.started_at.hour + r.started_at.minute / 60 + r.started_at.second / 3600
        tip = (
            f"generation {r.generation} at {r.started_at:%H:%M:%S}: {r.cause or 'cause not logged'}"
        )
        duration = "" if pd.isna(r.duration_ms) else f", {int(r.duration_ms)} ms"
        lanes.setdefault(_group(r), []).append((hour, r.protocol, tip + duration))
    return [
        (
            "Stickiness and paused partitions per assignor",
            svg.bars(
                "Stickiness (kept / (kept + reassigned), all groups)",
                list(a.assignor),
                {"stickiness": _numbers(a.stickiness)},
            )
            + svg.bars(
                "Paused partitions over the day's rebalances",
                list(a.assignor),
                {"paused partitions": _numbers(a.paused_partitions)},
            ),
            "Eager assignors pause every partition of the group at every rebalance; "
            "cooperative ones and KIP-848 pause only what moves.",
        ),
        (
            "Lag percentile bands for the worst groups",
            svg.bands(
                "Offset lag per topic, p50-p90-p99 bands, max tick (log scale)",
                [f"{_group(r)} {r.topic}" for r in lag.itertuples()],
                [(r.lag_p50, r.lag_p90, r.lag_p99, r.lag_max) for r in lag.itertuples()],
            )
            + svg.bars(
                "Time lag in seconds (Kafka Lag Exporter's estimate)",
                [f"{_group(r)} {r.topic}" for r in lag.itertuples()],
                {
                    "p50": _numbers(lag.time_lag_p50_seconds),
                    "max": _numbers(lag.time_lag_max_seconds),
                },
                log=True,
            ),
            "Worst by p99 offset lag over the day's captures.",
        ),
        (
            "Skew now vs under the recommended assignor",
            svg.bars(
                "Mean lag skew (max member lag / mean member lag)",
                [_group(r) for r in skewed.itertuples()],
                {
                    "observed": _numbers(skewed.observed_lag_skew),
                    "recommended": _numbers(skewed.recommended_mean_lag_skew),
                },
            )
            + svg.bars(
                "Paused partitions: observed vs recommended assignor",
                [_group(r) for r in paused.itertuples()],
                {
                    "observed": _numbers(paused.observed_paused),
                    "recommended": _numbers(paused.recommended_paused_partitions),
                },
            ),
            "Recommended: within the group's protocol, balanced (count spread <= 1) where "
            "achievable, then fewest paused partitions, then lowest mean lag skew; uniform "
            "for a classic group only as a migration to the consumer protocol; the declared "
            "assignor's own numbers where nothing does better (keep).",
        ),
        (
            "Rebalance timeline",
            svg.timeline("Rebalances per group from the coordinator logs (UTC)", lanes)
            if lanes
            else "<p>No coordinator log lines for this date.</p>",
            "Hover a mark for its generation, cause and duration.",
        ),
    ]


def _table(frame: pd.DataFrame) -> str:
    """frame as an HTML table, every text cell and heading through safe_text."""
    shown = frame.map(lambda v: v if isinstance(v, numbers.Number) else safe_text(v))
    shown.columns = [safe_text(c) for c in frame.columns]
    return shown.to_html(index=False, border=0, escape=False, na_rep="n/a")


def render(f: DayFacts) -> str:
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>fleet_rebalance "
        f"{f.run_date}</title><style>{STYLE}</style></head><body>",
        f"<h1>Consumer-group rebalance report, {f.run_date}</h1>",
        # summary_lines already spells ids out (svg.visible): only HTML-escaped here.
        f"<pre>{chr(10).join(escape(line) for line in summary_lines(f))}</pre>",
    ]
    for title, content, note in _sections(f):
        parts.append(f"<h2>{safe_text(title)}</h2>{content}<p class='note'>{safe_text(note)}</p>")
    recs = _table(f.recommendations) if len(f.recommendations) else ""
    parts.append(f"<h2>Recommendations</h2>{recs}</body></html>")
    return "".join(parts)


def write_report(f: DayFacts, warehouse: Location) -> str:
    """warehouse/reports/<date>.html on the warehouse's own store, replaced whole (two
    nightlies of one date may finish together); returns its URI."""
    target = warehouse.child("reports", f"{f.run_date}.html")
    write_bytes(target, render(f).encode("utf-8"))
    return target.uri
