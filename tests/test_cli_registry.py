"""The one job registry (fleet_rebalance.cli.registry): the launcher, the parsers and
jobs/*.py read the same list, and spark-submit.sh runs the launcher module that exists."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.cli.launch_args import job_script
from fleet_rebalance.cli.launcher_help import USAGE
from fleet_rebalance.cli.registry import JOBS, PARSED_JOBS
from fleet_rebalance.errors import UsageError

PROJECT = Path(__file__).resolve().parent.parent
RUN_JOB_CALL = re.compile(r'^    run_job\("([a-z]+)", main\)$', re.MULTILINE)


def test_every_script_under_jobs_is_a_registered_job_and_back():
    """Given: the registry and the files under jobs/.
    Expected: each job's script exists, and every jobs/*.py is some job's script."""
    scripts = {job.script for job in JOBS.values() if job.script}
    assert scripts == {path.name for path in (PROJECT / "jobs").glob("*.py")}
    for name in JOBS:
        if JOBS[name].script:
            assert job_script(PROJECT, name).is_file(), name


def test_each_job_script_runs_the_job_it_is_registered_as():
    """Given: each jobs/*.py. Expected: it runs run_job with its own registry name, so
    its flags are the registry's for that job."""
    for name, job in JOBS.items():
        if job.script is None:
            continue
        text = (PROJECT / "jobs" / job.script).read_text(encoding="utf-8")
        assert RUN_JOB_CALL.findall(text) == [name], job.script


def test_the_launcher_help_and_each_jobs_help_come_from_the_registry():
    """Expected: ./spark-submit.sh --help lists every job with its summary, in the
    registry's order; each job's --help opens with its description."""
    lines = [f"  {name:<10} {job.summary}" for name, job in JOBS.items()]
    assert "\n".join(lines) in USAGE
    assert list(JOBS) == [
        "ingest",
        "replay",
        "metrics",
        "nightly",
        "sql",
        "generate",
        "maintain",
        "test",
    ]
    for name in PARSED_JOBS:
        parser = job_parser(name)
        assert parser.prog == name
        assert parser.description == JOBS[name].description
        assert parser.format_help().startswith(f"usage: {name} ")


def test_a_job_without_flags_of_its_own_has_no_parser():
    """Given: test (its flags go to pytest) and a mistyped job.
    Expected: UsageError, the second with the closest job."""
    with pytest.raises(UsageError, match=r"^unknown job 'test'"):
        job_parser("test")
    with pytest.raises(UsageError, match=r"^unknown job 'metrcs'; did you mean metrics\?$"):
        job_parser("metrcs")


def test_spark_submit_sh_runs_the_launcher_module_there_is():
    """Given: the `python -m MODULE` spark-submit.sh ends with.
    Expected: MODULE is importable from src/, and `python -m MODULE --help` prints the
    usage and exits 0 (no JVM, no job)."""
    text = (PROJECT / "spark-submit.sh").read_text(encoding="utf-8")
    (module,) = re.findall(r'^exec "\$venv/bin/python" -m (\S+) "\$@"$', text, re.MULTILINE)
    assert importlib.util.find_spec(module) is not None
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src"), "FLEET_PROJECT_DIR": str(PROJECT)}
    result = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == USAGE + "\n"
