"""replay_rows behind a cogrouped Arrow UDF: Arrow tables in, each silver table's rows
out as an Arrow table in its own schema (which the job packs: pipeline/tagged.py).

applyInPandas converts every column of every group to pandas, one Series at a time,
and the result back the same way; with many small groups that bookkeeping cost more
than the replay itself. Here the replay reads the Arrow columns (replay/group.py), and
each table's rows go to Arrow in its own schema: not through the union of every
table's columns, most of them null in any row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.replay.group import TABLE, error_row, replay_rows


def replay_group_arrow(
    key: tuple[pa.Scalar, ...],
    captures: pa.Table,
    lags: pa.Table,
    *,
    run_date: Any,
    tables: Mapping[str, pa.Schema],
    **replay: Any,
) -> dict[str, pa.Table]:
    """The silver rows of one (cluster, group_id), a table each (by name), in its
    schema (`tables`); `replay`: replay_rows' other keywords."""
    plain = tuple(k.as_py() for k in key)
    rows = replay_rows(plain, captures, lags, run_date=run_date, **replay)
    try:
        return tables_of(rows, tables)
    except (pa.ArrowException, TypeError, ValueError) as exc:  # a row Arrow cannot hold
        return tables_of([error_row(plain, run_date, exc)], tables)


def tables_of(
    rows: Iterable[Mapping[str, Any]], tables: Mapping[str, pa.Schema]
) -> dict[str, pa.Table]:
    """Rows (dicts naming their `_table`, missing keys null) as a table each, in its
    schema; NaN in a float column is null, as it was when pandas held the rows."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        found.setdefault(row[TABLE], []).append(row)
    return {
        name: _nan_as_null(pa.Table.from_pylist(of, tables[name])) for name, of in found.items()
    }


def _nan_as_null(table: pa.Table) -> pa.Table:
    for i, field in enumerate(table.schema):
        if pa.types.is_floating(field.type):
            column = table.column(i)
            table = table.set_column(
                i, field, pc.if_else(pc.is_nan(column), pa.scalar(None, field.type), column)
            )
    return table
