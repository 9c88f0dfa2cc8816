"""The report's "KIP-848 migration" section (migration.py gathers it, migration.html.j2
writes it)."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from fleet_rebalance.metrics.migration_rules import PREREQUISITES
from fleet_rebalance.report.facts import Cell
from fleet_rebalance.report.migration import MigrationFacts
from fleet_rebalance.report.page import Links, group_cell, table
from fleet_rebalance.report.templating import Macros

WAVES = {
    1: "wave 1: ready, uniform pauses less",
    2: "wave 2: ready, nothing to gain yet",
    3: "wave 3: ready once checked",
}


def render(m: MigrationFacts, links: Links) -> Markup:
    counts = _counts(m) if m.groups else None
    first = _first(m, links) if m.groups and len(m.first) else None
    idle = (
        f", {m.not_applicable} with no member to migrate (assign() only)"
        if m.not_applicable
        else ""
    )
    return Macros("migration.html.j2").section(m.groups, idle, counts, first, PREREQUISITES)


def _counts(m: MigrationFacts) -> Markup:
    """Groups per wave, blocker and caution."""
    counts = [[WAVES[w], str(n)] for w, n in m.waves.items()]
    counts += [[f"blocked: {b}", str(n)] for b, n in m.blockers.items()]
    counts += [[f"caution: {c}", str(n)] for c, n in m.cautions.items()]
    return table(["wave or blocker", "groups"], counts, numeric=frozenset({1}))


def _first(m: MigrationFacts, links: Links) -> Markup:
    """The groups to move first, in the plan's order."""
    rows = [
        [
            str(int(r.migration_order)),
            group_cell(links, r.cluster, r.group_id),
            r.declared_assignor or "unknown",
            _saved(r.paused_partitions_saved, "partitions"),
            _saved(r.paused_partition_seconds_saved, "partition-s"),
            r.reason,
        ]
        for r in m.first.itertuples()
    ]
    return table(
        ["order", "group", "assignor now", "paused saved", "paused time saved", "why"],
        rows,
        numeric=frozenset({0, 3, 4}),
    )


def _saved(value: Cell, unit: str) -> str:
    if value is None or pd.isna(value):
        return "unknown"
    return f"{float(value):,.0f} {unit}"
