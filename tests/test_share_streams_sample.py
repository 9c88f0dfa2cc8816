"""data/sample's share and streams groups (issue 33): added by
generate/add_share_streams.py into the sample as it was, only their files, the bytes
the generator's own step writes for the default fleet. No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.generate.add_share_streams import NotThisFleet, add_to_fleet, main
from fleet_rebalance.generate.fleet import FleetSpec
from fleet_rebalance.generate.share_streams import FILES, SHARE_GROUP, STREAMS_GROUP

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def added(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.name in FILES
    }


def test_the_sample_holds_exactly_what_the_step_writes(tmp_path):
    """Given the default fleet's capture folders, empty, When the step adds the groups,
    Then it writes the six views of every lab capture (the 4.1 cluster: the only one
    whose tools have them) and data/sample holds those files, byte for byte, and no
    other share or streams file."""
    for folder in SAMPLE.glob("*/captures/*"):
        (tmp_path / folder.relative_to(SAMPLE)).mkdir(parents=True)
    written = add_to_fleet(FleetSpec(), tmp_path)
    ours = added(tmp_path)
    assert written == len(ours) == len(FILES) * len(list(SAMPLE.glob("lab/captures/*")))
    assert {Path(name).parts[0] for name in ours} == {"lab"}
    assert added(SAMPLE) == ours


def test_a_root_that_is_not_the_default_fleet_is_refused(tmp_path, capsys):
    """Given a root without the fleet's capture folders, Then nothing is written and the
    command line says why in one line, exit status 2."""
    with pytest.raises(NotThisFleet, match="is missing"):
        add_to_fleet(FleetSpec(), tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert main(["--into", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "is not the fleet of this spec" in err


def test_every_sample_view_parses_clean():
    """Then every share and streams file of data/sample parses with no quarantined line,
    into rows of its group only."""
    names = sorted(added(SAMPLE))
    assert names
    for name in names:
        result = parse_capture(name.replace("/captures", ""), (SAMPLE / name).read_bytes())
        assert result.status == "ok" and result.quarantined_lines == 0, (name, result.quarantine)
        table = {"offsets": "offsets", "members": "members", "state": "group_states"}[result.kind]
        group = SHARE_GROUP if Path(name).name.startswith("share") else STREAMS_GROUP
        assert {r["group_id"] for r in result.records(table)} == {group}, name
