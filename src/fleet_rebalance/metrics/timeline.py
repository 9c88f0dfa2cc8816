"""`rebalance_timeline`: one row per generation a coordinator log shows a group reach.

The rows are replay/generations.py's Generation objects, the ones the replay prices and
names causes for (so rebalance_causes' generation and duration_ms are a timeline row's):
group_generations runs once per (cluster, group_id) over the group's coordinator_events
of the run date and the day before, in one grouped Arrow call, and each generation that
began (else ended) on the run date is a row. A generation ends with its `Stabilized`
line, or its `is now empty` one (Kafka's onCompleteJoin logs that one instead when no
member rejoined): members_after 0. members_before is the member count of generation
g - 1's end line when the log has it; `cause` is the start line's reason, else (KIP-848
epochs) the member lines the generation holds counted by event; the coordinator broker
is the start line's, else the end line's; `follow_up` is Generation.follow_up.

The coordinator partition is Kafka's `Utils.abs(groupId.hashCode()) %
offsets.topic.num.partitions`, with Java's String.hashCode over UTF-16 code units.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyspark.sql.functions as F
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from fleet_rebalance.arrow_values import python_rows
from fleet_rebalance.assignors.java import java_abs, string_hash
from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.replay.generations import Generation, group_generations

LOG_COLUMNS = ("logged_at", "event", "generation", "member_id", "reason", "line", "broker")
# What the per-group call returns: the table's columns.
ROW_SCHEMA = StructType(
    [
        StructField("cluster", StringType()),
        StructField("group_id", StringType()),
        StructField("date", DateType()),
        StructField("generation", IntegerType()),
        StructField("protocol", StringType()),
        StructField("started_at", TimestampType()),
        StructField("stabilized_at", TimestampType()),
        StructField("duration_ms", LongType()),
        StructField("cause", StringType()),
        StructField("members_before", IntegerType()),
        StructField("members_after", IntegerType()),
        StructField("coordinator_broker", IntegerType()),
        StructField("coordinator_partition", IntegerType()),
        StructField("follow_up", BooleanType()),
    ]
)


def coordinator_partition(group_id: str, partitions: int) -> int:
    """The __consumer_offsets partition of a group's coordinator: Kafka's
    `Utils.abs(groupId.hashCode()) % partitions` (Integer.MIN_VALUE maps to 0)."""
    return java_abs(string_hash(group_id)) % partitions


def rebalance_timeline(
    events: DataFrame, run_date: dt.date, offsets_partitions: int = 50
) -> DataFrame:
    """The table's rows of run_date from coordinator_events of run_date and the day
    before (a generation started before midnight ends on the run date)."""
    rows = events.where(F.col("group_id").isNotNull()).select("cluster", "group_id", *LOG_COLUMNS)
    function = partial(
        _group_table,
        run_date=run_date,
        offsets_partitions=offsets_partitions,
        schema=to_arrow_schema(ROW_SCHEMA),
    )
    # A lambda: pyspark reads a partial's type hints, and fails.
    return rows.groupBy("cluster", "group_id").applyInArrow(
        lambda key, table: function(key, table), ROW_SCHEMA
    )


def timeline_rows(
    key: tuple[str, str],
    generations: Iterable[Generation],
    run_date: dt.date,
    offsets_partitions: int = MetricsConfig().offsets_topic_partitions,
) -> list[dict[str, Any]]:
    """The rows (ROW_SCHEMA) of one group's generations that happened on run_date;
    `offsets_partitions`: the cluster's offsets.topic.num.partitions."""
    cluster, group_id = key
    partition = coordinator_partition(group_id, offsets_partitions)
    return [
        {
            "cluster": cluster,
            "group_id": group_id,
            "date": run_date,
            "generation": gen.generation,
            "protocol": gen.protocol,
            "started_at": gen.started_at,
            "stabilized_at": gen.stabilized_at,
            "duration_ms": gen.duration_ms,
            "cause": gen.start_reason or (gen.member_summary() if gen.started_at else None),
            "members_before": gen.previous_count,
            "members_after": gen.member_count,
            "coordinator_broker": gen.broker,
            "coordinator_partition": partition,
            "follow_up": gen.follow_up,
        }
        for gen in generations
        if gen.at.date() == run_date
    ]


def log_rows_of(table: pa.Table) -> list[dict[str, Any]]:
    """A group's coordinator_events as group_generations reads them: instants as naive
    UTC datetimes and a missing line as "", as the replay hands them over
    (replay/arrow_io.py, replay/group.py)."""
    at = table.column("logged_at")
    if at.type.tz is not None:
        table = table.set_column(
            table.column_names.index("logged_at"),
            "logged_at",
            pc.cast(at, pa.timestamp(at.type.unit)),
        )
    line = table.column_names.index("line")
    table = table.set_column(line, "line", pc.fill_null(table.column(line), ""))
    return python_rows(table.select(list(LOG_COLUMNS)))


def _group_table(
    key: tuple[pa.Scalar, ...],
    table: pa.Table,
    *,
    run_date: dt.date,
    offsets_partitions: int,
    schema: pa.Schema,
) -> pa.Table:
    plain = (key[0].as_py(), key[1].as_py())
    generations = group_generations(log_rows_of(table))
    return pa.Table.from_pylist(
        timeline_rows(plain, generations, run_date, offsets_partitions), schema=schema
    )
