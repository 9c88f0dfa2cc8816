"""Replay: bronze -> silver (rebalance_events, assignment_replay, replay_metrics,
replay_errors) for one date, one cogrouped Arrow UDF call per (cluster, group_id):
member rows on one side, per-partition lag rows on the other (replay/arrow_io.py says
why not applyInPandas).

Snapshots are a group's captures that can tell its membership, plus its last such
capture of the previous date as the baseline; an Empty group shows up through its state
row with no members. Anything else is a gap (the group is not replayed at that capture:
its next usable capture shows where it ended up), never "everyone left":
- a `kafka-consumer-groups.sh --describe --members` capture counts when its file was
  ingested `ok`; a failed capture is a gap for every group of the cluster;
- an `incomplete` one (lines quarantined) is a gap only for the groups it lost lines
  of, attributed from the quarantine and members rows' line numbers (replay/gaps.py):
  replayed as is, a lost member line would leave and rejoin, two phantom rebalances;
  every other group of the capture replays as if nothing was lost;
- a jsonl file ingested `ok` counts for the snapshots it holds; a quarantined jsonl
  line loses its group's whole snapshot, so that group has no rows there: a gap.
"""

from __future__ import annotations

import datetime as dt
import logging
import operator
import time
from collections.abc import Callable
from functools import partial, reduce

import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql.pandas.types import to_arrow_schema

from fleet_rebalance.capture.result import INCOMPLETE, MEMBERS, READ_WHOLE
from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, silver, tagged
from fleet_rebalance.replay.arrow_io import replay_group_arrow
from fleet_rebalance.replay.assignor_runs import default_assignors
from fleet_rebalance.replay.client_library import ClientLibraries
from fleet_rebalance.replay.gaps import lost_groups
from fleet_rebalance.replay.group import LOG, OWN_ASSIGNMENT, TopicHistory
from fleet_rebalance.replay.rebalance_events import Coverage, Settings
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.replay")
KEY = ["cluster", "group_id", "captured_at"]
JSONL = "jsonl"  # ingested_files.kind of a programmatic exporter's snapshots
COORDINATOR_LOG = "coordinator_log"  # ingested_files.kind of a broker's server.log
# The statuses of the files whose rows the replay reads: an incomplete one's groups that
# lost lines are gaps (gap_keys).
REPLAYED = (*READ_WHOLE, INCOMPLETE)


def run(
    spark: SparkSession, config: Config, run_date: dt.date, assignors: list[str] | None = None
) -> dict[str, int]:
    if run_date is None:
        raise ValueError("replay runs one date at a time: pass --date")
    started = time.monotonic()
    assignors = assignors or default_assignors()
    function = group_function(spark, config, run_date, assignors)
    result = per_group(spark, config, run_date, function).persist()
    warehouse = Warehouse(spark, config.warehouse)
    try:
        counts = {name: 0 for name in silver.TABLES} | tagged.row_counts(result)
        frames = tagged.table_frames(result, silver.TABLES, counts, warehouse.write_tasks)
        for name, frame in frames.items():
            warehouse.replace_dates(frame, name, "event_date", [run_date], counts[name])
    finally:
        result.unpersist()
    log.info(
        "replay of %s with %s done in %.1fs: %s",
        run_date,
        ", ".join(assignors),
        time.monotonic() - started,
        counts,
    )
    if counts.get("replay_errors"):
        log.warning("%d replay error(s): see the replay_errors table", counts["replay_errors"])
    return counts


def group_function(
    spark: SparkSession,
    config: Config,
    run_date: dt.date,
    assignors: list[str],
    history: dict[str, TopicHistory] | None = None,
) -> Callable:
    """The per-group function per_group runs: the replay with what every group of the
    date shares (topic partition counts, the clusters' logged hours, the settings);
    `history` in place of topic_history's (tests compare with the whole history)."""
    m = config.metrics
    counts, ids = topic_metadata(spark, config, run_date)
    return partial(
        replay_group_arrow,
        run_date=run_date,
        assignors=assignors,
        topic_history=counts if history is None else history,
        topic_ids=ids,
        coverage=log_coverage(spark, config, run_date),
        settings=Settings.of(m),
        libraries=ClientLibraries(m.client_libraries),
        tables={name: to_arrow_schema(schema) for name, schema in silver.TABLES.items()},
    )


