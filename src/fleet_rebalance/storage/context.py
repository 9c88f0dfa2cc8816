"""The run a Spark session serves: who commits (job, run id, run date) and how the
stores are reached, bound to the session once by build_session.

Code that holds only the session (a backfill moving to its next date, a test) finds the
run's context here; the settings travel typed and never leave the driver, instead of as
Spark properties.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import SparkSession

from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.storage.errors import NoRunContextError


@dataclass(frozen=True)
class RunContext:
    """Every commit records job, run id and run date (its userMetadata); the store is
    reached with `storage_options` (never credentials: config refuses them)."""

    job: str = "interactive"
    run_id: str = ""
    run_date: str = ""  # ISO date, "" when the run has none
    storage_options: Mapping[str, str] = field(default_factory=dict)
    schema_evolution: bool = False

    def commit_info(self) -> dict[str, str]:
        return {"job": self.job, "runId": self.run_id, "runDate": self.run_date}

    def location(self, uri: str) -> Location:
        return location(uri, self.storage_options)


_CONTEXTS: weakref.WeakKeyDictionary[SparkSession, RunContext] = weakref.WeakKeyDictionary()


def bind_context(spark: SparkSession, context: RunContext) -> None:
    _CONTEXTS[spark] = context


def run_context(spark: SparkSession) -> RunContext:
    try:
        return _CONTEXTS[spark]
    except KeyError:
        raise NoRunContextError(
            "this Spark session serves no run: build it with "
            "fleet_rebalance.spark.session.build_session (or bind one with "
            "storage.context.bind_context)"
        ) from None


@contextlib.contextmanager
def changed_context(spark: SparkSession, **changes: Any) -> Iterator[RunContext]:
    """The session's run context with `changes` (RunContext's fields: a backfill date's
    run_date, a test's storage options) for a while; the one before is put back after."""
    before = run_context(spark)
    bind_context(spark, replace(before, **changes))
    try:
        yield run_context(spark)
    finally:
        bind_context(spark, before)
