"""Issue 34 item 7: 'did you mean' for jobs and flags, an impossible day named as such,
and relative paths in a conf taken from the conf file's directory."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

import pytest

from fleet_rebalance.cli.arg_types import iso_date
from fleet_rebalance.cli.job_args import job_config
from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.cli.launch_args import split_args
from fleet_rebalance.cli.launcher import main
from fleet_rebalance.config import load_config
from fleet_rebalance.errors import UsageError

PROJECT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["nightlly"], "unknown job 'nightlly' (jobs: ingest, "),
        (
            ["--delta-package", "nightly"],
            "unknown flag --delta-package; did you mean --delta-packages?",
        ),
    ],
)
def test_a_mistyped_job_or_launcher_flag_gets_the_closest(argv, expected):
    with pytest.raises(UsageError) as caught:
        split_args(argv)
    assert str(caught.value).startswith(expected)
    assert str(caught.value).endswith("?")
    if argv == ["nightlly"]:
        assert str(caught.value).endswith("; did you mean nightly?")


def test_a_job_far_from_every_name_gets_no_guess():
    with pytest.raises(UsageError) as caught:
        split_args(["xyzzy"])
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("job", "argv", "expected"),
    [
        (
            "nightly",
            ["--data", "2026-11-20"],
            "unrecognized arguments: --data 2026-11-20; did you mean --date?",
        ),
        (
            "replay",
            ["--asignors=range"],
            "unrecognized arguments: --asignors=range; did you mean --assignors?",
        ),
        (
            "maintain",
            ["--retian-days", "3"],
            "unrecognized arguments: --retian-days 3; did you mean --retain-days?",
        ),
        (
            "sql",
            ["SELECT 1", "--format", "jsn"],
            "argument --format: invalid choice: 'jsn' (choose from 'table', 'csv', 'json', "
            "'markdown'); did you mean json?",
        ),
        (
            "sql",
            ["SELECT 1", "--engine", "duckbd"],
            "argument --engine: invalid choice: 'duckbd' (choose from 'spark', 'duckdb'); "
            "did you mean duckdb?",
        ),
        ("nightly", ["--zzzzzz"], "unrecognized arguments: --zzzzzz"),
    ],
)
def test_a_mistyped_flag_or_choice_gets_the_closest(job, argv, expected):
    with pytest.raises(UsageError) as caught:
        job_parser(job).parse_args(argv)
    assert str(caught.value) == expected


def test_the_launcher_says_did_you_mean_in_its_one_line(capsys):
    assert main(["nightlly"]) == 2
    assert capsys.readouterr().err == (
        "spark-submit.sh: unknown job 'nightlly' (jobs: ingest, replay, metrics, nightly, sql, "
        "generate, maintain, test); did you mean nightly? (see ./spark-submit.sh --help)\n"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-31", "no such day 2026-11-31: November 2026 has 30 days"),
        ("2026-02-29", "no such day 2026-02-29: February 2026 has 28 days"),
        ("2026-04-00", "no such day 2026-04-00: days start at 01"),
        ("2026-13-45", "no such day 2026-13-45: there is no month 13 (01 to 12)"),
        ("2026-00-10", "no such day 2026-00-10: there is no month 00 (01 to 12)"),
        ("0000-01-01", "expected a date from 1970-01-02 to 9999-12-30, found 0000-01-01"),
        ("2026-11-5", "expected YYYY-MM-DD, found '2026-11-5'"),
    ],
)
def test_an_impossible_day_is_named_as_such(text, expected):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        iso_date(text)
    assert str(caught.value) == expected


def test_real_days_still_parse():
    assert iso_date("2024-02-29") == dt.date(2024, 2, 29)
    assert iso_date("2026-11-30") == dt.date(2026, 11, 30)


def write_conf(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "job.yaml"
    path.write_text(text)
    return path


def test_relative_paths_in_a_conf_are_taken_from_its_directory(tmp_path, monkeypatch):
    conf = write_conf(tmp_path / "etc", "raw_root: ../raw\nwarehouse: tables\n")
    monkeypatch.chdir(tmp_path / "etc")
    here = load_config(conf.name)
    monkeypatch.chdir(tmp_path)
    there = load_config(Path("etc") / conf.name)
    for config in (here, there):
        assert config.raw_root == str(tmp_path / "raw")
        assert config.warehouse == str(tmp_path / "etc" / "tables")


def test_paths_given_on_the_command_line_stay_relative_to_the_current_directory(
    tmp_path, monkeypatch
):
    conf = write_conf(tmp_path / "etc", "raw_root: raw\nwarehouse: tables\n")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    args = job_parser("nightly").parse_args(
        ["--conf", str(conf), "--raw-root", "mine", "--date", "2026-11-20"]
    )
    config = job_config(args, "nightly")
    assert config.raw_root == str(tmp_path / "work" / "mine")
    assert config.warehouse == str(tmp_path / "etc" / "tables")


def test_absolute_paths_and_uris_in_a_conf_are_kept(tmp_path):
    conf = write_conf(
        tmp_path / "etc", f"raw_root: {tmp_path / 'abs'}\nwarehouse: s3://bucket/wh\n"
    )
    config = load_config(conf)
    assert config.raw_root == str(tmp_path / "abs")
    assert config.warehouse == "s3://bucket/wh"


@pytest.mark.parametrize("where", ["project", "elsewhere"])
def test_the_shipped_confs_and_the_default_conf_work_from_any_directory(
    tmp_path, monkeypatch, where
):
    """conf/local.yaml names the project's data/sample and warehouse from the project
    directory and from another one (spark-submit.sh exports FLEET_PROJECT_DIR, where
    the default --conf is looked for when the current directory has none)."""
    monkeypatch.setenv("FLEET_PROJECT_DIR", str(PROJECT))
    monkeypatch.chdir(PROJECT if where == "project" else tmp_path)
    config = job_config(job_parser("sql").parse_args(["SELECT 1"]), "sql")
    assert config.source == str(PROJECT / "conf" / "local.yaml") or where == "project"
    assert config.raw_root == str(PROJECT / "data" / "sample")
    assert config.warehouse == str(PROJECT / "warehouse")
    explicit = load_config(PROJECT / "conf" / "local.yaml")
    assert (explicit.raw_root, explicit.warehouse) == (config.raw_root, config.warehouse)
    s3 = load_config(PROJECT / "conf" / "s3.example.yaml")
    assert s3.warehouse == "s3://my-bucket/fleet-rebalance/warehouse"


def test_without_the_project_the_default_conf_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("FLEET_PROJECT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"conf/local.yaml, the default --conf, not found"):
        job_config(job_parser("sql").parse_args(["SELECT 1"]), "sql")


def test_the_launcher_runs_from_another_directory(tmp_path, monkeypatch, capsys):
    """Given: spark-submit.sh's launcher run from a directory without conf/, sql on
    DuckDB (no JVM) and --warehouse relative to that directory. Then: the project's
    default conf is read and the flag's path is the current directory's."""
    monkeypatch.setenv("FLEET_PROJECT_DIR", str(PROJECT))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wh").mkdir()
    argv = ["sql", "--engine", "duckdb", "SELECT 1 AS one", "--warehouse", "wh", "--format", "csv"]
    assert main(argv) == 0
    assert capsys.readouterr().out == "one\r\n1\r\n"
    assert main([*argv[:-2], "--warehouse", "missing"]) == 2
    assert f"--warehouse {tmp_path / 'missing'}: no such directory" in capsys.readouterr().err
