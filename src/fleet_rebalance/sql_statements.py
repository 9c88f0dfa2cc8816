"""sql's statements: from QUERY, -f FILE or stdin, split at `;` as Spark's parser would."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from fleet_rebalance.cli import UsageError

# SQL read from stdin reaches the job as one argument; Linux caps one at 128 KiB.
MAX_SQL_BYTES = 100_000


@dataclass(frozen=True)
class Statement:
    """One SQL statement: its place among the run's statements and in its source."""

    number: int
    line: int
    text: str


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


def split_statements(text: str) -> list[Statement]:
    """`;`-separated statements as Spark's parser delimits them: a `;` in a string
    ('...', "...", with backslash escapes), a quoted identifier (`...`) or a comment
    (-- to the end of the line, /* */ nested) ends none. Each statement starts at its
    first token (so Spark's error positions count from there); empty ones are dropped."""
    statements: list[Statement] = []
    first: int | None = None  # where the current statement's first token starts
    quote = ""
    depth = 0  # /* */ nesting
    i, n = 0, len(text)

    def end(stop: int) -> None:
        nonlocal first
        if first is not None:
            line = text.count("\n", 0, first) + 1
            statements.append(Statement(len(statements) + 1, line, text[first:stop].rstrip()))
        first = None

    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif depth:
            if text.startswith("/*", i):
                depth, i = depth + 1, i + 2
                continue
            if text.startswith("*/", i):
                depth, i = depth - 1, i + 2
                continue
        elif text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
            continue
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            continue
        elif c == ";":
            end(i)
        elif not c.isspace():
            if first is None:
                first = i
            if c in "'\"`":
                quote = c
        i += 1
    end(n)
    return statements
