"""KIP-848 convergence per group and date, for group_health: the Spark side of
metrics/convergence_rules.py.

The date's bronze members (their member_epoch / target_epoch per capture) and the
coordinator's `epoch_bumped` events go to one Arrow call per group, which applies
convergence_rules.py's rules. Only groups whose captures print an epoch get a row: a classic
group (`-` epochs) or a capture without `--verbose` says nothing of convergence.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from fleet_rebalance.arrow_values import python_rows
from fleet_rebalance.metrics.convergence_rules import (
    Capture,
    MemberEpoch,
    convergences,
    stuck,
    summary,
)

KEYS = ["cluster", "group_id", "date"]
EPOCH_BUMPED = "epoch_bumped"  # coordinator_events.event of `Bumped group epoch to E`
MEMBER, BUMP = "member", "bump"  # the two kinds of row one group's call gets
INPUT = StructType(
    [
        StructField("cluster", StringType()),
        StructField("group_id", StringType()),
        StructField("date", DateType()),
        StructField("kind", StringType()),
        StructField("at", TimestampType()),
        StructField("member_id", StringType()),
        StructField("member_epoch", IntegerType()),
        StructField("target_epoch", IntegerType()),
        StructField("upgraded", BooleanType()),
        StructField("epoch", IntegerType()),
    ]
)
SCHEMA = StructType(
    [
        StructField("cluster", StringType()),
        StructField("group_id", StringType()),
        StructField("date", DateType()),
        StructField("epoch_bumps", IntegerType()),
        StructField("epochs_converged", IntegerType()),
        StructField("convergence_max_seconds", DoubleType()),
        StructField("convergence_median_seconds", DoubleType()),
        StructField("members_stuck_reconciling", IntegerType()),
        StructField("classic_members", IntegerType()),
    ]
)


def convergence_frame(
    members: DataFrame, coordinator_events: DataFrame, stuck_after_s: int
) -> DataFrame:
    """Per cluster, group_id, date (SCHEMA): `members` is bronze members of the date
    (captured_at, capture_date, consumer_id and the epochs), `coordinator_events` the
    date's bronze coordinator_events; stuck_after_s is metrics.reconcile_stuck_s."""
    captured = members.select(
        "cluster",
        "group_id",
        F.col("capture_date").alias("date"),
        F.lit(MEMBER).alias("kind"),
        F.col("captured_at").alias("at"),
        F.col("consumer_id").alias("member_id"),
        "member_epoch",
        "target_epoch",
        "upgraded",
        F.lit(None).cast("int").alias("epoch"),
    )
    bumps = coordinator_events.where(
        (F.col("event") == EPOCH_BUMPED) & F.col("generation").isNotNull()
    ).select(
        "cluster",
        "group_id",
        F.col("log_date").alias("date"),
        F.lit(BUMP).alias("kind"),
        F.col("logged_at").alias("at"),
        F.lit(None).cast("string").alias("member_id"),
        F.lit(None).cast("int").alias("member_epoch"),
        F.lit(None).cast("int").alias("target_epoch"),
        F.lit(None).cast("boolean").alias("upgraded"),
        F.col("generation").alias("epoch"),
    )
    # Only groups with an epoch in some capture: the rows of others never leave Spark
    # (a broadcast: one row per such group, and the other rows are not shuffled).
    with_epochs = captured.where(F.col("member_epoch").isNotNull()).select(*KEYS).distinct()
    rows = captured.unionByName(bumps).join(F.broadcast(with_epochs), KEYS, "left_semi")
    stuck_after = dt.timedelta(seconds=stuck_after_s)
    schema = to_arrow_schema(SCHEMA)

    def per_group(table: pa.Table) -> pa.Table:
        return pa.Table.from_pylist(group_convergence(python_rows(table), stuck_after), schema)

    return rows.select(*INPUT.fieldNames()).groupBy(*KEYS).applyInArrow(per_group, SCHEMA)


def group_convergence(records: list[dict[str, Any]], stuck_after: dt.timedelta) -> list[dict]:
    """One group's row (SCHEMA's columns) from its rows in INPUT's columns, or none when
    no capture printed an epoch."""
    shots: dict[dt.datetime, list[MemberEpoch]] = {}
    upgraded: dict[dt.datetime, list[bool | None]] = {}
    first_bump: dict[int, dt.datetime] = {}
    for r in records:
        at = r["at"]
        if r["kind"] == BUMP:
            epoch = r["epoch"]
            first_bump[epoch] = min(at, first_bump.get(epoch, at))  # a line read twice
            continue
        shots.setdefault(at, []).append(
            MemberEpoch(r["member_id"], r["member_epoch"], r["target_epoch"])
        )
        upgraded.setdefault(at, []).append(r["upgraded"])
    if not any(m.member_epoch is not None for ms in shots.values() for m in ms):
        return []
    captures = [Capture(at, tuple(ms)) for at, ms in shots.items()]
    bumps = sorted((at, epoch) for epoch, at in first_bump.items())
    total = summary(convergences(bumps, captures), stuck(captures, stuck_after))
    last = max(shots)
    first = records[0]
    return [
        {
            "cluster": first["cluster"],
            "group_id": first["group_id"],
            "date": first["date"],
            "epoch_bumps": total.epochs,
            "epochs_converged": total.converged,
            "convergence_max_seconds": total.max_seconds,
            "convergence_median_seconds": total.median_seconds,
            "members_stuck_reconciling": total.stuck_members,
            "classic_members": sum(1 for u in upgraded[last] if u is False),
        }
    ]
