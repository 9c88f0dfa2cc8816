"""The page's shared pieces: tables that stack on a phone, group cells linked to their
sections, status badges (page.html.j2 writes them)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pandas as pd
from markupsafe import Markup

from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.links import anchor
from fleet_rebalance.report.templating import Macros

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
    rows: Sequence[Sequence[str]],
    numeric: frozenset[int] = frozenset(),
    cls: str = "stack",
    words: frozenset[int] = frozenset(),
) -> Markup:
    """A table whose cells are text or a template's markup; each cell carries its header
    as data-label, so a phone stacks a row into labelled lines. `numeric` columns are
    right-aligned and never wrap; `words` columns wrap between words only (a cause, a
    time)."""
    return _page().table(headers, rows, numeric, cls, words)


def group_cell(links: Links, cluster: str, group_id: str) -> Markup:
    """The whole id (wrapping anywhere, never cut), linked to its section if it has one."""
    return _page().group_cell(f"{cluster}/{group_id}", links.href(cluster, group_id))


def status_badge(text: str, status: object) -> Markup:
    """A status coloured by its worst word (ERR red, WARN amber, OK neutral), its text
    written in it."""
    kind = status if isinstance(status, str) and status.isalpha() else "none"
    return _page().status_badge(text, kind)


def _page() -> Macros:
    return Macros("page.html.j2")


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


def prerequisites(text: str) -> str | Markup:
    """The first step in view, the rest a click away (<details>, no script)."""
    if not text:
        return "none"
    first, _, rest = text.partition("; ")
    if not rest:
        return text
    return _page().prerequisites(first, rest)
