"""cross_zone_traffic against the generator's own truth (generate/cross_zone_truth.py,
computed from the simulation, not from the captures nor by the metrics code), on
small_fleet_nightly's fleet with the generator's zone map (conftest.zoned_fleet): every
group of the truth (share and streams groups aside) has its row, records and partitions
exact, bytes within 1 % (the table measures bytes per record from log-dir growth, the
truth multiplies by the topic's drawn record size), and the two groups the generator
placed to show both sides: prod-east's first reads nothing across zones, its second
would save with rack-aware assignment."""

from __future__ import annotations

import json

import pytest
from deltalake import DeltaTable

from fleet_rebalance.generate.cross_zone_truth import cross_zone_path

pytestmark = pytest.mark.spark

EXACT = ("read_records", "size_unknown_records", "partitions_read", "partitions_cross_zone_leader")
BYTES = (
    "read_bytes",
    "cross_zone_leader_bytes",
    "cross_zone_follower_bytes",
    "unknown_zone_bytes",
    "unowned_bytes",
    "rack_aware_saving_bytes",
)


def test_cross_zone_traffic_is_the_generators_truth(small_nightly, zoned_fleet):
    raw, _ = small_nightly
    warehouse, _ = zoned_fleet
    lines = cross_zone_path(raw).read_text(encoding="utf-8").splitlines()
    truth = {(t["cluster"], t["group_id"], t["date"]): t for t in map(json.loads, lines)}
    table = DeltaTable(str(warehouse / "cross_zone_traffic")).to_pandas()
    rows = {(r["cluster"], r["group_id"], str(r["date"])): r for r in table.to_dict("records")}
    assert set(truth) <= set(rows) and len(truth) >= 10
    found = {k: {c: rows[k][c] for c in EXACT + BYTES} for k in truth}
    expected = {k: {c: t[c] for c in EXACT + BYTES} for k, t in truth.items()}
    for key in truth:
        for column in BYTES:  # within 1 %: the table's figure where it is, else the truth's
            have, want = found[key][column], expected[key][column]
            if have is not None and want is not None and abs(have - want) <= 0.01 * want:
                found[key][column] = want
    assert found == expected
    # The generator's groups 0 and 1 of prod-east (generate/fleet.py ZONE_PLANS).
    placed = {k[1].rsplit("-", 1)[1]: truth[k] for k in truth if k[0] == "prod-east"}
    rack_aware, one_zone = placed["0"], placed["1"]
    assert rack_aware["read_bytes"] > 0 and rack_aware["partitions_cross_zone_leader"] == 0
    assert one_zone["cross_zone_leader_bytes"] > one_zone["read_bytes"] / 3
    assert one_zone["rack_aware_saving_bytes"] > 0
