"""SQL statements split at `;` as Spark's parser splits them, each with where it starts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    """One SQL statement: its place among the run's statements and in its source."""

    number: int
    line: int
    text: str


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
