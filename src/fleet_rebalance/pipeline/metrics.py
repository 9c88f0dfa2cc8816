"""Metrics: bronze + silver -> the gold tables for one date (DESIGN.md "Gold")."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyspark.sql.functions as F
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from fleet_rebalance.arrow_values import python_rows
from fleet_rebalance.config import Config
from fleet_rebalance.metrics import consumer_status as status
from fleet_rebalance.metrics import lag_distribution as lags
from fleet_rebalance.metrics import ownership_rules, share_groups
from fleet_rebalance.metrics.attention import Limits as AttentionLimits
from fleet_rebalance.metrics.changes import Limits
from fleet_rebalance.metrics.convergence_frame import convergence_frame
from fleet_rebalance.metrics.cross_zone import cross_zone_traffic
from fleet_rebalance.metrics.flapping import partition_flapping
from fleet_rebalance.metrics.group_health import group_health, largest_lag
from fleet_rebalance.metrics.migration_plan import migration_plan
from fleet_rebalance.metrics.offset_samples import offset_samples
from fleet_rebalance.metrics.protocols import group_context
from fleet_rebalance.metrics.rebalance_causes import rebalance_causes, rebalances
from fleet_rebalance.metrics.recommendations import (
    cross_zone_facts,
    declared_strategies,
    final_changes,
    recommendations,
    stuck_partitions,
)
from fleet_rebalance.metrics.rollups import skew, stickiness
from fleet_rebalance.metrics.static_what_if import static_what_if
from fleet_rebalance.metrics.streams_tasks import task_movements
from fleet_rebalance.metrics.timeline import rebalance_timeline
from fleet_rebalance.pipeline import gold, tagged
from fleet_rebalance.storage.warehouse import Reads, Warehouse
from fleet_rebalance.vocabulary import GroupType

log = logging.getLogger("fleet_rebalance.metrics")


def offset_history(spark: SparkSession, config: Config, run_date: dt.date) -> DataFrame:
    """The run date's and the previous date's offsets samples: what every lag metric reads."""
    days = [run_date - dt.timedelta(days=1), run_date]
    return offset_samples(
        Warehouse(spark, config.warehouse).read("offsets", where={"capture_date": days})
    )


def gold_frames(
    table: Reads,
    config: Config,
    run_date: dt.date,
    samples: DataFrame,
    per_topic: DataFrame | None = None,
    context: DataFrame | None = None,
) -> dict[str, DataFrame]:
    """Every gold table of run_date as a DataFrame in its documented schema (lazy);
    `samples` is offset_history's (per_topic_frame's and ownership_audit's input),
    `per_topic` per_topic_frame's of them and `context` context_frame's (computed here
    when not given)."""

    m = config.metrics
    if per_topic is None:
        per_topic = per_topic_frame(samples, run_date, m.burrow_intervals, m.burrow_allowed_lag)
    if context is None:
        context = context_frame(table, run_date)
    yesterday = run_date - dt.timedelta(days=1)
    replayed = table("replay_metrics", "event_date", run_date)
    sticky, skewed = stickiness(replayed), skew(replayed)
    events = table("coordinator_events", "log_date", yesterday, run_date)
    replayed_events = table("rebalance_events", "event_date", run_date)
    frames = {
        "stickiness": sticky,
        "skew": skewed,
        "lag_distribution": _per_topic_table(per_topic, "lag_distribution"),
        "log_end_quarantine": _per_topic_table(per_topic, "log_end_quarantine"),
        "ownership_audit": ownership_audit(
            share_groups.without_share_groups(
                table("members", "capture_date", run_date),
                table("group_states", "capture_date", run_date),
            ),
            table("group_states", "capture_date", run_date),
            samples,
            run_date,
        ),
        "consumer_status": _consumer_status(per_topic),
        "partition_flapping": partition_flapping(
            table("assignment_replay", "event_date", run_date),
            replayed_events,
        ),
        "rebalance_timeline": rebalance_timeline(events, run_date, m.offsets_topic_partitions),
        "rebalance_causes": rebalance_causes(replayed_events),
        "cross_zone_traffic": cross_zone_traffic(
            samples,
            table("members", "capture_date", run_date),
            table("group_states", "capture_date", run_date),
            table("topic_partitions", "capture_date", run_date),
            table("partition_sizes", "capture_date", run_date),
            table("brokers", "capture_date", run_date),
            context,
            config.zones,
            run_date,
            gold.TABLES["cross_zone_traffic"],
        ),
        "task_movements": task_movements(
            table("members", "capture_date", yesterday, run_date),
            run_date,
            gold.TABLES["task_movements"],
        ),
    }
    return {
        name: frames[name].select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])
        for name, schema in gold.TABLES.items()
        if name not in gold.DERIVED
    }


def recommendations_frame(
    table: Reads, config: Config, run_date: dt.date, context: DataFrame
) -> DataFrame:
    """recommendations of run_date: DESIGN.md's assignor, protocol and static-membership
    rule over the written stickiness and skew, then each group's final change
    (metrics/changes.py) with the written consumer_status's stuck partitions,
    lag_distribution's largest lag (the attention floor's) and cross_zone_traffic's
    rack-aware savings. `context`: context_frame's."""
    m = config.metrics
    replayed = table("replay_metrics", "event_date", run_date)
    states = table("group_states", "capture_date", run_date)
    declared = declared_strategies(states)
    moved = rebalances(table("rebalance_events", "event_date", run_date))
    sticky, skewed = table("stickiness", "date", run_date), table("skew", "date", run_date)
    chosen = recommendations(
        sticky,
        skewed,
        declared,
        context,
        static_what_if=static_what_if(moved, replayed, declared),
        static_session_timeout_s=m.static_session_timeout_s,
    ).localCheckpoint(eager=True)  # final_changes reads it twice; one row per group
    stuck = stuck_partitions(table("consumer_status", "date", run_date))
    lags = (
        table("lag_distribution", "date", run_date)
        .groupBy("cluster", "group_id", "date")
        .agg(largest_lag().alias("max_lag"))
    )
    groups = context.join(lags, ["cluster", "group_id", "date"], how="left")
    cross_zone = cross_zone_facts(table("cross_zone_traffic", "date", run_date), sticky, skewed)
    return final_changes(
        chosen,
        moved,
        replayed,
        stuck,
        groups,
        Limits.of(m),
        gold.TABLES["recommendations"],
        cross_zone,
    )


