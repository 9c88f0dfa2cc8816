"""The nightly's closing lines on the terminal: the headline and one aligned table of
the groups that need attention or have a change to make, fitting a screen; the reasons
and prerequisites are the report's (report/actions.py holds the words of both)."""

from __future__ import annotations

from fleet_rebalance.metrics.attention import present
from fleet_rebalance.report import actions
from fleet_rebalance.report.facts import Cell, DayFacts
from fleet_rebalance.report.shown import visible

HEADER = ("group", "Burrow", "rebalances", "paused (partition-s)", "change", "saves")
WIDEST = (48, 22, 10, 20, 40, 60)  # a cell longer than its column's limit is cut with ~


def summary_lines(facts: DayFacts) -> list[str]:
    lines = [
        actions.headline(facts),
        actions.attention_title(facts) + "; " + (actions.changes_title(facts)),
    ]
    rows = [
        (
            actions.group_name(r),
            actions.status_text(r),
            str(int(r.rebalances)),
            _seconds(r.paused_partition_seconds),
            actions.change_text(r),
            actions.saving(r, short=True),
        )
        for r in facts.listed.itertuples()
    ]
    if rows:
        lines += _aligned([HEADER, *rows])
    more = actions.more(len(rows), facts.listed_total)
    if more:
        lines.append(more)
    # Ids and names come from captures: bidi and control characters spelled out.
    return [visible(line) for line in lines]


def _seconds(value: Cell) -> str:
    return "n/a" if not present(value) else f"{value:,.1f}"


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    cells = [[_cut(c, WIDEST[i]) for i, c in enumerate(row)] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADER))]
    numeric = (2, 3)
    return [
        "  ".join(
            (c.rjust(widths[i]) if i in numeric else c.ljust(widths[i])) for i, c in enumerate(row)
        ).rstrip()
        for row in cells
    ]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "~"
