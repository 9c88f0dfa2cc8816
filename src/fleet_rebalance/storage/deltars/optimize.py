"""Table maintenance on delta-rs: compaction, a full VACUUM past the retention, a
checkpoint, and log cleanup where the log outlives the files (history.py says why).

Compaction rewrites a partition's small files into few; its commit says
dataChange=false (the rows are the same, so a later unchanged re-run still commits
nothing). The caller checks the retention against the longest run first: a run still
writing must not have its uncommitted files, nor the version it read, vacuumed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError
from deltalake.transaction import CommitProperties, PostCommitHookProperties

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage.commit_context import commit_metadata
from fleet_rebalance.storage.deltars.commit import open_table
from fleet_rebalance.storage.errors import CommitConflictError, TableNotFoundError
from fleet_rebalance.storage.history import (
    DEFAULT_LOG_RETENTION,
    Commit,
    Maintained,
    commit_of,
    interval,
    oldest_readable,
    whole_hours,
)
from fleet_rebalance.storage.table_checks import check_writable

# A file of this size is one read split of Spark's (spark.sql.files.maxPartitionBytes);
# a table's own delta.targetFileSize wins.
TARGET_FILE_BYTES = 128 * 1024 * 1024
TARGET_SIZE_KEY = "delta.targetFileSize"
FILE_RETENTION_KEY = "delta.deletedFileRetentionDuration"
LOG_RETENTION_KEY = "delta.logRetentionDuration"


def delta_rs_commits(table_loc: Location) -> list[Commit]:
    """The versions the table's log still holds, newest first."""
    return [_commit(entry) for entry in _open(table_loc).history()]


def maintain_delta_rs(
    table_loc: Location, retention: dt.timedelta, info: Mapping[str, str]
) -> Maintained:
    """Compact, vacuum past `retention` (or the table's own longer
    delta.deletedFileRetentionDuration) and checkpoint; commits carry `info`."""
    uri = table_loc.uri
    table = _open(table_loc)
    config = table.metadata().configuration
    check_writable(uri, table.protocol(), config)
    retention = max(retention, interval(config.get(FILE_RETENTION_KEY)) or retention)
    # Expired log entries go only when the log outlives the files: a version inside the
    # retention needs its entries (or a checkpoint after them) to be read.
    log_retention = (
        interval(config.get(LOG_RETENTION_KEY))
        if LOG_RETENTION_KEY in config
        else DEFAULT_LOG_RETENTION
    )
    clean_logs = log_retention is not None and retention <= log_retention
    properties = CommitProperties(custom_metadata=commit_metadata(info))
    hooks = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=clean_logs)
    before = _file_count(table)
    try:
        # One call for the whole table: delta-rs bins each partition's files smaller
        # than the target on its own and skips partitions with a single one, and the
        # table gets one commit, not one per partition.
        table.optimize.compact(
            target_size=None if TARGET_SIZE_KEY in config else TARGET_FILE_BYTES,
            commit_properties=properties,
            post_commithook_properties=hooks,
        )
        # full: also the files no commit took (a killed run's), by their age; the
        # retention check keeps a running job's files out of reach.
        deleted = table.vacuum(
            retention_hours=whole_hours(retention),
            dry_run=False,
            enforce_retention_duration=False,
            full=True,
            commit_properties=properties,
            post_commithook_properties=hooks,
        )
    except CommitFailedError as exc:
        raise CommitConflictError(f"{uri}: maintenance lost to a concurrent commit: {exc}") from exc
    # Last, so the next reader starts from the final version and log cleanup can reach it.
    table.create_checkpoint()
    if clean_logs:
        table.cleanup_metadata()
    history = [_commit(entry) for entry in table.history()]
    return Maintained(
        files_before=before,
        files_after=_file_count(table),
        vacuumed_files=len(deleted),
        vacuumed_bytes=_vacuumed_bytes(table.history(2)) if deleted else 0,
        version=table.version(),
        oldest_readable=oldest_readable(history, _now() - retention),
        logs_cleaned=clean_logs,
    )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _open(table_loc: Location) -> DeltaTable:
    table = open_table(table_loc.uri, storage_options=table_loc.options)
    if table is None:
        raise TableNotFoundError(f"{table_loc.uri}: not a Delta table (no _delta_log)")
    return table


def _file_count(table: DeltaTable) -> int:
    return int(table.get_add_actions(flatten=False).num_rows)


def _commit(entry: Mapping[str, Any]) -> Commit:
    stamp = dt.datetime.fromtimestamp(entry["timestamp"] / 1000, dt.UTC)
    return commit_of(int(entry["version"]), stamp, entry)


def _vacuumed_bytes(latest: list[dict[str, Any]]) -> int | None:
    """What VACUUM START recorded it would delete (delta-rs commits START and END)."""
    for entry in latest:
        if entry.get("operation") == "VACUUM START":
            size = (entry.get("operationMetrics") or {}).get("sizeOfDataToDelete")
            return int(size) if size is not None else None
    return None
