"""Ad-hoc SQL over the output tables: each Delta table under the warehouse is a view
named after it (offsets, replay_metrics, recommendations, ...)."""

from __future__ import annotations

import csv
import json
import logging
import sys
from collections.abc import Iterator
from typing import TextIO

from pyspark.sql import DataFrame, Row, SparkSession

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.sql")
FORMATS = ("table", "csv", "json")


def register_views(spark: SparkSession, config: Config) -> list[str]:
    names = [*bronze.TABLES, *silver.TABLES, *gold.TABLES]
    registered = []
    warehouse = Warehouse(spark, config.warehouse)
    for name in names:
        if not warehouse.exists(name):
            continue
        warehouse.read(name).createOrReplaceTempView(name)
        registered.append(name)
    missing = sorted(set(names) - set(registered))
    if missing:
        log.info("not yet written (no view): %s", ", ".join(missing))
    return registered


def print_result(df: DataFrame, fmt: str, max_rows: int, out: TextIO = sys.stdout) -> int:
    """Rows printed; csv and json stream every row, table shows the first max_rows."""
    columns = df.columns
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        count = 0
        for row in _rows(df):
            writer.writerow(_plain(row))
            count += 1
        return count
    if fmt == "json":
        count = 0
        for row in _rows(df):
            out.write(json.dumps(row.asDict(recursive=True), default=str) + "\n")
            count += 1
        return count
    rows = df.limit(max_rows + 1).collect()
    shown = [[_cell(v) for v in row] for row in rows[:max_rows]]
    widths = [max([len(c), *(len(r[i]) for r in shown)]) for i, c in enumerate(columns)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out.write(line + "\n" + _line(columns, widths) + "\n" + line + "\n")
    for r in shown:
        out.write(_line(r, widths) + "\n")
    out.write(line + "\n")
    if len(rows) > max_rows:
        out.write(f"(first {max_rows} rows; --max-rows N or --format csv for all)\n")
    return len(shown)


def _rows(df: DataFrame) -> Iterator[Row]:
    return df.toLocalIterator(prefetchPartitions=True)


def _plain(row: Row) -> list:
    return [_cell(v) if isinstance(v, (list, dict, Row)) else v for v in row]


def _cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, Row):
        return json.dumps(value.asDict(recursive=True), default=str)
    if isinstance(value, (list, dict)):
        return json.dumps(
            value, default=lambda v: v.asDict(recursive=True) if isinstance(v, Row) else str(v)
        )
    return str(value)


def _line(cells: list[str], widths: list[int]) -> str:
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
