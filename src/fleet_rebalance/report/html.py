"""warehouse/reports/<date>.html: one self-contained page (inline CSS and SVG, no
script), readable on a phone (390 px: tables stack, charts scale to the width) and on
a wide screen (charts and group sections side by side). The page is report.html.j2."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from markupsafe import Markup

from fleet_rebalance.filesystems import Location, write_bytes
from fleet_rebalance.report import (
    actions,
    cross_zone_html,
    group_sections,
    history_html,
    migration_html,
    svg,
)
from fleet_rebalance.report.facts import DayFacts, GroupRow
from fleet_rebalance.report.page import (
    Links,
    group_cell,
    prerequisites,
    status_badge,
    table,
    timeline_marks,
)
from fleet_rebalance.report.templating import render as render_template


@dataclass(frozen=True)
class ChartSection:
    """Charts side by side (`empty` written where there is none), a note under them."""

    title: str
    charts: list[Markup]
    note: str
    empty: str = ""


@dataclass(frozen=True)
class TableSection:
    """One of the first sections: its title, its table (None: `empty` is written), and
    how many rows it left out."""

    title: str
    table: Markup | None
    more: str | None
    empty: str


def _numbers(series: pd.Series) -> list[float | None]:
    return [None if pd.isna(v) else float(v) for v in series]


def _group(row: GroupRow) -> str:
    return f"{row.cluster}/{row.group_id}"


def generations(n: int) -> str:
    return f"· {n} generation" + ("" if n == 1 else "s")


def _sections(f: DayFacts, links: Links) -> list[ChartSection]:
    a = f.per_assignor
    paused, skewed, lag = f.top_paused, f.top_lag_skew, f.worst_lag
    marks = timeline_marks(f.timeline)
    busiest = sorted(marks, key=lambda k: (-len(marks[k]), k))
    lanes = {f"{c}/{g}": marks[(c, g)] for c, g in busiest}
    lane_links = {f"{c}/{g}": links.href(c, g) for c, g in busiest if links.href(c, g)}
    notes = {f"{c}/{g}": generations(len(marks[(c, g)])) for c, g in busiest}
    lag_links = [links.href(r.cluster, r.group_id) for r in lag.itertuples()]
    return [
        ChartSection(
            "Stickiness and paused partitions per assignor",
            [
                svg.bars(
                    "Stickiness: kept / (kept + reassigned) partitions, all groups",
                    list(a.assignor),
                    {"stickiness": _numbers(a.stickiness)},
                    unit="percent",
                ),
                svg.bars(
                    "Paused partitions summed over the day's rebalances, all groups",
                    list(a.assignor),
                    {"paused partitions": _numbers(a.paused_partitions)},
                    unit="count",
                ),
            ],
            "Eager assignors pause every partition of the group at every rebalance; "
            "cooperative ones and KIP-848 pause only what moves.",
        ),
        ChartSection(
            "Lag percentile bands for the worst groups",
            [
                svg.bands(
                    "Offset lag per group and topic, in messages (log scale)",
                    [f"{_group(r)} {r.topic}" for r in lag.itertuples()],
                    [(r.lag_p50, r.lag_p90, r.lag_p99, r.lag_max) for r in lag.itertuples()],
                    links=lag_links,
                ),
                svg.bars(
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
            ],
            "Worst by p99 offset lag over the day's captures.",
        ),
        ChartSection(
            "What the group runs vs the recommendation",
            [
                svg.bars(
                    "Mean lag skew (max member lag / mean member lag)",
                    [_group(r) for r in skewed.itertuples()],
                    {
                        "now": _numbers(skewed.declared_mean_lag_skew),
                        "recommended": _numbers(skewed.recommended_mean_lag_skew),
                    },
                    links=[links.href(r.cluster, r.group_id) for r in skewed.itertuples()],
                ),
                svg.bars(
                    "Paused partitions summed over the day's rebalances",
                    [_group(r) for r in paused.itertuples()],
                    {
                        "now": _numbers(paused.declared_paused_partitions),
                        "recommended": _numbers(paused.recommended_paused_partitions),
                    },
                    unit="count",
                    links=[links.href(r.cluster, r.group_id) for r in paused.itertuples()],
                ),
            ],
            "Now: the declared assignor's replay of every generation (as observed where it "
            "is not replayed), the baseline of every saving in this report. Recommended: the "
            "recommendation's assignor over the same generations (the declared one's own "
            "numbers where the change is not an assignor: keep, static membership, consumer "
            "settings, a crash loop or a stuck partition).",
        ),
        ChartSection(
            "Rebalance timeline",
            [
                svg.timeline(
                    "Rebalances of the busiest groups from the coordinator logs, by cause",
                    lanes,
                    links=lane_links,
                    notes=notes,
                )
            ]
            if lanes
            else [],
            "Lanes most generations first; each mark a generation coloured by its cause "
            "(rebalance_causes; a cooperative group's revocation round is a follow-up "
            "round). Each group's section lists its generations with cause and duration.",
            empty="No coordinator log lines for this date.",
        ),
    ]


def _attention(f: DayFacts, links: Links) -> TableSection:
    """Groups that need attention: the summary's words, as a table."""
    rows = [
        [
            group_cell(links, r.cluster, r.group_id),
            status_badge(actions.status_text(r), r.last_status),
            why,
        ]
        for r, (_, why) in zip(f.attention.itertuples(), actions.attention_rows(f), strict=True)
    ]
    return TableSection(
        actions.attention_title(f),
        table(["group", "Burrow (last capture)", "why"], rows) if rows else None,
        actions.more(len(rows), f.attention_total),
        "No group needs attention today.",
    )


def _changes(f: DayFacts, links: Links) -> TableSection:
    """Changes to make: the summary's words, as a table."""
    changes = actions.change_rows(f)
    rows = [
        [
            group_cell(links, r.cluster, r.group_id),
            c.change,
            c.saving,
            prerequisites(c.prerequisites),
            c.reason,
        ]
        for r, c in zip(f.changes.itertuples(), changes, strict=True)
    ]
    headers = ["group", "change", "expected saving", "prerequisites", "why"]
    return TableSection(
        actions.changes_title(f),
        table(headers, rows) if rows else None,
        actions.more(len(changes), actions.changes_total(f)),
        "Every group already runs the best choice it has (keep).",
    )


def render(f: DayFacts) -> str:
    links = Links(f)
    return render_template(
        "report.html.j2",
        run_date=f.run_date,
        headline=actions.headline(f),
        first=[_attention(f, links), _changes(f, links)],
        history=None if f.history is None else history_html.render(f, f.history, links),
        migration=None if f.migration is None else migration_html.render(f.migration, links),
        cross_zone=None if f.cross_zone is None else cross_zone_html.render(f.cross_zone, links),
        charts=_sections(f, links),
        groups=None if f.details is None else group_sections.render(f, f.details, links),
    )


def write_report(f: DayFacts, warehouse: Location) -> str:
    """warehouse/reports/<date>.html on the warehouse's own store, replaced whole (two
    nightlies of one date may finish together); returns its URI."""
    target = warehouse.child("reports", f"{f.run_date}.html")
    write_bytes(target, render(f).encode("utf-8"))
    return target.uri
