"""Metrics: bronze + silver -> the gold tables for one date (DESIGN.md "Gold")."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

from fleet_rebalance.config import Config
from fleet_rebalance.metrics import consumer_status as status
from fleet_rebalance.metrics import lag_distribution as lags
from fleet_rebalance.metrics.attention import Limits as AttentionLimits
from fleet_rebalance.metrics.changes import Limits
from fleet_rebalance.metrics.flapping import partition_flapping
from fleet_rebalance.metrics.group_health import group_health
from fleet_rebalance.metrics.protocols import group_context
from fleet_rebalance.metrics.rebalance_causes import rebalance_causes, rebalances
from fleet_rebalance.metrics.recommendations import (
    declared_strategies,
    final_changes,
    recommendations,
    stuck_partitions,
)
from fleet_rebalance.metrics.rollups import skew, stickiness
from fleet_rebalance.metrics.samples import offset_samples
from fleet_rebalance.metrics.static_membership import static_membership
from fleet_rebalance.metrics.timeline import rebalance_timeline
from fleet_rebalance.pipeline import gold
from fleet_rebalance.storage.warehouse import Warehouse

log = logging.getLogger("fleet_rebalance.metrics")


def offset_history(spark: SparkSession, config: Config, run_date: dt.date) -> DataFrame:
    """The run date's and the previous date's offsets samples: what every lag metric reads."""
    days = [run_date - dt.timedelta(days=1), run_date]
    return offset_samples(
        Warehouse(spark, config.warehouse).read("offsets", where={"capture_date": days})
    )


def _reader(spark: SparkSession, config: Config) -> Callable[..., DataFrame]:
    """table(name, partition column, *days): only the partitions of `days` are read, so
    a night's work is its dates'."""
    warehouse = Warehouse(spark, config.warehouse)

    def table(name: str, column: str, *days: dt.date) -> DataFrame:
        return warehouse.read(name, where={column: list(days)})

    return table


def gold_frames(
    spark: SparkSession, config: Config, run_date: dt.date, samples: DataFrame
) -> dict[str, DataFrame]:
    """Every gold table of run_date as a DataFrame in its documented schema (lazy);
    `samples` is offset_history's (two tables read it)."""

    table = _reader(spark, config)
    yesterday = run_date - dt.timedelta(days=1)
    replayed = table("replay_metrics", "event_date", run_date)
    sticky, skewed = stickiness(replayed), skew(replayed)
    events = table("coordinator_events", "log_date", yesterday, run_date)
    m = config.metrics
    replayed_events = table("rebalance_events", "event_date", run_date)
    frames = {
        "stickiness": sticky,
        "skew": skewed,
        "lag_distribution": lag_distribution(samples, run_date),
        "consumer_status": consumer_status(
            samples, run_date, m.burrow_intervals, m.burrow_allowed_lag
        ),
        "partition_flapping": partition_flapping(
            table("assignment_replay", "event_date", run_date),
            replayed_events,
        ),
        "rebalance_timeline": rebalance_timeline(events, run_date, m.offsets_topic_partitions),
        "rebalance_causes": rebalance_causes(replayed_events),
    }
    return {
        name: frames[name].select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])
        for name, schema in gold.TABLES.items()
        if name not in gold.DERIVED
    }


def recommendations_frame(spark: SparkSession, config: Config, run_date: dt.date) -> DataFrame:
    """recommendations of run_date: DESIGN.md's assignor, protocol and static-membership
    rule over the written stickiness and skew, then each group's final change
    (metrics/changes.py) with the written consumer_status's stuck partitions."""
    table = _reader(spark, config)
    m = config.metrics
    yesterday = run_date - dt.timedelta(days=1)
    replayed = table("replay_metrics", "event_date", run_date)
    states = table("group_states", "capture_date", run_date)
    declared = declared_strategies(states)
    logs = table("coordinator_events", "log_date", yesterday, run_date)
    moved = rebalances(table("rebalance_events", "event_date", run_date))
    chosen = recommendations(
        table("stickiness", "date", run_date),
        table("skew", "date", run_date),
        declared,
        group_context(states, table("members", "capture_date", run_date), logs),
        static_what_if=static_membership(moved, replayed, declared),
        static_session_timeout_s=m.static_session_timeout_s,
    )
    stuck = stuck_partitions(table("consumer_status", "date", run_date))
    limits = Limits(
        m.change_min_rebalances_saved,
        m.change_min_seconds_saved,
        m.change_min_paused_partitions_saved,
        m.change_min_skew_gain,
        m.migration_gain_factor,
        m.crash_loop_restarts,
    )
    return final_changes(chosen, moved, replayed, stuck, limits, gold.TABLES["recommendations"])


