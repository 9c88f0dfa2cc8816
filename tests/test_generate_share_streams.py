"""The generator's share and streams groups (issue 33, generate/share_streams.py): a
step of its own that leaves every other file of the fleet as it was, and writes views
that parse clean, in which the streams group's restart moves tasks. No Spark."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.generate.share_streams import FILES, SHARE_GROUP, STREAMS_GROUP
from fleet_rebalance.metrics.streams_tasks import INPUT_COLUMNS, group_task_movements

SPEC = FleetSpec(groups_per_cluster=2, hours=6, share_streams=True)


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def fleets(tmp_path_factory):
    """(with the groups, again with them, without them): three generated roots."""
    roots = [tmp_path_factory.mktemp(name) for name in ("with", "again", "without")]
    write_fleet(SPEC, roots[0])
    write_fleet(SPEC, roots[1])
    write_fleet(dataclasses.replace(SPEC, share_streams=False), roots[2])
    return [files(root) for root in roots]


def test_the_step_only_adds_files_and_is_seeded(fleets):
    """Given the fleet with and without the groups, Then every file of the one without
    is byte for byte in the one with, which only adds the six views of each lab capture
    (4.1: the only cluster whose tools have them), the same bytes on a second run."""
    with_them, again, without = fleets
    assert with_them == again
    added = set(with_them) - set(without)
    assert {k: with_them[k] for k in without} == without
    assert {Path(name).name for name in added} == set(FILES)
    assert {Path(name).parts[0] for name in added} == {"lab"}
    lab_captures = {Path(n).parent for n in without if n.startswith("lab/captures/")}
    assert len(added) == len(FILES) * len(lab_captures)


def test_every_view_parses_clean_with_its_group_type(fleets):
    """Given each added file, Then it parses with no quarantined line, and its rows say
    which kind of group they are of where the tool's layout tells."""
    with_them, _, without = fleets
    for name in sorted(set(with_them) - set(without)):
        result = parse_capture(name.replace("/captures", ""), with_them[name])
        assert result.status == "ok" and result.quarantined_lines == 0, (name, result.quarantine)
        assert result.row_count > 0
        table = {"offsets": "offsets", "members": "members", "state": "group_states"}[result.kind]
        rows = result.records(table)
        group = SHARE_GROUP if Path(name).name.startswith("share") else STREAMS_GROUP
        assert {r["group_id"] for r in rows} == {group}
        if table != "members" or group == STREAMS_GROUP:
            kind = "share" if group == SHARE_GROUP else "streams"
            assert {r.get("group_type") for r in rows} == {kind}, name


def test_the_share_start_offset_only_advances(fleets):
    """Given the share offsets of every capture, Then each partition's START-OFFSET never
    goes back (acknowledged records stay acknowledged)."""
    with_them, _, _ = fleets
    seen: dict[int, list[int]] = {}
    for name in sorted(n for n in with_them if n.endswith("share-groups-offsets.txt")):
        for row in parse_capture(name.replace("/captures", ""), with_them[name]).records("offsets"):
            seen.setdefault(row["partition"], []).append(row["start_offset"])
    assert sorted(seen) == [0, 1, 2, 3]
    assert all(values == sorted(values) for values in seen.values())


def test_the_streams_restart_moves_tasks(fleets):
    """Given the streams members of every capture, Then the one at 03:00 (a member
    restarted with a new id) moves tasks, and no other capture does."""
    with_them, _, _ = fleets
    rows = []
    for name in sorted(n for n in with_them if n.endswith("streams-groups-members.txt")):
        at = dt.datetime.strptime(Path(name).parent.name, "%Y-%m-%dT%H%MZ")
        for r in parse_capture(name.replace("/captures", ""), with_them[name]).records("members"):
            rows.append({**{c: r.get(c) for c in INPUT_COLUMNS}, "captured_at": at})
    found = group_task_movements(rows, dt.date(2026, 11, 20))
    assert [r["captured_at"] for r in found] == [dt.datetime(2026, 11, 20, 3, 0)]
    (restart,) = found
    assert (len(restart["joined"]), len(restart["left"]), restart["members"]) == (1, 1, 3)
    assert restart["active_moved"] > 0 and restart["standby_moved"] > 0
