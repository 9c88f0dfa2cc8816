"""Errors the storage layer raises, each naming the table and what was expected."""

from __future__ import annotations


class StorageError(RuntimeError):
    """Base class for Delta read/write failures."""


class TableNotFoundError(StorageError):
    """A read of a table no run has written (no Delta log at its location)."""


class SchemaMismatchError(StorageError):
    """A write whose schema differs from the table's."""


class UnsupportedTableFeatureError(StorageError):
    """A table needing a protocol feature the engine cannot honour."""


class CommitConflictError(StorageError):
    """A concurrent transaction made this commit invalid; nothing was committed."""


class ReplaceWhereError(StorageError):
    """replace_where that does not name partitions, or rows outside it."""


class EngineUnavailableError(RuntimeError):
    """The configured engine cannot run in this Spark installation."""


class NoEngineError(RuntimeError):
    """A Spark session no storage engine was bound to (not built by build_session)."""


__all__ = [
    "CommitConflictError",
    "ReplaceWhereError",
    "SchemaMismatchError",
    "StorageError",
    "TableNotFoundError",
    "UnsupportedTableFeatureError",
]
