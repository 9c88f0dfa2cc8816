"""Keeping a warehouse that lives for years small: per table, compaction of small files,
VACUUM of files no version inside the retention needs, and a checkpoint.

Every date, and every re-run of one, adds files; compaction rewrites a partition's small
files into few (its commit says dataChange=false: the rows are the same, so a later
unchanged re-run still commits nothing). VACUUM then deletes what no version younger
than the retention reads: files removed longer ago than the retention, and files no
commit ever took (a killed run's) older than it. So every version committed within the
retention, and the one current at its start, stays readable.

delta-rs runs here; delta-spark (maintenance_spark.py) runs Delta's own OPTIMIZE and
VACUUM. The caller checks the retention against the longest run first: a run still
writing must not have its uncommitted files, nor the version it read, vacuumed.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage import _run_context, table_location
from fleet_rebalance.storage.commit_context import commit_context, commit_metadata
from fleet_rebalance.storage.engine import DELTA_RS, DELTA_SPARK, ENGINE_KEY
from fleet_rebalance.storage.errors import CommitConflictError, StorageError, TableNotFoundError

log = logging.getLogger(__name__)

DELTA_LOG = "_delta_log"
JOB = "maintain"
# A file of this size is one read split of Spark's (spark.sql.files.maxPartitionBytes);
# a table's own delta.targetFileSize wins.
TARGET_FILE_BYTES = 128 * 1024 * 1024
TARGET_SIZE_KEY = "delta.targetFileSize"
FILE_RETENTION_KEY = "delta.deletedFileRetentionDuration"
LOG_RETENTION_KEY = "delta.logRetentionDuration"
DEFAULT_LOG_RETENTION = dt.timedelta(days=30)  # Delta's default logRetentionDuration
_INTERVAL = re.compile(r"\s*(?:interval\s+)?(\d+)\s+(week|day|hour|minute|second)s?\s*", re.I)


@dataclass(frozen=True)
class Commit:
    """One version in a table's log: when it was committed and by which run."""

    version: int
    timestamp: dt.datetime
    run_id: str | None


@dataclass(frozen=True)
class Maintained:
    """What maintenance did to one table."""

    files_before: int
    files_after: int
    vacuumed_files: int | None  # None (both): the engine did not say
    vacuumed_bytes: int | None
    version: int
    oldest_readable: int  # every version from this one to `version` can be read
    logs_cleaned: bool

    @property
    def versions_kept(self) -> int:
        return self.version - self.oldest_readable + 1


def delta_tables(root: Location) -> list[str]:
    """The names of the Delta tables directly under the warehouse (directories holding
    a _delta_log), sorted; none when the warehouse does not exist yet."""
    import pyarrow.fs as pafs

    from fleet_rebalance.filesystems import exists

    fs, path = root.filesystem()
    try:
        entries = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    except FileNotFoundError:
        return []
    names = [e.base_name for e in entries if e.type == pafs.FileType.Directory]
    return sorted(n for n in names if exists(fs, root.child(n, DELTA_LOG).fs_path))


def commits(spark: SparkSession, uri: str) -> list[Commit]:
    """The versions the table's log still holds, newest first."""
    if spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
        from fleet_rebalance.storage.jvm_paths import jvm_uri
        from fleet_rebalance.storage.maintenance_spark import delta_spark_commits

        return delta_spark_commits(spark, jvm_uri(spark, table_location(spark, uri)))
    return [_commit(entry) for entry in _open(spark, uri).history()]


def maintain_table(spark: SparkSession, uri: str, retention: dt.timedelta) -> Maintained:
    """Compact, vacuum past `retention` and checkpoint one table. The commits carry the
    run's context with job=maintain. The caller has checked `retention` against the
    longest run; a table whose own delta.deletedFileRetentionDuration is longer keeps
    its files that long."""
    info = {**_run_context(spark), "job": JOB}
    if spark.conf.get(ENGINE_KEY, DELTA_RS) == DELTA_SPARK:
        from fleet_rebalance.storage.jvm_paths import jvm_uri
        from fleet_rebalance.storage.maintenance_spark import maintain_delta_spark

        return maintain_delta_spark(
            spark, jvm_uri(spark, table_location(spark, uri)), retention, info
        )
    return _maintain_delta_rs(spark, uri, retention, info)


def _maintain_delta_rs(
    spark: SparkSession, uri: str, retention: dt.timedelta, info: Mapping[str, str]
) -> Maintained:
    from deltalake.exceptions import CommitFailedError
    from deltalake.transaction import CommitProperties, PostCommitHookProperties

    from fleet_rebalance.storage.table_checks import check_writable

    table = _open(spark, uri)
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
            retention_hours=_whole_hours(retention),
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


def oldest_readable(history: list[Commit], cutoff: dt.datetime) -> int:
    """The oldest version a VACUUM at `cutoff` left readable: the one current at the
    cutoff (its files were removed after it), else the oldest the log holds."""
    if not history:
        raise StorageError("a table without versions")
    before = [c.version for c in history if c.timestamp <= cutoff]
    return max(before) if before else min(c.version for c in history)


def interval(text: str | None) -> dt.timedelta | None:
    """A Delta table property's duration ("interval 30 days"), or None when absent or
    in a form this does not read."""
    match = _INTERVAL.fullmatch(text or "")
    if match is None:
        return None
    return dt.timedelta(**{f"{match[2].lower()}s": int(match[1])})


def _whole_hours(span: dt.timedelta) -> int:
    return -(-int(span.total_seconds()) // 3600)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _open(spark: SparkSession, uri: str):  # -> deltalake.DeltaTable
    from fleet_rebalance.storage.deltars_commit import open_table

    where = table_location(spark, uri)
    table = open_table(where.uri, storage_options=where.options)
    if table is None:
        raise TableNotFoundError(f"{uri}: not a Delta table (no _delta_log)")
    return table


def _file_count(table: Any) -> int:
    return table.get_add_actions(flatten=False).num_rows


def _commit(entry: Mapping[str, Any]) -> Commit:
    stamp = dt.datetime.fromtimestamp(entry["timestamp"] / 1000, dt.UTC)
    run_id = commit_context(entry).get("runId")
    return Commit(int(entry["version"]), stamp, str(run_id) if run_id else None)


def _vacuumed_bytes(latest: list[Mapping[str, Any]]) -> int | None:
    """What VACUUM START recorded it would delete (delta-rs commits START and END)."""
    for entry in latest:
        if entry.get("operation") == "VACUUM START":
            size = (entry.get("operationMetrics") or {}).get("sizeOfDataToDelete")
            return int(size) if size is not None else None
    return None
