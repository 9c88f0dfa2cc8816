"""The storage engine a Spark session's run was given, for code that holds only the
session (the read_table/write_table helpers, a task write's driver-side commit).

build_session binds the engine it chose from the config and the run's context once;
a Warehouse takes it from here unless handed its own. This replaces Spark properties
as the way the run's settings travel: they are typed, and never leave the driver.
"""

from __future__ import annotations

import weakref

from pyspark.sql import SparkSession

from fleet_rebalance.storage.engine import RunContext, StorageEngine
from fleet_rebalance.storage.errors import NoEngineError

_ENGINES: weakref.WeakKeyDictionary[SparkSession, StorageEngine] = weakref.WeakKeyDictionary()


def bind_engine(spark: SparkSession, engine: StorageEngine) -> None:
    _ENGINES[spark] = engine


def session_engine(spark: SparkSession) -> StorageEngine:
    try:
        return _ENGINES[spark]
    except KeyError:
        raise NoEngineError(
            "this Spark session has no storage engine: build it with "
            "fleet_rebalance.spark.session.build_session (or bind one with "
            "storage.engines.open_engine)"
        ) from None


def run_context(spark: SparkSession) -> RunContext:
    """The run's context: job, run id, run date, storage options."""
    return session_engine(spark).context
