import datetime as dt
import runpy
import sys
from pathlib import Path

import pytest

from fleet_rebalance.cli.job_args import parse_job_args
from fleet_rebalance.cli.job_parser import pipeline_parser
from fleet_rebalance.cli.launch_checks import check_launch
from fleet_rebalance.cli.run_job import run_job
from fleet_rebalance.config import ConfigError
from fleet_rebalance.date_span import DateSpan
from fleet_rebalance.errors import JobFailed, UsageError, error_text
from fleet_rebalance.yaml_file import MESSAGE_CHARS

PROJECT = Path(__file__).resolve().parent.parent
CONF = str(PROJECT / "conf" / "local.yaml")
NIGHTLY = PROJECT / "jobs" / "nightly.py"
NOV_1, NOV_5 = dt.date(2026, 11, 1), dt.date(2026, 11, 5)


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
    assert parse("--date", "2026-11-01").span is None
    assert parse("--all").run_date is None
    assert parse("--all").span == DateSpan()
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


@pytest.mark.parametrize(
    ("argv", "span"),
    [
        (["--from", "2026-11-01", "--to", "2026-11-05"], DateSpan(NOV_1, NOV_5)),
        (["--from", "2026-11-01"], DateSpan(NOV_1, None)),  # through the newest date
        (["--to", "2026-11-05"], DateSpan(None, NOV_5)),  # from the oldest
        (["--from", "2026-11-05", "--to", "2026-11-05"], DateSpan(NOV_5, NOV_5)),
    ],
)
def test_from_and_to_are_a_backfill(argv, span):
    args = parse(*argv)
    assert (args.run_date, args.span) == (None, span)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--from", "2026-11-05", "--to", "2026-11-01"],
            "--from 2026-11-05 is after --to 2026-11-01; pass the earlier date to --from",
        ),
        (
            ["--date", "2026-11-05", "--from", "2026-11-01"],
            "--from and --date: pass --date for one date, or --from/--to for a range",
        ),
        (
            ["--all", "--to", "2026-11-01"],
            "--to and --all: pass --all for every date, or --from/--to",
        ),
        (
            ["--from", "2026-11-31"],
            "argument --from: no such day 2026-11-31: November 2026 has 30 days",
        ),
    ],
)
def test_date_flags_that_cannot_go_together_are_one_usage_line(capsys, argv, expected):
    with pytest.raises(SystemExit) as caught:
        parse(*argv)
    assert caught.value.code == 2
    assert one_stderr_line(capsys) == f"job: error: {expected}"


def test_a_backfill_range_without_captures_is_refused_before_the_jvm(tmp_path):
    """A local raw_root is listed by the launcher: a span with no capture date fails
    (exit 1) in one line naming the span and the dates there are."""
    argv = ["--conf", CONF, "--warehouse", str(tmp_path / "wh"), "--from", "2026-12-01"]
    with pytest.raises(JobFailed) as caught:
        check_launch("nightly", argv)
    assert str(caught.value) == (
        f"no capture dates from 2026-12-01 on under {PROJECT}/data/sample (path_pattern "
        "'^(?P<cluster>[^/]+)/'); the captures there are dated 2026-11-19 to 2026-11-20"
    )
    assert check_launch("nightly", [*argv[:-2], "--to", "2026-11-19"]) == [
        *argv[:-2],
        "--to",
        "2026-11-19",
    ]
    # replay and metrics run the dates bronze holds: the job reads them, not the launcher.
    (tmp_path / "wh").mkdir()
    assert check_launch("replay", ["--conf", CONF, "--warehouse", str(tmp_path / "wh"), "--all"])


def one_stderr_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err.rstrip("\n")


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--raw-root", "", "a directory or URI, found ''"),
        ("--warehouse", "", "a directory or URI, found ''"),
        ("--conf", "", "a YAML configuration file, found ''"),
        ("--raw-root", "  ", "a directory or URI, found '  '"),
    ],
)
def test_empty_path_flags_are_usage_errors_not_the_default(capsys, flag, value, expected):
    """Given: `--raw-root ""` (an unset variable in a scheduler template).
    Then: no fallback to the conf's data/sample. Expected: exit 2, one line."""
    with pytest.raises(SystemExit) as caught:
        parse(flag, value, "--date", "2026-11-20")
    assert caught.value.code == 2
    assert one_stderr_line(capsys) == f"job: error: argument {flag}: expected {expected}"


@pytest.mark.parametrize(
    ("date", "expected"),
    [
        ("0001-01-01", "a date from 1970-01-02 to 9999-12-30, found 0001-01-01"),
        ("1970-01-01", "a date from 1970-01-02 to 9999-12-30, found 1970-01-01"),
        ("9999-12-31", "a date from 1970-01-02 to 9999-12-30, found 9999-12-31"),
        ("2026-1-05", "YYYY-MM-DD, found '2026-1-05'"),
        ("２０２６-11-20", "YYYY-MM-DD, found '２０２６-11-20'"),
        ("x" * 10_000, "YYYY-MM-DD, found 'xxxxxxxx"),
    ],
)
def test_dates_without_a_previous_day_are_usage_errors(capsys, date, expected):
    """Given: --date 0001-01-01, whose previous day the replay needs and cannot have.
    Expected: refused at parsing, exit 2, one bounded line (it used to end the run with
    'step replay failed for 0001-01-01: ' and no reason)."""
    with pytest.raises(SystemExit) as caught:
        parse("--date", date)
    assert caught.value.code == 2
    line = one_stderr_line(capsys)
    assert line.startswith(f"job: error: argument --date: expected {expected}")
    assert len(line) < 400


