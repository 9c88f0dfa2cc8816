"""cross_zone_traffic against the generator's own truth (generate/cross_zone_truth.py,
computed from the simulation, not from the captures nor by the metrics code): every
group of the truth (share and streams groups aside) has its row, records and partitions
exact, bytes within 1 % (the table measures bytes per record from log-dir growth, the
truth multiplies by the topic's drawn record size), and the two groups the generator
placed to show both sides: prod-east's first reads nothing across zones, its second
would save with rack-aware assignment. On small_fleet_nightly's fleet with the
generator's zone map (conftest.zoned_fleet), and on data/sample's two dates with
conf/local.yaml's."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from deltalake import DeltaTable

from fleet_rebalance.config import load_config
from fleet_rebalance.generate.cross_zone_truth import cross_zone_path

PROJECT = Path(__file__).resolve().parent.parent

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
    table = DeltaTable(str(warehouse / "cross_zone_traffic")).to_pandas()
    assert_is_truth(table.to_dict("records"), cross_zone_path(raw), 10)


def test_the_samples_cross_zone_traffic_is_its_truth(spark, sample_nightlies):
    """The rows the README's nightly writes: data/sample's tables (the session's
    nightlies, run without zones) with conf/local.yaml's zones, each date's
    cross_zone_traffic as the metrics step computes it."""
    from fleet_rebalance.pipeline.metrics import gold_frames, offset_history
    from fleet_rebalance.storage.warehouse import Reads, Warehouse

    zones = load_config(PROJECT / "conf" / "local.yaml").zones
    config = sample_nightlies.config.model_copy(update={"zones": zones})
    rows = []
    for day in (dt.date(2026, 11, 19), dt.date(2026, 11, 20)):
        table = Reads(Warehouse(spark, config.warehouse))
        try:
            frames = gold_frames(table, config, day, offset_history(spark, config, day))
            rows += [r.asDict() for r in frames["cross_zone_traffic"].collect()]
        finally:
            table.release()
    assert_is_truth(rows, cross_zone_path(PROJECT / "data" / "sample"), 40)


def assert_is_truth(table: list[dict], truth_file: Path, at_least: int) -> None:
    """`table`'s rows (cross_zone_traffic's) hold the truth's every group and date, and
    prod-east's placed groups show both sides."""
    lines = truth_file.read_text(encoding="utf-8").splitlines()
    truth = {(t["cluster"], t["group_id"], t["date"]): t for t in map(json.loads, lines)}
    rows = {(r["cluster"], r["group_id"], str(r["date"])): r for r in table}
    assert set(truth) <= set(rows) and len(truth) >= at_least
    found = {k: {c: rows[k][c] for c in EXACT + BYTES} for k in truth}
    expected = {k: {c: t[c] for c in EXACT + BYTES} for k, t in truth.items()}
    for key in truth:
        for column in BYTES:  # within 1 %: the table's figure where it is, else the truth's
            have, want = found[key][column], expected[key][column]
            if have is not None and want is not None and abs(have - want) <= 0.01 * want:
                found[key][column] = want
    assert found == expected
    # The generator's groups 0 and 1 of prod-east (generate/fleet.py ZONE_PLANS).
    placed = {(k[1].rsplit("-", 1)[1], k[2]): truth[k] for k in truth if k[0] == "prod-east"}
    for (group, _), reads in placed.items():
        if group == "0":  # rack-aware
            assert reads["read_bytes"] > 0 and reads["partitions_cross_zone_leader"] == 0
        elif group == "1":  # one zone
            assert reads["cross_zone_leader_bytes"] > reads["read_bytes"] / 3
            assert reads["rack_aware_saving_bytes"] > 0
    assert {g for g, _ in placed} >= {"0", "1"}