def log_coverage(spark: SparkSession, config: Config, run_date: dt.date) -> dict[str, Coverage]:
    """Each cluster's hours of the replayed days with a coordinator log: the hour a
    log file is named for (server.log.YYYY-MM-DD-HH), and every hour from each log
    file's first coordinator line to its last. Small: clusters x hours."""
    warehouse = Warehouse(spark, config.warehouse)
    days = _replayed_days(run_date)
    hour = F.date_trunc("hour", "captured_at")
    named = (
        _table(spark, config, "ingested_files", days)
        .where(
            (F.col("kind") == COORDINATOR_LOG)
            & F.col("status").isin(*REPLAYED)
            & F.col("captured_at").isNotNull()
        )
        .select("cluster", hour.alias("hour"))
    )
    if warehouse.exists("coordinator_events"):
        spans = (
            _table(spark, config, "coordinator_events", days)
            .groupBy("cluster", "source_file")
            .agg(F.min("logged_at").alias("first"), F.max("logged_at").alias("last"))
            .select(
                "cluster",
                F.explode(
                    F.sequence(
                        F.date_trunc("hour", "first"),
                        F.date_trunc("hour", "last"),
                        F.expr("INTERVAL 1 HOUR"),
                    )
                ).alias("hour"),
            )
        )
        named = named.unionByName(spans)
    hours: dict[str, set[dt.datetime]] = {}
    for row in named.where(F.col("cluster").isNotNull()).distinct().collect():
        hours.setdefault(row["cluster"], set()).add(_naive(row["hour"]))
    return {cluster: Coverage(frozenset(found)) for cluster, found in hours.items()}


def _naive(at: dt.datetime) -> dt.datetime:
    """An instant as the replay's naive UTC (how Arrow hands captures to it)."""
    return at.astimezone(dt.UTC).replace(tzinfo=None) if at.tzinfo else at


def per_group(
    spark: SparkSession, config: Config, run_date: dt.date, function: Callable
) -> DataFrame:
    """function(key, captures, lags) -> each silver table's rows (Arrow, by name), once
    per (cluster, group_id), handed to Spark packed (tagged.PACKED)."""
    keys = capture_keys(spark, config, run_date)
    captures = capture_rows(spark, config, run_date, keys).unionByName(
        log_rows(spark, config, run_date, keys), allowMissingColumns=True
    )
    lags = lag_rows(spark, config, run_date, keys)
    return (
        captures.groupBy("cluster", "group_id")
        .cogroup(lags.groupBy("cluster", "group_id"))
        .applyInArrow(
            lambda key, left, right: tagged.packed_tables(function(key, left, right)),
            tagged.PACKED,
        )
    )


def capture_keys(spark: SparkSession, config: Config, run_date: dt.date) -> DataFrame:
    """(cluster, group_id, captured_at) of every capture replayed: the date's captures
    with members or an Empty state whose members file was ingested OK (or incomplete,
    but not for the groups it lost lines of), or that came from a jsonl file ingested
    OK, and each group's last such capture of the previous date. One row per capture,
    not per member: both sides of the cogroup are cut to these keys."""
    days = _replayed_days(run_date)
    files = _table(spark, config, "ingested_files", days)
    members_files = files.where(
        (F.col("kind") == MEMBERS) & F.col("status").isin(*REPLAYED)
    ).select("cluster", "captured_at")
    # A jsonl snapshot is its group's whole capture or nothing (capture/jsonl.py): an
    # incomplete export (a damaged stream) is a gap for the groups it lost, no more.
    exports = files.where((F.col("kind") == JSONL) & F.col("status").isin(*REPLAYED)).select(
        F.col("path").alias("source_file")
    )
    with_members = _members(spark, config, days).where(F.col("consumer_id").isNotNull())
    empty = _described_states(spark, config, days).where(F.col("state") == "Empty")
    candidates = with_members.select(*KEY, "source_file").unionByName(
        empty.select(*KEY, "source_file")
    )
    gaps = gap_keys(spark, config, days)
    described = (
        candidates.join(members_files, on=["cluster", "captured_at"], how="left_semi")
        .join(
            gaps.where(F.col("group_id").isNull()), on=["cluster", "captured_at"], how="left_anti"
        )
        .join(gaps.where(F.col("group_id").isNotNull()), on=KEY, how="left_anti")
    )
    # A jsonl snapshot may carry its own cluster and time: its file is found by name.
    exported = candidates.join(exports, on="source_file", how="left_semi")
    keys = described.select(*KEY).unionByName(exported.select(*KEY)).distinct()
    earlier = F.to_date("captured_at") < F.lit(run_date)
    last_before = F.max(F.when(earlier, F.col("captured_at"))).over(
        Window.partitionBy("cluster", "group_id")
    )
    return (
        keys.withColumn("_baseline", last_before)
        .where(~earlier | (F.col("captured_at") == F.col("_baseline")))
        .drop("_baseline")
    )


