"""A small generated fleet, whose clean local nightly (conftest.small_nightly) is the
reference for tests that run the nightly again as separate processes (on a cluster, with
a killed driver) and compare every table with it. What those tests prove (the same
tables whatever runs or interrupts the job) needs the nightly's every step and table,
not the sample's size: this fleet has a fraction of the sample's files and groups, so
each run is mostly the job's fixed cost."""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.generate.fleet import FleetSpec

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
