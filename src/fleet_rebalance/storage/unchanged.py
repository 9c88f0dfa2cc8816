"""A partition overwrite whose rows are already there commits nothing.

A re-run of a date recomputes its rows. When they are the rows the table holds for that
date, a commit would only add a version (new files, same rows): two no-op re-runs of the
nightly added 22 commits. So before a replace_where overwrite, each replaced
partition's new rows are compared with the rows the table holds there, read at one
version and only in those partitions (the work is the date's, not the table's).
Partitions found equal are left out of the write; when none is left nothing is
committed, and the table keeps its version, files and rows (per-run columns included).

Equal means: the same multiset of rows over every column except the per-run ones the
caller names (ingested_files' run_id and ingested_at change every run by design). Each
side is summarised per partition as (row count, and two sums of 64-bit xxhash64 values
of every row's canonical JSON under two salts), which ignores row order and file
layout. The JSON writes nulls out, timestamps to the microsecond with their offset and
doubles in Java's shortest round-trip form, so rows that differ in any compared value
have different texts; a changed partition passes for unchanged only if both 64-bit sums
collide, about 2**-128 for rows that are not built to collide. Maps are written in
their stored order: equal maps in another order count as a change (a needless commit,
never a lost one).

Concurrency: the comparison holds for the version it read. delta-rs commits the
remaining partitions judging conflicts from that version (a commit since then that
changed them or the table's metadata fails the write, nothing committed);
delta-spark writes the narrowed set only when the table is still at that version just
before its write, and otherwise the whole write as asked.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

from fleet_rebalance.storage.errors import SchemaMismatchError
from fleet_rebalance.storage.partitions import partition_value
from fleet_rebalance.storage.selection import quoted
from fleet_rebalance.storage.snapshot import TableState, read_rows, table_state
from fleet_rebalance.storage.table_checks import compare_schemas

log = logging.getLogger(__name__)

JSON_OPTIONS = {
    "ignoreNullFields": "false",
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
}
SALTS = ("fleet_rebalance.unchanged.1", "fleet_rebalance.unchanged.2")
# Sums of up to 2**63 hashes of 64 bits each fit in 38 digits; a long would overflow.
SUM_TYPE = "decimal(38,0)"

Fingerprint = tuple[int, Decimal, Decimal]


@dataclass(frozen=True)
class Comparison:
    """A partition overwrite compared with the table at `version`: of the partitions
    `values` of `column` it replaces, `unchanged` would get the rows they hold."""

    uri: str
    version: int
    column: str
    values: tuple[str | None, ...]
    unchanged: tuple[str | None, ...]

    def remaining(self) -> dict[str, list[str | None]] | None:
        """replace_where for the partitions still to write; None: nothing to commit."""
        left = [v for v in self.values if v not in self.unchanged]
        return {self.column: left} if left else None

    def log_unchanged(self) -> None:
        name = posixpath.basename(self.uri.rstrip("/"))
        for value in self.unchanged:
            log.info("table %s date %s: unchanged, nothing committed", name, value)


def compare(
    new: DataFrame,
    uri: str,
    partition_by: Sequence[str],
    where: Mapping[str, Sequence[str | None]],
    per_run_columns: Sequence[str] = (),
) -> Comparison | None:
    """`new` (the write's rows) against the partitions `where` (log strings) replaces.
    None when the write cannot be a no-op or is not compared: no table yet (the write
    creates it), a schema or partitioning the write changes or the table refuses (the
    write then says why), rows outside `where` (likewise), or several columns in
    `where` (no table here is replaced so)."""
    if len(where) != 1:
        return None
    spark = new.sparkSession
    state = table_state(spark, uri)
    if state is None or not _same_shape(state, new, partition_by):
        return None
    ((column, values),) = where.items()
    compared = [
        f.name for f in state.schema.fields if f.name != column and f.name not in per_run_columns
    ]
    before = fingerprints(read_rows(spark, uri, state.version, where), column, compared)
    if before:
        after = fingerprints(new, column, compared)
        if set(after) - set(values):
            return None
        unchanged = [v for v in values if before.get(v) == after.get(v)]
    else:
        # Nothing there yet (the usual first run of a date): unchanged only if empty.
        unchanged = list(values) if new.isEmpty() else []
    return Comparison(uri, state.version, column, tuple(values), tuple(unchanged))


def fingerprints(
    frame: DataFrame, column: str, compared: Sequence[str]
) -> dict[str | None, Fingerprint]:
    """Per value of `column` (as a log string): row count and two sums of row hashes
    over the `compared` columns. One aggregation pass, no shuffle of rows."""
    text = F.to_json(F.struct(*[quoted(c) for c in compared]), JSON_OPTIONS)
    sums = [F.sum(F.xxhash64(F.lit(salt), text).cast(SUM_TYPE)) for salt in SALTS]
    rows = (
        frame.groupBy(quoted(column).alias("key"))
        .agg(F.count(F.lit(1)).alias("rows"), *[s.alias(f"h{i}") for i, s in enumerate(sums)])
        .collect()
    )
    return {partition_value(r["key"]): (r["rows"], r["h0"], r["h1"]) for r in rows}


def _same_shape(state: TableState, new: DataFrame, partition_by: Sequence[str]) -> bool:
    if state.partition_columns != tuple(partition_by):
        return False
    try:
        added = compare_schemas("", state.schema.json(), new.schema.json(), evolution=True)
    except SchemaMismatchError:
        return False
    return not added