def test_the_first_and_last_sane_dates_are_accepted():
    assert parse("--date", "1970-01-02").run_date == dt.date(1970, 1, 2)
    assert parse("--date", "9999-12-30").run_date == dt.date(9999, 12, 30)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--date", "0001-01-01"], "argument --date: expected a date from 1970-01-02"),
        (["--raw-root", ""], "argument --raw-root: expected a directory or URI, found ''"),
        (["--conf", "{bomb}"], "{bomb}: line 1: YAML anchors and aliases are not allowed"),
    ],
)
def test_nightly_job_refuses_before_building_a_spark_session(
    tmp_path, monkeypatch, capsys, argv, expected
):
    """Given: jobs/nightly.py run as spark-submit runs it, with a hostile flag.
    Expected: exit 2 with one line on stderr, and build_session never called."""
    import fleet_rebalance.spark.session

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [x, x]\nb: &b [*a, *a]\napp_name: [*b, *b]\n")
    argv = [arg.format(bomb=bomb) for arg in argv]
    expected = expected.format(bomb=bomb)

    def no_spark(*args, **kwargs):
        raise AssertionError("a SparkSession was requested")

    monkeypatch.setattr(fleet_rebalance.spark.session, "build_session", no_spark)
    monkeypatch.setattr(sys, "argv", [str(NIGHTLY), *argv])
    with pytest.raises(SystemExit) as caught:
        runpy.run_path(str(NIGHTLY), run_name="__main__")
    assert caught.value.code == 2
    assert one_stderr_line(capsys).startswith(f"nightly: error: {expected}")


def test_latest_capture_date_out_of_range_is_refused(tmp_path):
    """Given: default_date latest and a capture whose path says year 1.
    Expected: a one-line refusal, not a replay that overflows computing the day before."""
    capture = tmp_path / "raw" / "c" / "0001-01-01T0000Z" / "offsets.txt"
    capture.parent.mkdir(parents=True)
    capture.write_text("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG\n")
    conf = tmp_path / "latest.yaml"
    conf.write_text(f"default_date: latest\nraw_root: {tmp_path / 'raw'}\n")
    with pytest.raises(JobFailed) as caught:
        parse_job_args(pipeline_parser("job", "test"), ["--conf", str(conf)])
    assert str(caught.value) == (
        "default_date is latest but the latest capture is dated 0001-01-01: "
        "expected a date from 1970-01-02 to 9999-12-30, found 0001-01-01"
    )


def test_error_text_is_never_empty():
    assert error_text(OverflowError()) == "OverflowError"
    assert error_text(RuntimeError("  ")) == "RuntimeError"
    assert error_text(ValueError("two\nlines")) == "two\\nlines"
    assert len(error_text(ValueError("x" * 100_000))) == MESSAGE_CHARS


def test_run_job_failure_with_an_empty_message_names_the_exception(caplog):
    def main(args) -> int:
        raise OverflowError

    with pytest.raises(SystemExit) as caught:
        run_job("ingest", main, [])
    assert caught.value.code == 1
    assert "job failed: OverflowError" in caplog.text


def test_run_job_reports_a_conf_error_in_one_line(capsys):
    def main(args) -> int:
        raise ConfigError("conf/x.yaml: master: expected a Spark master URL\nsecond line")

    with pytest.raises(SystemExit) as caught:
        run_job("ingest", main, [])
    assert caught.value.code == 2
    line = one_stderr_line(capsys)
    assert line.endswith(": error: conf/x.yaml: master: expected a Spark master URL\\nsecond line")


def test_launcher_check_reads_the_conf_only_when_asked(tmp_path):
    """In cluster deploy mode the conf may exist only where the driver runs."""
    missing = str(tmp_path / "prod.yaml")
    argv = ["--conf", missing, "--date", "2026-11-20"]
    assert check_launch("nightly", argv, read_conf=False, here=False) == argv
    with pytest.raises(UsageError, match=r"--conf .*prod\.yaml: no such file"):
        check_launch("nightly", argv)
    with pytest.raises(UsageError, match="argument --date: expected a date from 1970-01-02"):
        check_launch("nightly", ["--conf", missing, "--date", "1969-12-31"], read_conf=False)
    # Each job's own flags are checked too.
    with pytest.raises(UsageError, match="argument --format: invalid choice: 'xml'"):
        check_launch("sql", ["SELECT 1", "--format", "xml"], read_conf=False)
    with pytest.raises(UsageError, match="unrecognized arguments: --assignors range"):
        check_launch("metrics", ["--assignors", "range"], read_conf=False)
