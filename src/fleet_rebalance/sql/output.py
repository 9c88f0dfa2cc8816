"""How sql prints a statement's result (table, csv, json, markdown), whichever engine ran
it: Spark-free, so the DuckDB path prints the same text without starting a JVM."""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

FORMATS = ("table", "csv", "json", "markdown")


def print_rows(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: str, max_rows: int, out: TextIO
) -> int:
    """Rows printed; csv and json print every row of `rows`, table and markdown the first
    max_rows (and a note when there were more)."""
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        count = 0
        for row in rows:
            writer.writerow([cell(v) if isinstance(v, (list, dict, tuple)) else v for v in row])
            count += 1
        return count
    if fmt == "json":
        count = 0
        for row in rows:
            record = dict(zip(columns, (plain(v) for v in row), strict=True))
            out.write(json.dumps(record, default=str) + "\n")
            count += 1
        return count
    head = list(itertools.islice(rows, max_rows + 1))
    shown = [[cell(v) for v in row] for row in head[:max_rows]]
    more = len(head) > max_rows
    if fmt == "markdown":
        out.write(_markdown_line(columns) + "\n")
        out.write("|" + "|".join("---" for _ in columns) + "|\n")
        for r in shown:
            out.write(_markdown_line(r) + "\n")
        if more:
            out.write(f"\n(first {max_rows} rows; --max-rows N or --format csv for all)\n")
        return len(shown)
    widths = [max([len(c), *(len(r[i]) for r in shown)]) for i, c in enumerate(columns)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out.write(line + "\n" + _line(columns, widths) + "\n" + line + "\n")
    for r in shown:
        out.write(_line(r, widths) + "\n")
    out.write(line + "\n")
    if more:
        out.write(f"(first {max_rows} rows; --max-rows N or --format csv for all)\n")
    return len(shown)


def plain(value: Any) -> Any:
    """A value as JSON holds it: a struct (Spark's Row, DuckDB's dict) as an object, an
    array as a list."""
    if hasattr(value, "asDict"):  # Spark's Row, a tuple with field names
        return value.asDict(recursive=True)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def cell(value: Any) -> str:
    """A value as one table cell: NULL, a struct or array as JSON, anything else str()."""
    if value is None:
        return "NULL"
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(plain(value), default=str)
    return str(value)


def _markdown_line(cells: Sequence[str]) -> str:
    # A pipe would end the cell and a newline the row.
    escaped = (c.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>") for c in cells)
    return "| " + " | ".join(escaped) + " |"


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
