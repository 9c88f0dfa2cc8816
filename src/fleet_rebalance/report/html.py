"""warehouse/reports/<date>.html: one self-contained page (inline CSS and SVG)."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from fleet_rebalance.filesystems import Location, write_bytes
from fleet_rebalance.report import actions, svg
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.svg import safe_text

STYLE = (
    "body{font-family:sans-serif;max-width:1200px;margin:24px auto;color:#222}"
    "table.actions{width:100%;table-layout:fixed}table.actions td{vertical-align:top}"
    "summary{cursor:pointer}.id{display:inline-block;max-width:230px;"
    "overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom}"
    ".headline{font-size:14px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:12px}td,th{padding:3px 8px;border-bottom:1px solid"
    " #eee;text-align:left}"
    ".note{color:#666;font-size:12px}"
)


def _group(row) -> str:
    return f"{row.cluster}/{row.group_id}"


def _numbers(series: pd.Series) -> list[float | None]:
    return [None if pd.isna(v) else float(v) for v in series]


def _sections(f: DayFacts) -> list[tuple[str, str, str]]:
    a = f.per_assignor
    paused, skewed, lag = f.top_paused, f.top_lag_skew, f.worst_lag
    lanes: dict[str, list[tuple[dt.datetime, str, str]]] = {}
    for r in f.timeline.itertuples():
        if pd.isna(r.started_at):
            continue
        tip = (
            f"generation {r.generation} at {r.started_at:%H:%M:%S}: {r.cause or 'cause not logged'}"
        )
        duration = "" if pd.isna(r.duration_ms) else f", {int(r.duration_ms):,} ms"
        at = r.started_at.to_pydatetime()
        lanes.setdefault(_group(r), []).append((at, r.protocol, tip + duration))
    return [
        (
            "Stickiness and paused partitions per assignor",
            svg.bars(
                "Stickiness: kept / (kept + reassigned) partitions, all groups",
                list(a.assignor),
                {"stickiness": _numbers(a.stickiness)},
                unit="percent",
            )
            + svg.bars(
                "Paused partitions summed over the day's rebalances, all groups",
                list(a.assignor),
                {"paused partitions": _numbers(a.paused_partitions)},
                unit="count",
            ),
            "Eager assignors pause every partition of the group at every rebalance; "
            "cooperative ones and KIP-848 pause only what moves.",
        ),
        (
            "Lag percentile bands for the worst groups",
            svg.bands(
                "Offset lag per group and topic, in messages (log scale)",
                [f"{_group(r)} {r.topic}" for r in lag.itertuples()],
                [(r.lag_p50, r.lag_p90, r.lag_p99, r.lag_max) for r in lag.itertuples()],
            )
            + svg.bars(
                "Time lag, h:mm:ss (Kafka Lag Exporter's estimate)",
                [f"{_group(r)} {r.topic}" for r in lag.itertuples()],
                {
                    "p50": _numbers(lag.time_lag_p50_seconds),
                    "max": _numbers(lag.time_lag_max_seconds),
                },
                log=True,
                unit="duration",
            ),
            "Worst by p99 offset lag over the day's captures.",
        ),
        (
            "What the group runs vs the recommendation",
            svg.bars(
                "Mean lag skew (max member lag / mean member lag)",
                [_group(r) for r in skewed.itertuples()],
                {
                    "now": _numbers(skewed.declared_mean_lag_skew),
                    "recommended": _numbers(skewed.recommended_mean_lag_skew),
                },
            )
            + svg.bars(
                "Paused partitions summed over the day's rebalances",
                [_group(r) for r in paused.itertuples()],
                {
                    "now": _numbers(paused.declared_paused_partitions),
                    "recommended": _numbers(paused.recommended_paused_partitions),
                },
                unit="count",
            ),
            "Now: the declared assignor's replay of every generation (as observed where it "
            "is not replayed), the baseline of every saving in this report. Recommended: the "
            "recommendation's assignor over the same generations (the declared one's own "
            "numbers where the change is not an assignor: keep, static membership, consumer "
            "settings, a crash loop or a stuck partition).",
        ),
        (
            "Rebalance timeline",
            svg.timeline("Rebalances of the busiest groups from the coordinator logs", lanes)
            if lanes
            else "<p>No coordinator log lines for this date.</p>",
            "Hover a mark for its generation, cause and duration.",
        ),
    ]


def _first_sections(f: DayFacts) -> list[str]:
    """Groups that need attention, then changes to make: the summary's words, as tables."""
    attention = actions.attention_rows(f)
    statuses = {_group(r): actions.status_text(r) for r in f.attention.itertuples()}
    parts = [f"<h2>{safe_text(actions.attention_title(f))}</h2>"]
    if attention:
        rows = "".join(
            f"<tr><td>{_id_cell(group)}</td><td>{safe_text(statuses[group])}</td>"
            f"<td>{safe_text(why)}</td></tr>"
            for group, why in attention
        )
        parts.append(
            "<table class='actions'><colgroup><col style='width:240px'>"
            "<col style='width:190px'><col></colgroup><tr><th>group</th>"
            f"<th>Burrow (last capture)</th><th>why</th></tr>{rows}</table>"
        )
        parts.append(_more(len(attention), f.attention_total))
    else:
        parts.append("<p>No group needs attention today.</p>")
    changes = actions.change_rows(f)
    parts.append(f"<h2>{safe_text(actions.changes_title(f))}</h2>")
    if changes:
        rows = "".join(
            f"<tr><td>{_id_cell(c.group)}</td><td>{safe_text(c.change)}</td>"
            f"<td>{safe_text(c.saving)}</td><td>{_prerequisites(c.prerequisites)}</td>"
            f"<td>{safe_text(c.reason)}</td></tr>"
            for c in changes
        )
        parts.append(
            "<table class='actions'><colgroup><col style='width:240px'>"
            "<col style='width:150px'><col style='width:170px'><col style='width:32%'><col>"
            "</colgroup><tr><th>group</th><th>change</th><th>expected saving</th>"
            f"<th>prerequisites</th><th>why</th></tr>{rows}</table>"
        )
        parts.append(_more(len(changes), actions.changes_total(f)))
    else:
        parts.append("<p>Every group already runs the best choice it has (keep).</p>")
    return parts


