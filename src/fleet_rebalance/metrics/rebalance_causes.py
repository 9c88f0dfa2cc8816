"""`rebalance_causes` (gold): the day's rebalances with their causes, as the replay
decided them (replay/rebalance_events.py: the logged generation's reason and the member evidence
around it, else the captures), one row per non-initial rebalance_events row."""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

GOLD_COLUMNS = [
    "cluster",
    "group_id",
    "date",
    "event_seq",
    "event_at",
    "cause",
    "evidence",
    "generation",
    "duration_ms",
    "source",
]


def rebalances(events: DataFrame) -> DataFrame:
    """The rebalances among rebalance_events rows (every event but the initial ones),
    with the silver date as `date`."""
    return events.where(F.col("trigger") != "initial").withColumnRenamed("event_date", "date")


def rebalance_causes(events: DataFrame) -> DataFrame:
    """The gold table from the date's rebalance_events."""
    return rebalances(events).select(*GOLD_COLUMNS)
