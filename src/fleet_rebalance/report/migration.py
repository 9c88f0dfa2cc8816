"""What the report's "KIP-848 migration" section shows: protocol_migration_plan of the
day in counts per wave and per blocker, and the first groups to move in the plan's order
(migration_html.py renders it)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass

import pandas as pd
import pyspark.sql.functions as F

from fleet_rebalance.storage.warehouse import Warehouse

TABLE = "protocol_migration_plan"
FIRST_COLUMNS = (
    "cluster",
    "group_id",
    "migration_order",
    "wave",
    "declared_assignor",
    "paused_partitions_saved",
    "paused_partition_seconds_saved",
    "reason",
)


@dataclass(frozen=True)
class MigrationFacts:
    groups: int  # classic groups of the day
    waves: dict[int, int]  # wave -> groups
    blockers: dict[str, int]  # blocker -> groups (a group may have several)
    cautions: dict[str, int]
    not_applicable: int
    first: pd.DataFrame  # FIRST_COLUMNS, the plan's first `top` groups


def gather(warehouse: Warehouse, run_date: dt.date, top: int) -> MigrationFacts | None:
    """None where the warehouse has no plan (written before the table existed)."""
    if not warehouse.exists(TABLE):
        return None
    plan = warehouse.read(TABLE, where={"date": run_date})
    summary = plan.select("wave", "blockers", "cautions", "readiness").collect()
    first = (
        plan.where(F.col("migration_order").isNotNull())
        .orderBy("migration_order")
        .select(*FIRST_COLUMNS)
        .limit(top)
        .toPandas()
    )
    return MigrationFacts(
        groups=len(summary),
        waves=dict(sorted(Counter(r["wave"] for r in summary if r["wave"] is not None).items())),
        blockers=dict(Counter(b for r in summary for b in r["blockers"] or ()).most_common()),
        cautions=dict(Counter(c for r in summary for c in r["cautions"] or ()).most_common()),
        not_applicable=sum(r["readiness"] == "not_applicable" for r in summary),
        first=first,
    )
