"""Pipeline steps: each a module fleet_rebalance.pipeline.<step> with
`run(spark, config, run_date) -> dict[str, int]` (rows written per table)."""

from __future__ import annotations

import importlib
from types import ModuleType

NIGHTLY_STEPS = ("ingest", "replay", "metrics")


def load_step(name: str) -> ModuleType | None:
    """The step's module, or None while it has not been built yet."""
    try:
        module = importlib.import_module(f"fleet_rebalance.pipeline.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"fleet_rebalance.pipeline.{name}":
            return None
        raise
    return module if hasattr(module, "run") else None