def gap_keys(spark: SparkSession, config: Config, days: list[dt.date]) -> DataFrame:
    """(cluster, group_id, captured_at) of the groups each incomplete members capture of
    `days` lost lines of (replay/gaps.py attributes them); group_id null: the whole
    capture. Small: only incomplete files' quarantine and members rows reach the driver,
    and nothing but their list when there is none."""
    incomplete = (
        _table(spark, config, "ingested_files", days)
        .where((F.col("kind") == MEMBERS) & (F.col("status") == INCOMPLETE))
        .where(F.to_date("captured_at").isin(days))
        .select("path", "cluster", "captured_at")
    )
    paths = [r["path"] for r in incomplete.select("path").collect()]
    rows: list[tuple[str, str | None]] = []
    if paths:
        quarantined = (
            _table(spark, config, "quarantine", days)
            .where(F.col("source_file").isin(paths))
            .select("source_file", "line_number", "line")
            .collect()
        )
        parsed = (
            _members(spark, config, days)
            .where(F.col("source_file").isin(paths))
            .select("source_file", "line_number", "group_id")
            .collect()
        )
        # An incomplete file whose quarantine rows cannot be found: all of it is a gap.
        lost = {path: None for path in paths} | lost_groups(quarantined, parsed)
        rows = [
            (path, group)
            for path, groups in sorted(lost.items())
            for group in (sorted(groups) if groups is not None else [None])
        ]
        log.info(
            "%d group capture(s) are gaps because their members capture lost lines, and "
            "%d whole capture(s), of %d incomplete members capture(s)",
            sum(1 for _, group in rows if group is not None),
            sum(1 for _, group in rows if group is None),
            len(paths),
        )
    lost_keys = spark.createDataFrame(rows, "path string, group_id string")
    return lost_keys.join(incomplete, on="path", how="inner").select(*KEY)


def capture_rows(
    spark: SparkSession, config: Config, run_date: dt.date, keys: DataFrame
) -> DataFrame:
    """One row per member per capture of `keys` (plus one per capture of an Empty
    group), flat: assignments as two parallel arrays, so Arrow hands them to pandas as
    numpy arrays instead of a dict per partition. `line_number` keeps the tool's member
    order: the coordinator's, which is also its JoinGroup response order. `rebalancing`:
    the tool warned it described the group mid-rebalance (null in tables written before
    the column existed); `group_type` as the capture says (share and streams groups are
    replayed without assignors: replay/group.py)."""
    days = _replayed_days(run_date)
    members = _members(spark, config, days)
    warned = members["rebalancing"] if "rebalancing" in members.columns else F.lit(None)
    kind = members["group_type"] if "group_type" in members.columns else F.lit(None)
    members = members.select(
        *KEY,
        "line_number",
        warned.cast("boolean").alias("rebalancing"),
        kind.cast("string").alias("group_type"),
        "consumer_id",
        "group_instance_id",
        "host",
        "client_id",
        "subscription",
        F.transform("assignment", lambda tp: tp["topic"]).alias("assigned_topics"),
        F.transform("assignment", lambda tp: tp["partition"]).alias("assigned_partitions"),
    )
    # Both sides cut to the keys before the full join: partitioned by capture already,
    # the join shuffles neither again.
    rows = (
        members.join(keys, on=KEY, how="left_semi")
        .join(_states(spark, config, days).join(keys, on=KEY, how="left_semi"), on=KEY, how="full")
        .where(F.col("consumer_id").isNotNull() | (F.col("state") == "Empty"))
    )
    return _typed_by_states(rows, _table(spark, config, "group_states", days))


def _typed_by_states(rows: DataFrame, states: DataFrame) -> DataFrame:
    """A share or streams group's members rows do not always say so (the plain 4.1
    share members view has the consumer view's columns); its `--state` view or a
    `kafka-groups.sh --list` row of the replayed days does, and that keeps every
    consumer assignor off it."""
    if "group_type" not in states.columns:
        return rows
    own = (
        states.where(F.col("group_type").isin(*OWN_ASSIGNMENT))
        .groupBy("cluster", "group_id")
        .agg(F.first("group_type").alias("_listed_type"))
    )
    return (
        rows.join(own, on=["cluster", "group_id"], how="left")
        .withColumn("group_type", F.coalesce("group_type", "_listed_type"))
        .drop("_listed_type")
    )


