"""sql --engine duckdb: the sql job's statements and output without a JVM.

Each query on Spark pays a JVM start (25-32 s) for tables that deltalake reads as Arrow
in well under a second. Here every Delta table under the warehouse that a statement
names is a DuckDB view of its Arrow dataset (DuckDB pushes the columns and the filters,
partitions included, into the scan; tables it does not name are not opened), and the
rows are printed by the Spark path's own formats (sql.output). Spark stays the default
and the engine for clusters and for Delta's own SQL: Spark's LEFT ANTI/SEMI JOIN is
run as DuckDB's ANTI/SEMI JOIN, and a statement in Spark SQL that DuckDB's dialect
lacks is refused in one line naming the difference.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from fleet_rebalance.config import Config, one_line
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.filesystems import location
from fleet_rebalance.sql.output import print_rows
from fleet_rebalance.sql.statements import Statement
from fleet_rebalance.storage.versions import delta_tables

DELTA_LOG = "_delta_log"
FETCH_ROWS = 10_000  # rows per fetch while csv and json stream
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A statement naming one of these may list the tables: every table is registered.
CATALOG_WORDS = frozenset({"tables", "information_schema", "duckdb_tables", "duckdb_views"})
# Statement kinds whose result is rows (Spark prints nothing for SET, CREATE VIEW, ...).
ROW_KINDS = ("SELECT", "EXPLAIN", "PRAGMA")
# Spark SQL DuckDB reads otherwise or not at all: (pattern in the statement, what to say).
DIALECT_HINTS = (
    (
        re.compile(r"\b(VERSION|TIMESTAMP)\s+AS\s+OF\b", re.IGNORECASE),
        "time travel (VERSION AS OF, TIMESTAMP AS OF) is Delta's SQL on Spark",
    ),
    (
        re.compile(r"\bDESCRIBE\s+(HISTORY|DETAIL)\b", re.IGNORECASE),
        "DESCRIBE HISTORY and DESCRIBE DETAIL are Delta's SQL on Spark",
    ),
    (
        re.compile(r"\bDIV\b", re.IGNORECASE),
        "Spark's integer division a DIV b is a // b in DuckDB",
    ),
    (
        re.compile(r'"[^"]*"'),
        "Spark reads \"...\" as a string, DuckDB as a column name: write strings as '...'",
    ),
)
SPARK_HINT = "or run it with --engine spark"
# deltalake (delta-rs 1.6) decodes the percent escapes of a local path or an object key
# once more than the store holds them: it opens a warehouse under "a%41" as "aA" and
# finds no log there.
PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# Spark's LEFT ANTI/SEMI JOIN outside strings, quoted names and comments: DuckDB's
# ANTI/SEMI JOIN, the same rows (NOT EXISTS / EXISTS semantics both).
SPARK_JOIN = re.compile(
    r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`[^`]*`|--[^\n]*|/\*.*?\*/"
    r"|\bLEFT\s+(ANTI|SEMI)\s+JOIN\b",
    re.IGNORECASE | re.DOTALL,
)


class Warehouse:
    """The warehouse's tables as DuckDB views, each opened when a statement first names
    it (opening one reads its Delta log: tens of milliseconds)."""

    def __init__(self, connection: Any, config: Config) -> None:
        self.connection = connection
        self.root = location(config.warehouse, config.storage.options)
        if PERCENT_ESCAPE.search(self.root.uri):
            raise JobFailed(
                f"--engine duckdb cannot read the warehouse {config.warehouse}: the deltalake "
                "package decodes the %-escape in its path once more than the store's names "
                "hold; run it with --engine spark (the default)"
            )
        self.tables = delta_tables(self.root)
        self.registered: set[str] = set()

    def register_for(self, text: str) -> None:
        words = {w.lower() for w in WORD.findall(text)}
        every = bool(words & CATALOG_WORDS)
        for name in self.tables:
            if name in self.registered or not (every or name.lower() in words):
                continue
            self.connection.register(name, self._dataset(name))
            self.registered.add(name)

    def _dataset(self, name: str) -> Any:
        from deltalake import DeltaTable

        from fleet_rebalance.storage.table_checks import check_readable

        table_loc = self.root.child(name)
        try:
            table = DeltaTable(table_loc.delta_uri, storage_options=dict(table_loc.options) or None)
            check_readable(table_loc.uri, table.protocol(), table.metadata().configuration)
            return table.to_pyarrow_dataset()
        except Exception as exc:
            raise JobFailed(f"table {name} ({table_loc.uri}): cannot read it: {exc}") from exc


def run_statements(
    config: Config,
    statements: list[Statement],
    fmt: str,
    max_rows: int,
    out: TextIO | None = None,
) -> int:
    """Each statement in order, as pipeline.sql.run_statements prints them on Spark, to
    `out` (sys.stdout as it is when called). Returns the rows printed; a statement
    DuckDB refuses raises JobFailed."""
    import duckdb

    out = sys.stdout if out is None else out
    connection = duckdb.connect()
    warehouse = Warehouse(connection, config)
    printed = shown = 0
    for statement in statements:
        warehouse.register_for(statement.text)
        text = duckdb_text(statement.text)
        try:
            kinds = [s.type.name for s in connection.extract_statements(text)]
            cursor = connection.execute(text)
            if not kinds or kinds[-1] not in ROW_KINDS or cursor.description is None:
                continue
            if shown and fmt != "json":
                out.write("\n")
            columns = [d[0] for d in cursor.description]
            rows = _rows(cursor, [str(d[1]) for d in cursor.description])
            printed += print_rows(columns, rows, fmt, max_rows, out)
            out.flush()
            shown += 1
        except duckdb.Error as exc:
            raise JobFailed(
                duckdb_failure(exc, statement, len(statements), warehouse.tables, config.warehouse)
            ) from exc
    return printed


def duckdb_failure(
    exc: Exception, statement: Statement, count: int, tables: Sequence[str], warehouse: str
) -> str:
    """DuckDB's first line, where the statement is when there are several, the tables
    there are for an unknown one, and what Spark SQL in the statement DuckDB reads
    otherwise."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"DuckDB: {lines[0] if lines else type(exc).__name__}"
    where = (
        f"statement {statement.number} of {count} (line {statement.line}): " if count > 1 else ""
    )
    if type(exc).__name__ == "CatalogException" and "does not exist" in text:
        if tables:
            text += f" Tables: {', '.join(tables)}."
        else:
            text += (
                f" No table has been written under {warehouse} yet: run ./spark-submit.sh "
                "nightly first, or pass --warehouse where the tables are."
            )
        return one_line(where + text)
    hints = [hint for pattern, hint in DIALECT_HINTS if pattern.search(statement.text)]
    return one_line(f"{where}{text} ({'; '.join([*hints, SPARK_HINT])})")


def duckdb_text(text: str) -> str:
    """A statement in DuckDB's words where Spark SQL says the same otherwise (LEFT ANTI
    JOIN); anything else as it is."""
    return SPARK_JOIN.sub(
        lambda m: f"{m.group(1).upper()} JOIN" if m.group(1) else m.group(0), text
    )


def _rows(cursor: Any, types: list[str]) -> Iterator[tuple]:
    """The result's rows as Spark's collect gives them: a TIMESTAMP WITH TIME ZONE as a
    naive datetime in this process's local time, as pyspark converts Spark's TIMESTAMP."""
    zoned = [i for i, t in enumerate(types) if "WITH TIME ZONE" in t]
    while True:
        batch = cursor.fetchmany(FETCH_ROWS)
        if not batch:
            return
        for row in batch:
            if zoned:
                row = list(row)
                for i in zoned:
                    row[i] = _local(row[i])
                row = tuple(row)
            yield row


def _local(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone().replace(tzinfo=None)
    if isinstance(value, list):
        return [_local(v) for v in value]
    if isinstance(value, dict):
        return {k: _local(v) for k, v in value.items()}
    return value
