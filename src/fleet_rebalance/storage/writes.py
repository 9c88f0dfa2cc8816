"""A write as both engines take it: refused early when it cannot work, planned (the
partitions it replaces as log strings, the commit info with the run's context), and
narrowed to the partitions whose rows change (unchanged.py) before the engine commits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pyspark.sql import DataFrame

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage.engine import Mode, StorageEngine, WritePlan
from fleet_rebalance.storage.errors import ReplaceWhereError, SchemaMismatchError
from fleet_rebalance.storage.selection import rows_in
from fleet_rebalance.storage.table_checks import normalise_replace_where
from fleet_rebalance.storage.unchanged import compare

MODES: tuple[Mode, ...] = ("append", "overwrite")


def check_write(
    path: str,
    mode: str,
    replace_where: Mapping[str, Any] | None,
    partition_by: Sequence[str],
    columns: Sequence[str],
) -> Mode:
    """What either engine refuses before anything is written; the mode, checked."""
    if mode not in MODES:
        raise ValueError(f"{path}: mode must be append or overwrite, found {mode!r}")
    if replace_where is not None and mode != "overwrite":
        raise ReplaceWhereError(f"{path}: replace_where needs mode='overwrite'")
    missing = [c for c in partition_by if c not in columns]
    if missing:
        raise SchemaMismatchError(f"{path}: partition column(s) {missing} not in the DataFrame")
    return "overwrite" if mode == "overwrite" else "append"


def plan_write(
    engine: StorageEngine,
    table: Location,
    columns: Sequence[str],
    *,
    mode: str,
    partition_by: Sequence[str] = (),
    replace_where: Mapping[str, Any] | None = None,
    commit_info: Mapping[str, Any] | None = None,
    overwrite_schema: bool = False,
) -> WritePlan:
    checked = check_write(table.uri, mode, replace_where, partition_by, columns)
    if overwrite_schema and (checked != "overwrite" or replace_where is not None):
        raise ReplaceWhereError(f"{table.uri}: overwrite_schema needs a whole-table overwrite")
    return WritePlan(
        checked,
        tuple(partition_by),
        normalise_replace_where(replace_where, partition_by, table.uri),
        {**engine.context.commit_info(), **(commit_info or {})},
        overwrite_schema,
    )


def write_frame(
    engine: StorageEngine,
    df: DataFrame,
    table: Location,
    plan: WritePlan,
    per_run_columns: Sequence[str] = (),
) -> None:
    """Write df as one Delta commit, or none when it would change nothing: a partition
    of `plan.replace_where` whose rows df repeats (ignoring `per_run_columns`) is left
    as it is. The engine judges commits since the comparison as conflicts when it can
    (delta-rs); one that cannot (delta-spark) writes every partition when the table
    changed since."""
    if plan.replace_where is None:
        engine.write(df, table, plan)
        return
    comparison = compare(df, table.uri, plan.partition_by, plan.replace_where, per_run_columns)
    if comparison is None:
        engine.write(df, table, plan)
        return
    comparison.log_unchanged()
    remaining = comparison.remaining()
    if remaining is None:
        return
    if not comparison.unchanged:
        engine.write(df, table, plan)  # every partition is written, as without a comparison
        return
    if not engine.judges_read_version:
        state = engine.state(table)
        if state is None or state.version != comparison.version:
            engine.write(df, table, plan)  # changed since the comparison: write it all
            return
    narrowed = replace(plan, replace_where=remaining, read_version=comparison.version)
    engine.write(df.where(rows_in(df.schema, remaining, table.uri)), table, narrowed)