def health_frame(table: Reads, config: Config, run_date: dt.date, context: DataFrame) -> DataFrame:
    """group_health of run_date from the date's gold tables as written, and the KIP-848
    convergence of its captures and logs. `context`: context_frame's."""
    names = list(gold.TABLES)
    tables = {name: table(name, "date", run_date) for name in names[: names.index("group_health")]}
    m = config.metrics
    tables["convergence"] = convergence_frame(
        table("members", "capture_date", run_date),
        table("coordinator_events", "log_date", run_date),  # it keys bumps by their log date
        m.reconcile_stuck_s,
    )
    # A group with no recommendation (share and streams groups are not replayed) still
    # has the protocol its captures name.
    tables["protocols"] = context.select("cluster", "group_id", "date", "protocol")
    return group_health(tables, AttentionLimits.of(m), gold.TABLES["group_health"])


def migration_plan_frame(
    table: Reads, config: Config, run_date: dt.date, context: DataFrame
) -> DataFrame:
    """protocol_migration_plan of run_date from the written group_health, stickiness and
    skew, and the date's captures and coordinator logs. `context`: context_frame's."""
    states = table("group_states", "capture_date", run_date)
    members = table("members", "capture_date", run_date)
    return migration_plan(
        table("group_health", "date", run_date),
        table("stickiness", "date", run_date),
        table("skew", "date", run_date),
        states,
        members,
        context,
        gold.TABLES["protocol_migration_plan"],
    )


def context_frame(table: Reads, run_date: dt.date) -> DataFrame:
    """protocols.group_context of run_date (each group's protocol, its cluster's brokers):
    recommendations, group_health and protocol_migration_plan all read it."""
    yesterday = run_date - dt.timedelta(days=1)
    return group_context(
        table("group_states", "capture_date", run_date),
        table("members", "capture_date", run_date),
        table("coordinator_events", "log_date", yesterday, run_date),
    )


