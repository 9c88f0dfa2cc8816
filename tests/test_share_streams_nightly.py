"""Share and streams groups through ingest, replay and metrics (issue 33 item 2): one
small raw root holding tests/data/share_streams' 4.2 share views and the streams
captures of test_streams_task_movements, run as the nightly job runs them for DAY."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from test_streams_task_movements import FIRST, JZ7, SECOND, THIRD, YESTERDAY_LAST, at

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import ingest, metrics, replay
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
DATA = Path(__file__).resolve().parent / "data" / "share_streams"
DAY = dt.date(2026, 11, 20)
SHARE_VIEWS = ("share_offsets_4.2.txt", "share_members_4.2.txt", "share_state_4.2.txt")


@pytest.fixture(scope="module")
def nightly(spark, tmp_path_factory):
    """(config, metrics counts): the captures as files, ingested, replayed, measured."""
    raw = tmp_path_factory.mktemp("share-streams-raw")
    for when, text in (
        (YESTERDAY_LAST, FIRST),
        (at(0, 0), FIRST),
        (at(0, 20), SECOND),
        (at(0, 40), THIRD),
    ):
        folder = raw / "lab" / "captures" / f"{when:%Y-%m-%dT%H%MZ}"
        folder.mkdir(parents=True)
        (folder / "streams-groups-members.txt").write_text(text)
        for name in SHARE_VIEWS:
            shutil.copy(DATA / name, folder / name)
    config = Config(raw_root=str(raw), warehouse=str(tmp_path_factory.mktemp("wh")))
    ingest.run(spark, config, None)
    replay.run(spark, config, DAY)
    return config, metrics.run(spark, config, DAY)


def rows(spark, config, name, group):
    return [
        r for r in read_table(spark, config.table_path(name)).collect() if r["group_id"] == group
    ]


def test_task_movements_and_the_streams_rebalance(spark, nightly):
    """Then task_movements holds the two moves, and the replay sees the streams group's
    member leaving at 00:40 as a rebalance, as it would a consumer group's."""
    config, counts = nightly
    assert counts["task_movements"] == 2
    moves = sorted(
        rows(spark, config, "task_movements", "orders-enricher"), key=lambda r: r["captured_at"]
    )
    assert [(r["active_moved"], r["standby_moved"], r["left"]) for r in moves] == [
        (1, 0, []),
        (3, 1, [JZ7]),
    ]
    left = [
        (r["event_at"], r["trigger"])
        for r in rows(spark, config, "rebalance_events", "orders-enricher")
        if r["trigger"] == "member_left"
    ]
    assert left == [(dt.datetime(2026, 11, 20, 0, 40), "member_left")]


def test_the_share_group_has_its_lag_and_no_status_nor_double_ownership(spark, nightly):
    """Then inventory-share (three members sharing partitions 0-2 of inventory) has its
    lag distribution, no consumer_status row, and no double_ownership finding."""
    config, _ = nightly
    (lags,) = [r for r in rows(spark, config, "lag_distribution", "inventory-share")]
    assert (lags["topic"], lags["samples"], lags["unknown_lag_samples"]) == ("inventory", 6, 3)
    assert lags["lag_max"] == 4
    assert rows(spark, config, "consumer_status", "inventory-share") == []
    assert rows(spark, config, "ownership_audit", "inventory-share") == []


def test_no_consumer_assignor_is_replayed_for_share_or_streams_groups(spark, nightly):
    """Then neither group has an assignor's replay, nor a recommendation built on one:
    Kafka's consumer assignors assign neither (replay/group.py)."""
    config, _ = nightly
    for group in ("orders-enricher", "inventory-share"):
        for name in ("replay_metrics", "assignment_replay", "stickiness", "recommendations"):
            assert rows(spark, config, name, group) == [], (name, group)


def test_group_health_names_the_share_and_streams_protocols(spark, nightly):
    """Then group_health gives each its protocol from the captures (no recommendation
    says it), and the share group's plain members view, which names no group type, is
    typed by its --state view: not replayed (the test above)."""
    config, _ = nightly
    protocols = {
        group: [r["protocol"] for r in rows(spark, config, "group_health", group)]
        for group in ("orders-enricher", "inventory-share")
    }
    assert protocols == {"orders-enricher": ["streams"], "inventory-share": ["share"]}
