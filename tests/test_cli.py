import datetime as dt
from pathlib import Path

import pytest

from fleet_rebalance.cli import parse_job_args, pipeline_parser

CONF = str(Path(__file__).resolve().parent.parent / "conf" / "local.yaml")


def parse(*argv: str):
    return parse_job_args(
        pipeline_parser("job", "test"), ["--conf", CONF, *argv], today=dt.date(2026, 11, 21)
    )


def test_default_date_is_the_latest_capture_for_the_sample_conf():
    assert parse().run_date == dt.date(2026, 11, 20)


def test_default_date_yesterday_utc(tmp_path):
    conf = tmp_path / "prod.yaml"
    conf.write_text("default_date: yesterday\n")
    args = parse_job_args(
        pipeline_parser("job", "test"), ["--conf", str(conf)], today=dt.date(2026, 12, 1)
    )
    assert args.run_date == dt.date(2026, 11, 30)


def test_explicit_date_all_and_overrides(tmp_path):
    assert parse("--date", "2026-11-01").run_date == dt.date(2026, 11, 1)
    assert parse("--all").run_date is None
    args = parse(
        "--warehouse", str(tmp_path), "--raw-root", str(tmp_path / "raw"), "--date", "2026-11-01"
    )
    assert args.config.warehouse == str(tmp_path)
    assert args.config.raw_root == str(tmp_path / "raw")


def test_bad_date_and_date_with_all_are_refused(capsys):
    with pytest.raises(SystemExit):
        parse("--date", "20261120")
    assert "expected YYYY-MM-DD, found '20261120'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse("--date", "2026-11-20", "--all")
