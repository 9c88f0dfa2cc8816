"""sql's statements from the command line: QUERY, -f FILE or stdin (never two of them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from fleet_rebalance.errors import UsageError
from fleet_rebalance.sql.statements import Statement, split_statements

# SQL read from stdin reaches the job as one argument; Linux caps one at 128 KiB.
MAX_SQL_BYTES = 100_000


def read_stdin_sql(stdin: TextIO | None) -> str:
    """sql's statements from stdin, read by the launcher (bounded: they travel on as
    one command-line argument)."""
    if stdin is None or stdin.closed or stdin.isatty():
        raise UsageError(
            'sql: no statement; pass QUERY ("SELECT ..."), -f FILE, or statements on stdin'
        )
    text = stdin.read(MAX_SQL_BYTES + 1)
    if len(text.encode()) > MAX_SQL_BYTES:
        raise UsageError(
            f"sql: more than {MAX_SQL_BYTES} bytes of SQL on stdin; pass them with -f FILE"
        )
    return text


def read_sql_file(name: str) -> str:
    path = Path(name)
    if not path.is_file():
        what = "not a regular file" if path.exists() else "no such file"
        raise UsageError(f"-f {name}: {what}; pass a file of `;`-separated SQL statements")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"-f {name}: not UTF-8 text (byte offset {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"-f {name}: cannot read: {exc.strerror or exc}") from None


def sql_statements(args: argparse.Namespace, stdin: TextIO | None) -> list[Statement]:
    """The statements sql runs, from QUERY, -f FILE or stdin (never two of them)."""
    if args.query is not None and args.file is not None:
        raise UsageError("sql: pass QUERY or -f FILE, not both")
    if args.file is not None:
        source, text = f"-f {args.file}", read_sql_file(args.file)
    elif args.query is not None:
        source, text = "QUERY", args.query
    else:
        source, text = "stdin", read_stdin_sql(stdin)
    statements = split_statements(text)
    if not statements:
        raise UsageError(f"sql: no SQL statement in {source}")
    return statements