def _replayed_days(run_date: dt.date) -> list[dt.date]:
    """The date and the one before it, whose last capture is each group's baseline."""
    return [run_date - dt.timedelta(days=1), run_date]


def _members(spark: SparkSession, config: Config, days: list[dt.date]) -> DataFrame:
    return _table(spark, config, "members", days)


def _states(spark: SparkSession, config: Config, days: list[dt.date]) -> DataFrame:
    """One state row per capture of a group: a null never hides another row's value."""
    return (
        _described_states(spark, config, days)
        .groupBy(*KEY)
        .agg(
            F.first("state", ignorenulls=True).alias("state"),
            F.first("assignment_strategy", ignorenulls=True).alias("assignment_strategy"),
        )
    )


def _described_states(spark: SparkSession, config: Config, days: list[dt.date]) -> DataFrame:
    """group_states without the group lists' rows (`kafka-groups.sh --list`, `--list
    --type`): a list names a group, no capture of its membership, and may be taken at
    the instant of a `--state` capture. A list row is the only one with neither a
    coordinator nor a member count (a `--state` row has its coordinator, a jsonl
    snapshot its member count)."""
    states = _table(spark, config, "group_states", days)
    listed = F.col("coordinator_id").isNull() & F.col("member_count").isNull()
    return states.where(~listed)


def log_rows(spark: SparkSession, config: Config, run_date: dt.date, keys: DataFrame) -> DataFrame:
    """The coordinator log lines of the replayed days that name a replayed group, in
    the capture rows' frame (`_kind` "log", logged_at as captured_at)."""
    warehouse = Warehouse(spark, config.warehouse)
    columns = ["event", "generation", "member_id", "reason", "line"]
    if not warehouse.exists("coordinator_events"):
        return spark.createDataFrame(
            [],
            "cluster string, group_id string, captured_at timestamp, _kind string, "
            "event string, generation int, member_id string, reason string, line string",
        )
    groups = keys.select("cluster", "group_id").distinct()
    return (
        _table(spark, config, "coordinator_events", _replayed_days(run_date))
        .where(F.col("group_id").isNotNull())
        .join(groups, ["cluster", "group_id"], how="left_semi")
        .select(
            "cluster",
            "group_id",
            F.col("logged_at").alias("captured_at"),
            F.lit(LOG).alias("_kind"),
            *columns,
        )
    )


def lag_rows(spark: SparkSession, config: Config, run_date: dt.date, keys: DataFrame) -> DataFrame:
    """Per-partition lags and log-end offsets of the replayed groups from each one's
    first replayed capture on: the lags weigh each member's share of the lag, the log
    ends give each partition's produce rate between two captures (what a rebalance's
    pause delays). Cut by group, not by capture: the join shuffles the offsets once, by
    group, as the cogroup needs them; the replay keeps the rows of its captures
    (replay/group.py)."""
    days = _replayed_days(run_date)
    offsets = _table(spark, config, "offsets", days).select(
        *KEY, "topic", "partition", "lag", "log_end_offset"
    )
    since = keys.groupBy("cluster", "group_id").agg(F.min("captured_at").alias("_since"))
    return (
        offsets.join(since, on=["cluster", "group_id"], how="inner")
        .where(F.col("captured_at") >= F.col("_since"))
        .drop("_since")
    )


def topic_history(
    spark: SparkSession, config: Config, run_date: dt.date
) -> dict[str, TopicHistory]:
    """topic_metadata's partition counts."""
    return topic_metadata(spark, config, run_date)[0]


