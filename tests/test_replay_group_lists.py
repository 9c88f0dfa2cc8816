"""Group lists in the replay's state rows (issue 33 item 1).

A `kafka-groups.sh --list` row lands in group_states with no state, coordinator or
member count. Taken at the instant of a `--state` capture it must not shadow the
described state, and a list alone is no capture of a group's membership: it moves no
cluster's first capture."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import ingest, replay
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample" / "lab" / "captures"
CAPTURE = "2026-11-20T0000Z"
DAY = dt.date(2026, 11, 20)


def groups_list(groups: list[str]) -> str:
    """`kafka-groups.sh --list` as GroupsCommand prints it: header `%-Ls %-Ls %-Ls`,
    each value `%-Ls `, L = max(20, the longest value)."""
    width = max(20, *(len(g) for g in groups))
    header = " ".join(f"{c:<{width}}" for c in ("GROUP", "TYPE", "PROTOCOL"))
    rows = ["".join(f"{v:<{width}} " for v in (g, "Consumer", "consumer")) for g in groups]
    return "\n".join([header, *rows]) + "\n"


def described_states(path: Path) -> dict[str, str]:
    """group -> STATE of a `--describe --state` capture (STATE is the second-to-last value)."""
    states = {}
    for line in path.read_text().splitlines():
        tokens = line.split()
        if len(tokens) >= 5 and tokens[0] != "GROUP" and tokens[0] != "Warning:":
            states[tokens[0]] = tokens[-2]
    return states


@pytest.fixture(scope="module")
def listed(spark, tmp_path_factory):
    """A warehouse of one lab capture with a group list beside it (same instant) and a
    lone group list half an hour before it."""
    raw = tmp_path_factory.mktemp("lists-raw")
    target = raw / "lab" / "captures" / CAPTURE
    # The consumer groups' views only: the lists name consumer groups.
    shutil.copytree(SAMPLE / CAPTURE, target, ignore=shutil.ignore_patterns("share-*", "streams-*"))
    states = described_states(target / "consumer-groups-state.txt")
    (target / "groups-list.txt").write_text(groups_list(sorted(states)))
    earlier = raw / "lab" / "captures" / "2026-11-19T2330Z"
    earlier.mkdir(parents=True)
    (earlier / "groups-list.txt").write_text(groups_list(sorted(states)))
    config = Config(raw_root=str(raw), warehouse=str(tmp_path_factory.mktemp("lists-wh")))
    ingest.run(spark, config, None)
    return config, states


def test_the_lists_are_ingested_as_state_rows_without_a_state(spark, listed):
    """Given the fixture, Then both lists are ok files whose rows have no state: the
    shadowing the replay must avoid is there to be avoided."""
    config, states = listed
    rows = read_table(spark, config.table_path("group_states")).collect()
    lists = [r for r in rows if r["source_file"].endswith("groups-list.txt")]
    assert len(lists) == 2 * len(states)
    assert {(r["state"], r["member_count"], r["group_type"]) for r in lists} == {
        (None, None, "consumer")
    }


def test_a_list_row_does_not_shadow_the_described_state(spark, listed):
    """Given a list and a `--state` capture at the same instant, When the replay reads
    each capture's state, Then every group has the described state and strategy (an
    Empty group prints none), and the lone list adds no capture."""
    config, states = listed
    read = replay._states(spark, config, [DAY - dt.timedelta(days=1), DAY]).collect()
    assert {r["group_id"]: r["state"] for r in read} == states
    assert {r["captured_at"] for r in read} == {dt.datetime(2026, 11, 20, 0, 0)}
    bronze = read_table(spark, config.table_path("group_states")).collect()
    strategies = {
        r["group_id"]: r["assignment_strategy"]
        for r in bronze
        if r["source_file"].endswith("consumer-groups-state.txt")
    }
    assert {r["group_id"]: r["assignment_strategy"] for r in read} == strategies


def test_a_list_is_no_first_capture(spark, listed):
    """Given a list at 23:30 and the first described capture at 00:00, Then the
    cluster's first capture is 00:00."""
    config, _ = listed
    first = replay.first_captures(spark, config, [DAY - dt.timedelta(days=1), DAY])
    assert first == {"lab": dt.datetime(2026, 11, 20, 0, 0)}