# Gold tables of one Arrow call per cluster and topic: the first two need the topic's
# log-end refusals, which the time lag decides anyway; consumer_status rates each
# partition's windows, which needs no other topic: one shuffle of the offsets samples
# serves all three (it is most of their cost).
PER_TOPIC = ("lag_distribution", "log_end_quarantine", "consumer_status")


def _per_topic_schema() -> StructType:
    """Every column of the PER_TOPIC tables once (they agree on the shared ones), and the tag."""
    fields: dict[str, StructField] = {}
    for name in PER_TOPIC:
        for field in gold.TABLES[name].fields:
            fields.setdefault(field.name, field)
    return StructType([*fields.values(), StructField(tagged.TABLE, StringType())])


def per_topic_frame(
    samples: DataFrame, run_date: dt.date, intervals: int | None = None, allowed_lag: int = 0
) -> DataFrame:
    """The PER_TOPIC tables' rows of run_date, each tagged with its table, one Arrow call
    per cluster and topic: `samples` are offset_history's, both days (yesterday's log
    ends are time-lag points, its captures fill the day's first status windows).
    consumer_status's rows (Burrow's window of `intervals` captures and its allowed lag)
    only with `intervals`, their group columns over the topic only (_consumer_status)."""
    status_schema = to_arrow_schema(gold.TABLES["consumer_status"])

    def per_topic(table: pa.Table, schema: pa.Schema) -> pa.Table:
        tables = lags.topic_tables(table, run_date)  # the two tables of rows
        rows = [{**row, tagged.TABLE: name} for name, found in tables.items() for row in found]
        parts = [pa.Table.from_pylist(rows, schema)]
        if intervals is not None:
            for columns in status.topic_consumer_status(table, run_date, intervals, allowed_lag):
                rated = pa.Table.from_pydict(columns, status_schema)
                parts.append(_tagged(rated, schema, "consumer_status"))
        return pa.concat_tables(parts)

    columns = list(dict.fromkeys([*lags.INPUT_COLUMNS, *status.INPUT_COLUMNS]))
    return _per_key(samples, ["cluster", "topic"], columns, _per_topic_schema(), per_topic)


