"""Errors the storage layer raises, each naming the table and what was expected."""

from __future__ import annotations


class StorageError(RuntimeError):
    """Base class for Delta read/write failures."""


class TableNotFoundError(StorageError):
    """A read of a table no run has written (no Delta log at its location)."""


class SchemaMismatchError(StorageError):
    """A write whose schema differs from the table's."""


class UnsupportedTableFeatureError(StorageError):
    """A table needing a protocol feature a reader outside Spark cannot honour."""


class CommitConflictError(StorageError):
    """A concurrent transaction made this commit invalid; nothing was committed."""


class ReplaceWhereError(StorageError):
    """replace_where that does not name partitions, or rows outside it."""


class DeltaUnavailableError(RuntimeError):
    """Spark's Delta connector is not on the session's classpath."""


class NoRunContextError(RuntimeError):
    """A Spark session no run was bound to (not built by build_session)."""


__all__ = [
    "CommitConflictError",
    "DeltaUnavailableError",
    "ReplaceWhereError",
    "SchemaMismatchError",
    "StorageError",
    "TableNotFoundError",
    "UnsupportedTableFeatureError",
]
