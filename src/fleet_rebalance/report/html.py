"""warehouse/reports/<date>.html: one self-contained page (inline CSS and SVG, no
script), readable on a phone (390 px: tables stack, charts scale to the width) and on
a wide screen (charts and group sections side by side)."""

from __future__ import annotations

import pandas as pd

from fleet_rebalance.filesystems import Location, write_bytes
from fleet_rebalance.report import actions, group_sections, history_html, migration_html, svg
from fleet_rebalance.report.facts import DayFacts, GroupRow
from fleet_rebalance.report.page import Links, group_cell, status_badge, table, timeline_marks
from fleet_rebalance.report.svg import safe_text

STYLE = (
    "*{box-sizing:border-box}"
    "body{font-family:sans-serif;max-width:1800px;margin:0 auto;padding:12px 16px;"
    "color:#222;line-height:1.35}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px;margin:18px 0 6px}"
    ".headline{font-size:14px}.note{color:#555;font-size:12px}"
    "table{border-collapse:collapse;font-size:13px;width:100%}"
    "table.totals{font-size:12px}table.totals td,table.totals th{padding:3px 4px}"
    "td,th{padding:4px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere}th{background:#f5f5f5}"
    "td.num,th.num{text-align:right}td.num{white-space:nowrap}"
    "table.stack th,td.word{overflow-wrap:break-word}ul{padding-left:20px}"
    "summary{cursor:pointer}.id{overflow-wrap:anywhere}a{color:#1a4f8b}"
    # Burrow statuses: a coloured edge and tint, the status always written.
    ".status{display:inline-block;padding:0 5px;border-left:5px solid #9e9e9e;"
    "background:#f2f2f2;white-space:nowrap;font-weight:bold}"
    ".status.ERR,.status.STOP,.status.STALL{border-color:#c62828;background:#fde4e4;"
    "color:#8b1111}"
    ".status.WARN,.status.REWIND{border-color:#f9a825;background:#fff4d6;color:#6d4c00}"
    ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,520px),1fr));"
    "gap:12px 36px;align-items:start}"
    "svg.chart{width:100%;height:auto;display:block;max-width:820px}"
    "svg.spark{vertical-align:middle;margin-right:6px}"
    ".groups{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,620px),1fr));"
    "gap:8px 36px}"
    "section.group{border-top:3px solid #ddd;padding-top:4px;min-width:0}"
    ".multiples{display:flex;flex-wrap:wrap;gap:8px 28px}"
    ".multiples figure{margin:0}.multiples figcaption{font-size:12px;color:#555}"
    # A phone: every table row becomes a block of labelled lines.
    "@media (max-width:700px){body{padding:8px}"
    "table.stack thead{display:none}"
    "table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}"
    "table.stack tr{border-bottom:2px solid #ddd;padding:4px 0}"
    "table.stack td{border:0;padding:2px 4px}table.stack td.num{text-align:left}"
    "ul ul{padding-left:14px}"
    "table.stack td::before{content:attr(data-label) ': ';color:#555;font-weight:normal}}"
)


def _numbers(series: pd.Series) -> list[float | None]:
    return [None if pd.isna(v) else float(v) for v in series]


def _group(row: GroupRow) -> str:
    return f"{row.cluster}/{row.group_id}"


def generations(n: int) -> str:
    return f"· {n} generation" + ("" if n == 1 else "s")