def _tagged(table: pa.Table, schema: pa.Schema, name: str) -> pa.Table:
    """`table`'s rows in `schema` (the other tables' columns null), tagged `name`."""
    n = table.num_rows
    columns = [
        pa.array([name] * n, f.type)
        if f.name == tagged.TABLE
        else table[f.name]
        if f.name in table.column_names
        else pa.nulls(n, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _per_topic_table(per_topic: DataFrame, name: str) -> DataFrame:
    return per_topic.where(F.col(tagged.TABLE) == name).select(*gold.TABLES[name].fieldNames())


def lag_distribution(samples: DataFrame, run_date: dt.date) -> DataFrame:
    """lag_distribution of run_date (per_topic_frame)."""
    return _per_topic_table(per_topic_frame(samples, run_date), "lag_distribution")


def log_end_quarantine(samples: DataFrame, run_date: dt.date) -> DataFrame:
    """log_end_quarantine of run_date: the offsets rows whose log end is kept out of the
    shared time-lag points, with the reason (metrics/log_end_checks.py)."""
    return _per_topic_table(per_topic_frame(samples, run_date), "log_end_quarantine")


def consumer_status(
    samples: DataFrame, run_date: dt.date, intervals: int, allowed_lag: int = 0
) -> DataFrame:
    """consumer_status of run_date (per_topic_frame): `samples` are offset_history's,
    both days (yesterday's captures fill the day's first windows)."""
    return _consumer_status(per_topic_frame(samples, run_date, intervals, allowed_lag))


def _consumer_status(per_topic: DataFrame) -> DataFrame:
    """per_topic_frame's consumer_status rows with each group's status over all its
    topics: the worst of its topics' (each already capped at ERR, so is their worst)."""
    rank = F.create_map(*[F.lit(x) for pair in status.RANKS.items() for x in pair])
    names = F.array(*[F.lit(name) for name in status.RANKS])
    group = Window.partitionBy("cluster", "group_id")

    def worst(column: str) -> Column:
        return F.element_at(names, F.max(rank[F.col(column)]).over(group)).alias(column)

    rows = _per_topic_table(per_topic, "consumer_status")
    grouped = ("group_status", "group_worst_status")
    return rows.select(*[worst(c) if c in grouped else F.col(c) for c in rows.columns])


GROUP_CAPTURE = ["cluster", "group_id", "captured_at"]


def ownership_audit(
    members: DataFrame, states: DataFrame, samples: DataFrame, run_date: dt.date
) -> DataFrame:
    """ownership_audit of run_date from the date's members and group_states and the
    offsets samples (offset_history's): each group capture that could show a finding,
    with what the capture says of the group, then metrics/ownership_rules.py's rules per
    group. Could show one: its members' assignments hold a partition twice, or an
    offsets row with a committed offset, a lag and no CONSUMER-ID. Share groups have
    neither (metrics/share_groups.py); a streams member's tasks are no partitions (its
    assignment is not captured). The members' aggregate is read once: the captures,
    their states and their unowned rows are joined per capture, and the partitions are
    found in Python (ownership_rules.partition_captures)."""
    if "group_type" in members.columns:
        # A share group's members all fetch from the partitions they are assigned
        # (KIP-932): holding one together is its design, not double ownership.
        members = members.where(~F.col("group_type").eqNullSafe(GroupType.SHARE))
    # max, not first: two state files of one capture (a text view and a jsonl export)
    # give one answer whatever the order they are read in.
    stated = states.groupBy(*GROUP_CAPTURE).agg(
        F.max("state").alias("state"), F.max("member_count").alias("state_members")
    )
    unowned = (
        samples.where(
            (F.col("capture_date") == F.lit(run_date))
            & F.col("consumer_id").isNull()
            & F.col("current_offset").isNotNull()
            & F.col("lag").isNotNull()
        )
        .groupBy(*GROUP_CAPTURE)
        .agg(
            F.collect_list(F.struct("topic", "partition", "current_offset", "lag")).alias("unowned")
        )
    )
    captures = (
        _capture_members(members)
        .join(unowned, GROUP_CAPTURE, how="full")
        .where(F.coalesce("_held_twice", F.lit(False)) | F.col("unowned").isNotNull())
        .join(stated, GROUP_CAPTURE, how="left")
        .select(
            *GROUP_CAPTURE,
            F.col("_holdings").alias("holdings"),
            "unowned",
            "state",
            "state_members",
            "warned",
            "listed_members",
            "assigning_members",
            "unknown_assignments",
        )
    )

    def per_group(table: pa.Table, schema: pa.Schema) -> pa.Table:
        rows: list[Any] = python_rows(table)  # GroupCapture rows, and their key
        key = {"cluster": rows[0]["cluster"], "group_id": rows[0]["group_id"], "date": run_date}
        partitions = [p for row in rows for p in ownership_rules.partition_captures(row)]
        return pa.Table.from_pylist([key | r for r in ownership_rules.audit(partitions)], schema)

    schema = gold.TABLES["ownership_audit"]
    return _per_key(captures, ["cluster", "group_id"], captures.columns, schema, per_group)


def _capture_members(members: DataFrame) -> DataFrame:
    """Per group capture, what its members rows say, from one file: two files of one
    capture (a text view and a jsonl export, or `--members` with and without
    `--verbose`) list the same members, and a member counted twice would own its
    partitions twice. The file whose path sorts last among those with assignments wins
    (offset_samples' rule). One aggregation per file, then the winner's row per capture:
    the members rows are shuffled once and never joined back."""
    member = F.col("consumer_id")
    listed = member.isNotNull()
    warned = members["rebalancing"] if "rebalancing" in members.columns else F.lit(None)

    def distinct(condition: Column) -> Column:
        return F.size(F.collect_set(F.when(condition, member)))

    per_file = (
        members.repartition(*GROUP_CAPTURE)
        .groupBy(*GROUP_CAPTURE, "source_file")
        .agg(
            F.max(F.col("assignment").isNotNull()).alias("_assigns"),
            distinct(listed).cast("int").alias("listed_members"),
            distinct(F.size("assignment") > 0).cast("int").alias("assigning_members"),
            distinct(F.col("assignment").isNull()).cast("int").alias("unknown_assignments"),
            F.max(F.when(listed, warned.cast("boolean"))).alias("warned"),
            F.collect_list(
                F.when(listed & F.col("assignment").isNotNull(), F.struct(member, "assignment"))
            ).alias("_holdings"),
        )
    )
    facts = ["listed_members", "assigning_members", "unknown_assignments", "warned", "_holdings"]
    chosen = per_file.groupBy(*GROUP_CAPTURE).agg(
        F.max_by(F.struct(*facts), F.struct("_assigns", "source_file")).alias("_chosen")
    )
    # A partition held twice shows as a repeated hash of it. array_distinct over the
    # structs themselves compares each with all before it (quadratic: a member holding
    # 200,000 partitions took minutes); over longs it hashes. A collision can only add a
    # capture to look at: ownership_rules.partition_captures decides on the partitions.
    held = F.transform(
        F.flatten(F.transform("_chosen._holdings", lambda m: m["assignment"])),
        lambda tp: F.xxhash64(tp["topic"], tp["partition"]),
    )
    return chosen.select(
        *GROUP_CAPTURE,
        *[F.col(f"_chosen.{name}").alias(name) for name in facts],
        (F.size(held) > F.size(F.array_distinct(held))).alias("_held_twice"),
    ).where(F.col("listed_members") > 0)


def _per_key(
    samples: DataFrame,
    keys: list[str],
    columns: list[str],
    schema: StructType,
    compute: Callable[[pa.Table, pa.Schema], pa.Table],
) -> DataFrame:
    """Rows in `schema` from compute(rows of one key, the schema as Arrow)."""
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
    # Not cached: the two passes that read the samples (per topic, ownership_audit's
    # unowned rows) each scan the offsets' Parquet again, which costs less than writing
    # ~40M rows (a 20k-group day) to a disk cache and reading them back.
    samples = offset_history(spark, config, run_date)
    table = Reads(Warehouse(spark, config.warehouse))
    # Cached: small (one row per group and topic, one per partition rated, and the
    # refused log ends), and three tables read it, which would otherwise each shuffle
    # the offsets by topic.
    m = config.metrics
    per_topic = per_topic_frame(
        samples, run_date, m.burrow_intervals, m.burrow_allowed_lag
    ).persist()
    # One row per group, read by all three DERIVED tables: each would otherwise scan
    # the day's members and two days' coordinator logs again to find the same answer.
    context = context_frame(table, run_date).persist()
    try:
        frames = gold_frames(table, config, run_date, samples, per_topic, context)
        share_groups.report_unrated(table("group_states", "capture_date", run_date), run_date)
        for name in gold.TABLES:
            started = time.monotonic()
            frame = (
                frames[name] if name in frames else DERIVED[name](table, config, run_date, context)
            )
            written, counts[name] = _write(frame, table.warehouse, name, run_date)
            table.wrote(name, "date", run_date, written)
            log.info(
                "%s: %d rows for %s in %.1fs",
                name,
                counts[name],
                run_date,
                time.monotonic() - started,
            )
    finally:
        per_topic.unpersist()
        context.unpersist()
        table.release()
    return counts


DERIVED: dict[str, Callable[[Reads, Config, dt.date, DataFrame], DataFrame]] = {
    "recommendations": recommendations_frame,
    "group_health": health_frame,
    "protocol_migration_plan": migration_plan_frame,
}


def _write(
    frame: DataFrame, warehouse: Warehouse, name: str, run_date: dt.date
) -> tuple[DataFrame, int]:
    """The table's rows of run_date written, and the cached frame that holds them."""
    frame = frame.persist()
    try:
        rows = frame.count()
        warehouse.replace_dates(frame, name, "date", [run_date], rows)
    except BaseException:
        frame.unpersist()
        raise
    return frame, rows