def topic_metadata(
    spark: SparkSession, config: Config, run_date: dt.date
) -> tuple[dict[str, TopicHistory], dict[str, dict[str, str]]]:
    """Partition counts per topics capture, per cluster, shipped to every replay task:
    only what the replayed captures look up; and each cluster's topic ids by name from
    the same captures (the latest one's where a topic was recreated). A capture takes
    the counts of the latest topics capture at or before it (replay/group.py), so a
    cluster needs the topics captures of the replayed days and the latest one at or
    before its first replayed capture. That one is usually of the replayed days too;
    otherwise earlier dates are read, newest first and more at a time, until each
    cluster that needs one has it."""
    warehouse = Warehouse(spark, config.warehouse)
    if not warehouse.exists("topic_partitions"):
        return {}, {}
    days = _replayed_days(run_date)
    first = first_captures(spark, config, days)
    if not first:
        return {}, {}
    topics = warehouse.read("topic_partitions", where={"capture_date": days})
    history, ids = _topic_counts(topics.where(F.col("cluster").isin(sorted(first))))
    need = {
        cluster: at
        for cluster, at in first.items()
        if not any(t <= at for t in history.get(cluster, {}))
    }
    earlier = latest_topics_before(warehouse, sorted(need), days[0]) if need else {}
    if earlier:
        dates = sorted({day for _, day in earlier.values()})
        wanted = reduce(
            operator.or_,
            [
                (F.col("cluster") == cluster) & (F.col("captured_at") == at)
                for cluster, (at, _) in earlier.items()
            ],
        )
        older = warehouse.read("topic_partitions", where={"capture_date": dates}).where(wanted)
        older_counts, older_ids = _topic_counts(older)
        for cluster, by_time in older_counts.items():
            history.setdefault(cluster, {}).update(by_time)
        for cluster, by_name in older_ids.items():  # the replayed days' ids are newer
            ids[cluster] = {**by_name, **ids.get(cluster, {})}
    counts = {cluster: sorted(by_time.items()) for cluster, by_time in history.items()}
    return counts, ids


def first_captures(
    spark: SparkSession, config: Config, days: list[dt.date]
) -> dict[str, dt.datetime]:
    """Each cluster's earliest members or state capture of `days` (a group list is
    neither): the replayed captures are some of these (capture_keys), so none of a
    cluster's is earlier."""
    captures = (
        _members(spark, config, days)
        .select("cluster", "captured_at")
        .unionByName(_described_states(spark, config, days).select("cluster", "captured_at"))
        .where(F.col("cluster").isNotNull() & F.col("captured_at").isNotNull())
    )
    rows = captures.groupBy("cluster").agg(F.min("captured_at").alias("first")).collect()
    return {r["cluster"]: r["first"] for r in rows}


def latest_topics_before(
    warehouse: Warehouse, clusters: list[str], day: dt.date
) -> dict[str, tuple[dt.datetime, dt.date]]:
    """Each cluster's latest topics capture dated before `day` (its time and date), for
    those that have one: earlier dates (from the table's log) are read newest first,
    one, then two, four... at a time, three columns of the clusters still missing,
    until none is."""
    dates = [
        d
        for d in warehouse.partition_values("topic_partitions", "capture_date")
        if d is not None and d < day.isoformat()
    ]
    found: dict[str, tuple[dt.datetime, dt.date]] = {}
    missing, batch = set(clusters), 1
    while missing and dates:
        dates, chunk = dates[:-batch], dates[-batch:]
        rows = (
            warehouse.read("topic_partitions", where={"capture_date": chunk})
            .where(F.col("cluster").isin(sorted(missing)))
            .groupBy("cluster")
            .agg(F.max(F.struct("captured_at", "capture_date")).alias("latest"))
            .collect()
        )
        found |= {r["cluster"]: tuple(r["latest"]) for r in rows}
        missing -= set(found)
        batch *= 2
    return found


def _topic_counts(
    topics: DataFrame,
) -> tuple[dict[str, dict[dt.datetime, dict[str, int]]], dict[str, dict[str, str]]]:
    """Partition counts per cluster, topics capture and topic; topic ids per cluster
    and topic, the latest capture's."""
    counts = (
        topics.groupBy("cluster", "captured_at", "topic")
        .agg(
            (F.max("partition") + 1).alias("count"),
            F.max("topic_id").alias("topic_id"),  # one per topic in a capture
        )
        .collect()
    )
    history: dict[str, dict[dt.datetime, dict[str, int]]] = {}
    ids: dict[str, dict[str, str]] = {}
    for row in sorted(counts, key=lambda r: r["captured_at"] or dt.datetime.min):
        cluster, topic = row["cluster"], row["topic"]
        history.setdefault(cluster, {}).setdefault(row["captured_at"], {})[topic] = row["count"]
        if row["topic_id"] is not None:
            ids.setdefault(cluster, {})[topic] = row["topic_id"]
    return history, ids


def _table(spark: SparkSession, config: Config, name: str, days: list[dt.date]) -> DataFrame:
    """`name`'s rows of `days` (its date partitions): a replay reads its two days only."""
    return Warehouse(spark, config.warehouse).read(
        name, where={bronze.partition_column(name): days}
    )