def health_frame(spark: SparkSession, config: Config, run_date: dt.date) -> DataFrame:
    """group_health of run_date from the date's gold tables as written."""
    warehouse = Warehouse(spark, config.warehouse)
    tables = {
        name: warehouse.read(name, where={"date": [run_date]})
        for name in gold.TABLES
        if name != "group_health"
    }
    m = config.metrics
    limits = AttentionLimits(m.attention_rebalances, m.attention_lag_skew, m.attention_min_lag)
    return group_health(tables, limits, gold.TABLES["group_health"])


def lag_distribution(samples: DataFrame, run_date: dt.date) -> DataFrame:
    """lag_distribution of run_date, one Arrow call per cluster and topic: `samples` are
    offset_history's, both days (yesterday's log ends are time-lag points too)."""

    def per_topic(table: pa.Table, schema: pa.Schema) -> pa.Table:
        return pa.Table.from_pylist(lags.topic_lag_distribution(table, run_date), schema)

    columns = lags.INPUT_COLUMNS
    return _per_key(samples, ["cluster", "topic"], columns, "lag_distribution", per_topic)


def consumer_status(
    samples: DataFrame, run_date: dt.date, intervals: int, allowed_lag: int = 0
) -> DataFrame:
    """consumer_status of run_date, one Arrow call per group (its status spans its
    partitions): `samples` are offset_history's, both days (yesterday's captures fill
    the day's first windows)."""

    def per_group(table: pa.Table, schema: pa.Schema) -> pa.Table:
        columns = status.group_consumer_status(table, run_date, intervals, allowed_lag)
        return pa.Table.from_pydict(columns, schema) if columns else schema.empty_table()

    columns = status.INPUT_COLUMNS
    return _per_key(samples, ["cluster", "group_id"], columns, "consumer_status", per_group)


def _per_key(
    samples: DataFrame,
    keys: list[str],
    columns: list[str],
    name: str,
    compute: Callable[[pa.Table, pa.Schema], pa.Table],
) -> DataFrame:
    """Gold table `name` from compute(rows of one key, the table's Arrow schema)."""
    schema = gold.TABLES[name]
    arrow_schema = to_arrow_schema(schema)
    return (
        samples.select(*columns)
        .groupBy(*keys)
        .applyInArrow(lambda table: compute(table, arrow_schema), schema)
    )


def run(spark: SparkSession, config: Config, run_date: dt.date | None) -> dict[str, int]:
    if run_date is None:
        raise ValueError("metrics runs one date at a time: pass --date")
    counts: dict[str, int] = {}
    # Not cached: the two tables that read the samples each scan the offsets' Parquet
    # again, which costs less than writing ~40M rows (a 20k-group day) to a disk cache
    # and reading them back (5k groups: 94.6 s against 106.6 s for the whole step).
    samples = offset_history(spark, config, run_date)
    warehouse = Warehouse(spark, config.warehouse)
    frames = gold_frames(spark, config, run_date, samples)
    for name in gold.TABLES:
        started = time.monotonic()
        frame = frames[name] if name in frames else DERIVED[name](spark, config, run_date)
        counts[name] = _write(frame, warehouse, name, run_date)
        log.info(
            "%s: %d rows for %s in %.1fs",
            name,
            counts[name],
            run_date,
            time.monotonic() - started,
        )
    return counts


DERIVED: dict[str, Callable[[SparkSession, Config, dt.date], DataFrame]] = {
    "recommendations": recommendations_frame,
    "group_health": health_frame,
}


def _write(frame: DataFrame, warehouse: Warehouse, name: str, run_date: dt.date) -> int:
    frame = frame.persist()
    try:
        rows = frame.count()
        warehouse.replace_date(frame, name, "date", run_date, rows)
    finally:
        frame.unpersist()
    return rows
