"""The report's "KIP-848 migration" section (migration.py gathers it)."""

from __future__ import annotations

import pandas as pd

from fleet_rebalance.metrics.migration_rules import PREREQUISITES
from fleet_rebalance.report.facts import Cell
from fleet_rebalance.report.migration import MigrationFacts
from fleet_rebalance.report.page import Links, group_cell, table
from fleet_rebalance.report.svg import safe_text

WAVES = {
    1: "wave 1: ready, uniform pauses less",
    2: "wave 2: ready, nothing to gain yet",
    3: "wave 3: ready once checked",
}


def render(m: MigrationFacts, links: Links) -> str:
    parts = [
        "<h2 id='kip848-migration'>KIP-848 migration</h2>",
        "<p class='note'>Kafka 4.3 deprecates the classic consumer protocol, 5.0 makes "
        "group.protocol=consumer the default and 6.0 removes classic support (KIP-1274): "
        "every classic group moves. protocol_migration_plan orders the moves.</p>",
    ]
    if not m.groups:
        parts.append("<p>No classic group today: nothing left to move.</p>")
        return "".join(parts)
    counts = [[safe_text(WAVES[w]), str(n)] for w, n in m.waves.items()]
    counts += [[safe_text(f"blocked: {b}"), str(n)] for b, n in m.blockers.items()]
    counts += [[safe_text(f"caution: {c}"), str(n)] for c, n in m.cautions.items()]
    idle = (
        f", {m.not_applicable} with no member to migrate (assign() only)"
        if m.not_applicable
        else ""
    )
    parts.append(f"<p>{m.groups} classic groups{idle}.</p>")
    parts.append(table(["wave or blocker", "groups"], counts, numeric=frozenset({1})))
    if len(m.first):
        rows = [
            [
                str(int(r.migration_order)),
                group_cell(links, r.cluster, r.group_id),
                safe_text(r.declared_assignor or "unknown"),
                _saved(r.paused_partitions_saved, "partitions"),
                _saved(r.paused_partition_seconds_saved, "partition-s"),
                safe_text(r.reason),
            ]
            for r in m.first.itertuples()
        ]
        parts.append("<h3>First to move</h3>")
        parts.append(
            table(
                ["order", "group", "assignor now", "paused saved", "paused time saved", "why"],
                rows,
                numeric=frozenset({0, 3, 4}),
            )
        )
    parts.append(f"<p class='note'>Before any move: {safe_text(PREREQUISITES)}.</p>")
    return "".join(parts)


def _saved(value: Cell, unit: str) -> str:
    if value is None or pd.isna(value):
        return "unknown"
    return f"{float(value):,.0f} {unit}"
