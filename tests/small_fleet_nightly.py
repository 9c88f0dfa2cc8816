"""A small generated fleet and one clean local nightly of it: the reference for tests
that run the nightly again as separate processes (on a cluster, with a killed driver)
and compare every table with it. What those tests prove (the same tables whatever runs
or interrupts the job) needs the nightly's every step and table, not the sample's size:
this fleet has a fraction of the sample's files and groups, so each run is mostly the
job's fixed cost."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fleet_rebalance.config import Config
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.pipeline.nightly import run_steps

DAY = dt.date(2026, 11, 20)
# One cluster of each Kafka release's tooling (3.6, 3.9, 4.1), so every capture format
# and both group protocols are in it, with the 4.1 cluster's share and streams groups.
# Five and a half hours: the streams group's tasks move five hours in
# (generate/share_streams.py), so every table data/sample fills has rows here too
# (test_faults.py checks it).
SPEC = FleetSpec(
    clusters=3,
    groups_per_cluster=4,
    start=dt.datetime(2026, 11, 20, 1, tzinfo=dt.UTC),
    hours=5.5,
    share_streams=True,
)
# The session's reference, built once however many test modules use the fixture (an
# imported fixture is a fixture of each module that imports it).
_BUILT: dict[str, tuple[Path, Path]] = {}


@pytest.fixture(name="small_nightly")
def small_nightly_fixture(spark, tmp_path_factory) -> tuple[Path, Path]:
    """(raw root, warehouse): SPEC's fleet and its uninterrupted local nightly of DAY."""
    if "reference" not in _BUILT:
        base = tmp_path_factory.mktemp("small-nightly")
        raw, warehouse = base / "raw", base / "wh"
        write_fleet(SPEC, raw)
        run_steps(spark, Config(raw_root=str(raw), warehouse=str(warehouse)), DAY)
        _BUILT["reference"] = (raw, warehouse)
    return _BUILT["reference"]
