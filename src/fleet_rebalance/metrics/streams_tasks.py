"""`task_movements`: the tasks of a streams group (KIP-1071) whose owner changed between
two of its captures.

A streams group assigns tasks (subtopology, partition), not topic partitions, and each
task has an active owner and may have standby owners (`kafka-streams-groups.sh
--describe --members`, bronze members.tasks). A task moved when it is held in both
captures, by different members: its state had to be restored on the new owner (an
active move costs a restore or a standby promotion, a standby move a new replica). A
task held in one capture only (a topology change, or every member gone) is listed with
the missing side empty but is no move. Warmup tasks are the transition itself and the
`target-*` kinds (`--verbose`) the coordinator's plan, not yet anyone's: neither counts.

One row per pair of consecutive captures of the group (the first of the date against
the previous date's last) where the members or some task's owners changed: a rebalance
between them. Two files of one capture (with and without `--verbose`) describe the same
members: the one whose path sorts last is read, as in offset_samples.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType

from fleet_rebalance.arrow_values import python_rows

KINDS = ("active", "standby")
INPUT_COLUMNS = ["cluster", "group_id", "captured_at", "consumer_id", "source_file", "tasks"]
TASK = StructType(
    [
        StructField("kind", StringType()),
        StructField("subtopology", StringType()),
        StructField("partition", IntegerType()),
        StructField("previous_owners", ArrayType(StringType())),
        StructField("owners", ArrayType(StringType())),
    ]
)

Owners = dict[tuple[str, str, int], tuple[str, ...]]


def owners_of(members: list[dict[str, Any]]) -> Owners:
    """{(kind, subtopology, partition): sorted member ids} of one capture's members."""
    held: dict[tuple[str, str, int], set[str]] = {}
    for member in members:
        for task in member["tasks"] or []:
            if task["kind"] in KINDS:
                key = (task["kind"], task["subtopology"], task["partition"])
                held.setdefault(key, set()).add(member["consumer_id"])
    return {key: tuple(sorted(ids)) for key, ids in held.items()}


def captures_of(rows: list[dict[str, Any]]) -> list[tuple[dt.datetime, list[dict[str, Any]]]]:
    """(captured_at, member rows) per capture, oldest first, one file per capture."""
    by_time: dict[dt.datetime, list[dict[str, Any]]] = {}
    for row in rows:
        if row["captured_at"] is not None and row["consumer_id"] is not None:
            by_time.setdefault(row["captured_at"], []).append(row)
    captures = []
    for at in sorted(by_time):
        last_file = max(r["source_file"] or "" for r in by_time[at])
        captures.append((at, [r for r in by_time[at] if (r["source_file"] or "") == last_file]))
    return captures


def group_task_movements(rows: list[dict[str, Any]], run_date: dt.date) -> list[dict[str, Any]]:
    """task_movements rows (without cluster, group_id, date) of one streams group for
    run_date; `rows` are its members rows (INPUT_COLUMNS) of run_date and the day before."""
    captures = captures_of(rows)
    today = [i for i, (at, _) in enumerate(captures) if at.date() == run_date]
    out: list[dict[str, Any]] = []
    # The date's first capture has nothing to compare with when no earlier one exists.
    for i in range(max(today[0], 1), len(captures)) if today else ():
        (before, old), (at, new) = captures[i - 1], captures[i]
        previous, current = owners_of(old), owners_of(new)
        old_ids = sorted({r["consumer_id"] for r in old})
        new_ids = sorted({r["consumer_id"] for r in new})
        changed = sorted(
            (
                key
                for key in previous.keys() | current.keys()
                if previous.get(key) != current.get(key)
            ),
            key=lambda k: (KINDS.index(k[0]), k[1], k[2]),
        )
        if not changed and old_ids == new_ids:
            continue
        moved = {kind: 0 for kind in KINDS}
        for key in changed:
            if key in previous and key in current:
                moved[key[0]] += 1
        out.append(
            {
                "captured_at": at,
                "previous_captured_at": before,
                "members": len(new_ids),
                "joined": [m for m in new_ids if m not in old_ids],
                "left": [m for m in old_ids if m not in new_ids],
                "active_tasks": sum(1 for k in current if k[0] == "active"),
                "active_moved": moved["active"],
                "standby_tasks": sum(1 for k in current if k[0] == "standby"),
                "standby_moved": moved["standby"],
                "tasks": [
                    {
                        "kind": kind,
                        "subtopology": sub,
                        "partition": partition,
                        "previous_owners": list(previous.get((kind, sub, partition), ())),
                        "owners": list(current.get((kind, sub, partition), ())),
                    }
                    for kind, sub, partition in changed
                ],
            }
        )
    return out


def streams_members(members: DataFrame) -> DataFrame:
    """The members rows of streams groups (a task list, even an empty one: consumer and
    share members have none), INPUT_COLUMNS only; none from a table without `tasks`."""
    if "tasks" not in members.columns:
        return members.where(F.lit(False)).select(
            *INPUT_COLUMNS[:-1], F.lit(None).cast(ArrayType(TASK)).alias("tasks")
        )
    return members.where(F.col("tasks").isNotNull()).select(*INPUT_COLUMNS)


def task_movements(members: DataFrame, run_date: dt.date, schema: StructType) -> DataFrame:
    """task_movements of run_date in `schema` (gold), one Arrow call per streams group;
    `members` holds the members rows of run_date and the day before."""
    arrow_schema = to_arrow_schema(schema)

    def per_group(table: pa.Table) -> pa.Table:
        rows = python_rows(table)
        key = {"cluster": rows[0]["cluster"], "group_id": rows[0]["group_id"], "date": run_date}
        found = group_task_movements(rows, run_date)
        return pa.Table.from_pylist([key | r for r in found], arrow_schema)

    return streams_members(members).groupBy("cluster", "group_id").applyInArrow(per_group, schema)
