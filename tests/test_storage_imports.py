"""The storage package's shape (issue 35): the run's settings reach it through its
RunContext, never as Spark properties of our own, and both engines implement the one
interface. (Import cycles: test_package_layout.py.)"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGES = ("fleet_rebalance.storage", "fleet_rebalance.spark")


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def test_no_setting_of_ours_travels_as_a_spark_property():
    ours = {n: p for n, p in _modules().items() if n.startswith(PACKAGES)}
    assert len(ours) > 20  # the walk found the packages
    offenders = [
        f"{path.relative_to(SRC)}:{number}"
        for path in ours.values()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "spark.fleet_rebalance." in line
    ]
    assert offenders == []


def test_every_storage_engine_implements_the_interface():
    """Each engine has every method of engine.StorageEngine, taking the same arguments."""
    import inspect
    from typing import get_type_hints

    from fleet_rebalance.storage.deltars.engine import DeltaRsEngine
    from fleet_rebalance.storage.deltaspark.engine import DeltaSparkEngine
    from fleet_rebalance.storage.engine import StorageEngine

    wanted = {n for n in vars(StorageEngine) if not n.startswith("_")}
    wanted |= set(get_type_hints(StorageEngine))
    for engine in (DeltaRsEngine, DeltaSparkEngine):
        missing = {n for n in wanted if not hasattr(engine, n) and n != "context"}
        assert missing == set(), engine.__name__
        for name in wanted:
            method = getattr(StorageEngine, name, None)
            if callable(method):
                theirs = list(inspect.signature(getattr(engine, name)).parameters)
                assert theirs == list(inspect.signature(method).parameters), (engine, name)
