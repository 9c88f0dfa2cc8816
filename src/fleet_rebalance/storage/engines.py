"""Which engine object a run gets: the one place that knows both implementations."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pyspark.sql import SparkSession

from fleet_rebalance.storage.context import bind_engine, session_engine
from fleet_rebalance.storage.deltars.engine import DeltaRsEngine
from fleet_rebalance.storage.deltaspark.engine import DeltaSparkEngine
from fleet_rebalance.storage.engine import DELTA_SPARK, RunContext, StorageEngine


def open_engine(spark: SparkSession, context: RunContext) -> StorageEngine:
    """The engine `context` names, for `spark`."""
    if context.engine == DELTA_SPARK:
        return DeltaSparkEngine(spark, context)
    return DeltaRsEngine(spark, context)


def bind_run(spark: SparkSession, context: RunContext) -> StorageEngine:
    """Open the run's engine and make it the session's (context.session_engine)."""
    engine = open_engine(spark, context)
    bind_engine(spark, engine)
    return engine


def rebind(spark: SparkSession, **changes: Any) -> StorageEngine:
    """Bind the session's run context with `changes` (RunContext's fields: a backfill
    date's run_date); the caller keeps session_engine(spark) from before to put back."""
    return bind_run(spark, replace(session_engine(spark).context, **changes))


@contextlib.contextmanager
def run_changed(spark: SparkSession, **changes: Any) -> Iterator[StorageEngine]:
    """The session's run context with `changes` (RunContext's fields: a backfill's
    run_date, a test's engine) for a while; the one before is put back after."""
    before = session_engine(spark)
    try:
        yield bind_run(spark, replace(before.context, **changes))
    finally:
        bind_engine(spark, before)
