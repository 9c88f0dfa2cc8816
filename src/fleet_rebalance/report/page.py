"""The page's shared pieces: tables that stack on a phone, group cells linked to their
sections, status badges."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.links import anchor
from fleet_rebalance.report.svg import safe_text

# A timeline mark: its start, its cause (the colour), its tooltip.
Mark = tuple[dt.datetime, str, str]


class Links:
    """The anchors of the groups that have a section: every table and chart that names
    one of them links to it."""

    def __init__(self, f: DayFacts) -> None:
        self.anchors: set[str] = set()
        if f.details is not None:
            self.anchors = {anchor(r.cluster, r.group_id) for r in f.listed.itertuples()}

    def href(self, cluster: str, group_id: str) -> str | None:
        target = anchor(cluster, group_id)
        return target if target in self.anchors else None


def table(
    headers: list[str],
    rows: list[list[str]],
    numeric: frozenset[int] = frozenset(),
    cls: str = "stack",
    words: frozenset[int] = frozenset(),
) -> str:
    """A table whose cells are already HTML; each cell carries its header as data-label,
    so a phone stacks a row into labelled lines. `numeric` columns are right-aligned and
    never wrap; `words` columns wrap between words only (a cause, a time)."""
    head = "".join(
        f"<th{' class=num' if i in numeric else ''}>{safe_text(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{_cell_class(i, numeric, words)} data-label='{safe_text(headers[i])}'>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell_class(i: int, numeric: frozenset[int], words: frozenset[int]) -> str:
    return " class=num" if i in numeric else " class=word" if i in words else ""


def group_cell(links: Links, cluster: str, group_id: str) -> str:
    """The whole id (wrapping anywhere, never cut), linked to its section if it has one."""
    text = f"{cluster}/{group_id}"
    span = f"<span class='id'>{safe_text(text)}</span>"
    href = links.href(cluster, group_id)
    return f"<a href='#{href}'>{span}</a>" if href else span


def status_badge(text: str, status: object) -> str:
    """A status coloured by its worst word (ERR red, WARN amber, OK neutral), its text
    written in it."""
    kind = status if isinstance(status, str) and status.isalpha() else "none"
    return f"<span class='status {kind}'>{safe_text(text)}</span>"


def timeline_marks(
    frame: pd.DataFrame,
) -> dict[tuple[str, str], list[tuple[dt.datetime, str, str]]]:
    """(cluster, group_id) -> its generations as (start, cause, tooltip), each coloured
    by its classified cause (cause_kind) where the facts have it, else the logged one."""
    marks: dict[tuple[str, str], list[Mark]] = {}
    for r in frame.itertuples():
        if pd.isna(r.started_at):
            continue
        logged = r.cause if isinstance(r.cause, str) and r.cause else None
        kind = getattr(r, "cause_kind", None)
        kind = kind if isinstance(kind, str) and kind else (logged or "not classified")
        tip = f"generation {r.generation} at {r.started_at:%H:%M:%S}: {kind}"
        if logged and logged != kind:
            tip += f" (logged: {logged})"
        duration = "" if pd.isna(r.duration_ms) else f", {int(r.duration_ms):,} ms"
        marks.setdefault((r.cluster, r.group_id), []).append(
            (r.started_at.to_pydatetime(), kind, tip + duration)
        )
    return marks
