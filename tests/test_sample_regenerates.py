"""data/sample is what `./spark-submit.sh generate` writes with its defaults (issue 53):
every capture, broker log and share/streams view, and both truths beside it, byte for
byte. No Spark; a few seconds.

When the generator changes what it writes, regenerate the sample with

    ./spark-submit.sh generate --out data/sample --clean

and re-derive the numbers the tests check on it (docs/sample-fleet.md)."""

from __future__ import annotations

import runpy
from pathlib import Path

from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.generate.cross_zone_truth import cross_zone_path
from fleet_rebalance.generate.fleet import truth_path

PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample"
GENERATE = PROJECT / "jobs" / "generate_fleet.py"


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_generate_with_its_defaults_writes_the_sample(tmp_path):
    """Given the generate job's flags with nothing but --out, When its main runs, Then the
    tree it writes is data/sample's, file for file and byte for byte, and its generation
    and cross-zone truths are data/sample.truth.jsonl and data/sample.cross_zone.jsonl."""
    out = tmp_path / "sample"
    main = runpy.run_path(str(GENERATE), run_name="generate_fleet")["main"]
    assert main(job_parser("generate").parse_args(["--out", str(out)])) == 0
    written, committed = files(out), files(SAMPLE)
    assert sorted(written) == sorted(committed)
    differing = [name for name in committed if written[name] != committed[name]]
    assert differing == []
    for beside in (truth_path, cross_zone_path):
        assert beside(out).read_bytes() == beside(SAMPLE).read_bytes(), beside(SAMPLE).name