def _prerequisites(text: str) -> str:
    """The first step in view, the rest a click away (<details>, no script)."""
    if not text:
        return "none"
    first, _, rest = text.partition("; ")
    if not rest:
        return safe_text(text)
    return f"<details><summary>{safe_text(first)}</summary>{safe_text(rest)}</details>"


def _id_cell(text: str) -> str:
    """An id cut with an ellipsis by CSS where it is too long, whole in its tooltip."""
    return f"<span class='id' title='{safe_text(text)}'>{safe_text(text)}</span>"


def _more(shown: int, total: int) -> str:
    line = actions.more(shown, total)
    return f"<p class='note'>{safe_text(line)}</p>" if line else ""


def render(f: DayFacts) -> str:
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>fleet_rebalance "
        f"{f.run_date}</title><style>{STYLE}</style></head><body>",
        f"<h1>Consumer-group rebalance report, {f.run_date}</h1>",
        f"<p class='headline'>{safe_text(actions.headline(f))}</p>",
        *_first_sections(f),
    ]
    for title, content, note in _sections(f):
        parts.append(f"<h2>{safe_text(title)}</h2>{content}<p class='note'>{safe_text(note)}</p>")
    parts.append("</body></html>")
    return "".join(parts)


def write_report(f: DayFacts, warehouse: Location) -> str:
    """warehouse/reports/<date>.html on the warehouse's own store, replaced whole (two
    nightlies of one date may finish together); returns its URI."""
    target = warehouse.child("reports", f"{f.run_date}.html")
    write_bytes(target, render(f).encode("utf-8"))
    return target.uri
