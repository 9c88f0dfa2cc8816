"""data/sample's share and streams groups (issue 33), which the generate job writes
(generate/share_streams.py; tests/test_generate.py checks their bytes). No
Spark."""

from __future__ import annotations

from pathlib import Path

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.generate.share_streams import FILES, SHARE_GROUP, STREAMS_GROUP

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def share_streams_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.name in FILES
    }


def test_every_sample_view_parses_clean():
    """Then every share and streams file of data/sample parses with no quarantined line,
    into rows of its group only."""
    names = sorted(share_streams_files(SAMPLE))
    assert names
    for name in names:
        result = parse_capture(name.replace("/captures", ""), (SAMPLE / name).read_bytes())
        assert result.status == "ok" and result.quarantined_lines == 0, (name, result.quarantine)
        table = {"offsets": "offsets", "members": "members", "state": "group_states"}[result.kind]
        group = SHARE_GROUP if Path(name).name.startswith("share") else STREAMS_GROUP
        assert {r["group_id"] for r in result.records(table)} == {group}, name
