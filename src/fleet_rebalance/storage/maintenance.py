"""Table maintenance: Delta's own OPTIMIZE and VACUUM statements.

Kept thin: Delta writes a checkpoint every 10 commits (delta.checkpointInterval) and
cleans expired log entries at checkpoints by itself, so there is no step for either.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from fleet_rebalance.filesystems import Location
from fleet_rebalance.storage import delta
from fleet_rebalance.storage.jvm_paths import jvm_uri
from fleet_rebalance.storage.versions import Maintained, oldest_readable, whole_hours

# Delta refuses VACUUM below its 7-day default unless this check is off; it is turned
# off only for the statement, after our own check against the longest run.
RETENTION_CHECK_KEY = "spark.databricks.delta.retentionDurationCheck.enabled"
DELTA_DEFAULT_RETENTION = dt.timedelta(days=7)
USER_METADATA_KEY = "spark.databricks.delta.commitInfo.userMetadata"
LISTING_PARALLELISM_KEY = "spark.sql.sources.parallelPartitionDiscovery.parallelism"


def maintain(
    spark: SparkSession, table: Location, retention: dt.timedelta, info: Mapping[str, str]
) -> Maintained:
    """OPTIMIZE, then VACUUM past `retention`; the commits carry `info` (the run's
    context with job=maintain). A table whose own delta.deletedFileRetentionDuration is
    longer keeps its files that long."""
    uri = jvm_uri(spark, table)
    name = "delta.`" + uri.replace("`", "``") + "`"
    hours = whole_hours(retention)
    before = _file_count(spark, name)
    saved = {
        key: spark.conf.get(key, None)
        for key in (RETENTION_CHECK_KEY, USER_METADATA_KEY, LISTING_PARALLELISM_KEY)
    }
    spark.conf.set(USER_METADATA_KEY, json.dumps(dict(info), sort_keys=True))
    # VACUUM lists the table's directories in this many tasks (Spark's default is 10,000:
    # minutes of task overhead for a small table); a few per core is plenty.
    spark.conf.set(LISTING_PARALLELISM_KEY, str(4 * spark.sparkContext.defaultParallelism))
    if retention < DELTA_DEFAULT_RETENTION:
        spark.conf.set(RETENTION_CHECK_KEY, "false")
    try:
        spark.sql(f"OPTIMIZE {name}").collect()
        spark.sql(f"VACUUM {name} RETAIN {hours} HOURS").collect()
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    history = delta.history(spark, table)
    metrics = _vacuum_metrics(spark, uri)
    return Maintained(
        files_before=before,
        files_after=_file_count(spark, name),
        vacuumed_files=int(metrics["numFilesToDelete"]) if metrics else None,
        vacuumed_bytes=int(metrics["sizeOfDataToDelete"]) if metrics else None,
        version=max(c.version for c in history),
        oldest_readable=oldest_readable(history, dt.datetime.now(dt.UTC) - retention),
    )


def _file_count(spark: SparkSession, name: str) -> int:
    detail = spark.sql(f"DESCRIBE DETAIL {name}").first()
    assert detail is not None, "DESCRIBE DETAIL returns a row"
    return int(detail["numFiles"])


def _vacuum_metrics(spark: SparkSession, uri: str) -> dict[str, str]:
    """VACUUM START's metrics when this VACUUM logged them (Delta logs VACUUM as
    commits where spark.databricks.delta.vacuum.logging.enabled), else empty."""
    for row in DeltaTable.forPath(spark, uri).history(2).collect():
        if row["operation"] == "VACUUM START":
            return dict(row["operationMetrics"] or {})
    return {}