def _sections(f: DayFacts, links: Links) -> list[tuple[str, str, str]]:
    a = f.per_assignor
    paused, skewed, lag = f.top_paused, f.top_lag_skew, f.worst_lag
    marks = timeline_marks(f.timeline)
    busiest = sorted(marks, key=lambda k: (-len(marks[k]), k))
    lanes = {f"{c}/{g}": marks[(c, g)] for c, g in busiest}
    lane_links = {f"{c}/{g}": links.href(c, g) for c, g in busiest if links.href(c, g)}
    notes = {f"{c}/{g}": generations(len(marks[(c, g)])) for c, g in busiest}
    lag_links = [links.href(r.cluster, r.group_id) for r in lag.itertuples()]
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
                links=lag_links,
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
                links=lag_links,
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
                links=[links.href(r.cluster, r.group_id) for r in skewed.itertuples()],
            )
            + svg.bars(
                "Paused partitions summed over the day's rebalances",
                [_group(r) for r in paused.itertuples()],
                {
                    "now": _numbers(paused.declared_paused_partitions),
                    "recommended": _numbers(paused.recommended_paused_partitions),
                },
                unit="count",
                links=[links.href(r.cluster, r.group_id) for r in paused.itertuples()],
            ),
            "Now: the declared assignor's replay of every generation (as observed where it "
            "is not replayed), the baseline of every saving in this report. Recommended: the "
            "recommendation's assignor over the same generations (the declared one's own "
            "numbers where the change is not an assignor: keep, static membership, consumer "
            "settings, a crash loop or a stuck partition).",
        ),
        (
            "Rebalance timeline",
            svg.timeline(
                "Rebalances of the busiest groups from the coordinator logs, by cause",
                lanes,
                links=lane_links,
                notes=notes,
            )
            if lanes
            else "<p>No coordinator log lines for this date.</p>",
            "Lanes most generations first; each mark a generation coloured by its cause "
            "(rebalance_causes; a cooperative group's revocation round is a follow-up "
            "round). Each group's section lists its generations with cause and duration.",
        ),
    ]


def _first_sections(f: DayFacts, links: Links) -> list[str]:
    """Groups that need attention, then changes to make: the summary's words, as tables."""
    parts = [f"<h2>{safe_text(actions.attention_title(f))}</h2>"]
    rows = [
        [
            group_cell(links, r.cluster, r.group_id),
            status_badge(actions.status_text(r), r.last_status),
            safe_text(why),
        ]
        for r, (_, why) in zip(f.attention.itertuples(), actions.attention_rows(f), strict=True)
    ]
    if rows:
        parts.append(table(["group", "Burrow (last capture)", "why"], rows))
        parts.append(_more(len(rows), f.attention_total))
    else:
        parts.append("<p>No group needs attention today.</p>")
    changes = actions.change_rows(f)
    parts.append(f"<h2>{safe_text(actions.changes_title(f))}</h2>")
    if changes:
        rows = [
            [
                group_cell(links, r.cluster, r.group_id),
                safe_text(c.change),
                safe_text(c.saving),
                _prerequisites(c.prerequisites),
                safe_text(c.reason),
            ]
            for r, c in zip(f.changes.itertuples(), changes, strict=True)
        ]
        parts.append(table(["group", "change", "expected saving", "prerequisites", "why"], rows))
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


def _more(shown: int, total: int) -> str:
    line = actions.more(shown, total)
    return f"<p class='note'>{safe_text(line)}</p>" if line else ""


def render(f: DayFacts) -> str:
    links = Links(f)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>fleet_rebalance {f.run_date}</title><style>{STYLE}</style></head><body>",
        f"<h1 id='top'>Consumer-group rebalance report, {f.run_date}</h1>",
        f"<p class='headline'>{safe_text(actions.headline(f))}</p>",
        *_first_sections(f, links),
    ]
    if f.history is not None:
        parts.append(history_html.render(f, f.history, links))
    if f.migration is not None:
        parts.append(migration_html.render(f.migration, links))
    for title, content, note in _sections(f, links):
        parts.append(
            f"<h2>{safe_text(title)}</h2><div class='charts'>{content}</div>"
            f"<p class='note'>{safe_text(note)}</p>"
        )
    if f.details is not None:
        parts.append(group_sections.render(f, f.details, links))
    parts.append("</body></html>")
    return "".join(parts)


def write_report(f: DayFacts, warehouse: Location) -> str:
    """warehouse/reports/<date>.html on the warehouse's own store, replaced whole (two
    nightlies of one date may finish together); returns its URI."""
    target = warehouse.child("reports", f"{f.run_date}.html")
    write_bytes(target, render(f).encode("utf-8"))
    return target.uri
