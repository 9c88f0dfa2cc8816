"""Backfill end to end on data/sample's two dates. `nightly --all` whose metrics step
fails for the second date stops there; the same command again skips the first date,
runs the second, and the warehouse then holds the tables of two single-date nightlies.
Re-runs (`--all`, `--from`, `--to`) skip every date and commit nothing, and so does a
backfill over dates that single-date runs completed."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import runpy
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from deltalake import DeltaTable

from fleet_rebalance.cli import DateSpan, JobFailed
from fleet_rebalance.config import Config
from fleet_rebalance.job_failures import failure_line
from fleet_rebalance.pipeline import backfill, bronze, gold, metrics, runs, silver
from fleet_rebalance.pipeline.nightly import STEPS, StepFailed, report, run_steps
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample"
NIGHTLY = PROJECT / "jobs" / "nightly.py"
D1, D2 = dt.date(2026, 11, 19), dt.date(2026, 11, 20)
TABLES = [*bronze.TABLES, *silver.TABLES, *gold.TABLES, runs.TABLE]
# Columns that say which run wrote a row and when, not what it holds.
PER_RUN = ("run_id", "ingested_at", "started_at", "finished_at")


def sample_config(warehouse: Path) -> Config:
    return Config(raw_root=str(SAMPLE), warehouse=str(warehouse))


def rows(spark, config: Config) -> dict[str, list[str]]:
    """Every table's rows but for per-run columns, in a canonical order."""
    found = {}
    for name in TABLES:
        frame = read_table(spark, config.table_path(name))
        kept = frame.drop(*[c for c in PER_RUN if c in frame.columns])
        found[name] = sorted(repr(row) for row in kept.collect())
    return found


def versions(config: Config) -> dict[str, int]:
    return {name: DeltaTable(config.table_path(name)).version() for name in TABLES}


@contextlib.contextmanager
def progress() -> Iterator[list[str]]:
    """The backfill's log lines while the block runs."""
    lines: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("fleet_rebalance.backfill")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def date_lines(lines: list[str]) -> list[str]:
    """The progress lines, with the durations cut off."""
    return [line.split(" done in ")[0] for line in lines if line.startswith("date ")]


def metrics_failing_on(day: dt.date):
    """STEPS with a metrics step that fails for `day` (an error the user can act on)."""

    def failing(spark, config, run_date):
        if run_date == day:
            raise JobFailed("made to fail for the test")
        return metrics.run(spark, config, run_date)

    return [*STEPS[:2], ("metrics", failing)]


@pytest.fixture(scope="module")
def singles(spark, tmp_path_factory):
    """Two single-date nightlies, D1 then D2: the reference, and their rows."""
    config = sample_config(tmp_path_factory.mktemp("singles"))
    run_steps(spark, config, D1)
    run_steps(spark, config, D2)
    return config, rows(spark, config)


@pytest.fixture(scope="module")
def backfilled(spark, tmp_path_factory):
    """`nightly --all` into a new warehouse with metrics failing for D2, then the same
    command again, as jobs/nightly.py runs them (a report for each date run)."""
    config = sample_config(tmp_path_factory.mktemp("backfill"))
    dates = backfill.capture_dates(config, DateSpan())
    after = partial(report, spark, config)
    with progress() as first, pytest.raises(StepFailed) as failed:
        backfill.run(spark, config, dates, metrics_failing_on(D2), after=after)
    after_failure = read_table(spark, config.table_path(runs.TABLE)).collect()
    with progress() as second:
        reports = backfill.run(spark, config, dates, STEPS, after=after)
    return config, dates, failed.value, after_failure, first, second, reports


def test_all_is_every_capture_date_in_order(backfilled):
    _, dates, *_ = backfilled
    assert dates == [D1, D2]


def test_a_failing_date_stops_the_run_naming_it(backfilled):
    _, _, failed, after_failure, first, *_ = backfilled
    assert str(failed) == (
        f"date 2/2 {D2}: step metrics failed (the 1 date(s) before it are done; run the "
        f"same command again to resume from {D2}): made to fail for the test"
    )
    assert failure_line(failed) == str(failed)  # one line, exit 1 (run_job)
    assert date_lines(first) == [f"date 1/2 {D1}"]
    assert ", eta " in first[-1]
    assert sorted((r["run_date"], r["step"]) for r in after_failure) == [
        (D1, "ingest"),
        (D1, "metrics"),
        (D1, "replay"),
    ]


def test_the_same_command_resumes_from_the_failed_date(backfilled):
    config, *_, second, reports = backfilled
    assert date_lines(second) == [
        f"date 1/2 {D1} complete for the same inputs, skipped",
        f"date 2/2 {D2}",
    ]
    assert ", eta " not in second[-1]  # the last date
    assert list(reports) == [D2]
    assert reports[D2][-1] == f"report: {config.warehouse}/reports/{D2}.html"
    assert all((Path(config.warehouse) / "reports" / f"{day}.html").is_file() for day in (D1, D2))


def test_all_gives_the_tables_of_two_single_date_nightlies(spark, singles, backfilled):
    _, reference = singles
    config, *_ = backfilled
    assert rows(spark, config) == reference


def test_a_rerun_of_all_skips_every_date_and_commits_nothing(
    spark, backfilled, monkeypatch, capsys, tmp_path
):
    """Through jobs/nightly.py: the progress lines say skipped, stdout gets the last
    date's summary, no table gets a commit."""
    import fleet_rebalance.session

    config, *_ = backfilled
    before = versions(config)
    conf = tmp_path / "backfill.yaml"
    conf.write_text(f"raw_root: {SAMPLE}\nwarehouse: {config.warehouse}\n")
    monkeypatch.setattr(fleet_rebalance.session, "build_session", lambda *a, **k: spark)
    argv = ["--all", "--conf", str(conf)]
    monkeypatch.setattr(sys, "argv", [str(NIGHTLY), *argv])
    with pytest.raises(SystemExit) as caught:
        runpy.run_path(str(NIGHTLY), run_name="__main__")
    out, err = capsys.readouterr()
    assert caught.value.code == 0, err
    assert versions(config) == before
    for number, day in enumerate([D1, D2], start=1):
        assert f"date {number}/2 {day} complete for the same inputs, skipped" in err
    summary = out.splitlines()
    assert summary[0].startswith(f"fleet_rebalance {D2}: 24 groups analysed")
    assert summary[-1] == f"report: {config.warehouse}/reports/{D2}.html"


@pytest.mark.parametrize("span", [DateSpan(D1, D2), DateSpan(D1), DateSpan(last=D2)])
def test_from_and_to_give_the_same_dates_and_tables(spark, backfilled, span):
    """The same two dates, already complete: skipped, nothing committed."""
    config, *_ = backfilled
    before = versions(config)
    dates = backfill.capture_dates(config, span)
    with progress() as lines:
        assert backfill.run(spark, config, dates, STEPS) == {}
    assert dates == [D1, D2]
    assert len(date_lines(lines)) == 2 and all(line.endswith("skipped") for line in lines[-2:])
    assert versions(config) == before  # so its tables are still the reference's


@pytest.mark.parametrize("step", STEPS, ids=[name for name, _ in STEPS])
def test_each_jobs_backfill_finds_the_nightlys_dates_complete(spark, backfilled, step):
    """ingest runs the capture dates, replay and metrics the dates bronze holds; each
    finds its records of the nightly's runs and skips both dates."""
    config, *_ = backfilled
    before = versions(config)
    assert backfill.bronze_dates(spark, config, DateSpan()) == [D1, D2]
    with progress() as lines:
        backfill.run_span(spark, config, DateSpan(), [step])
    assert date_lines(lines) == [
        f"date 1/2 {D1} complete for the same inputs, skipped",
        f"date 2/2 {D2} complete for the same inputs, skipped",
    ]
    assert versions(config) == before


def test_single_date_runs_record_what_a_backfill_skips(spark, singles):
    config, _ = singles
    before = versions(config)
    with progress() as lines:
        ran = backfill.run(spark, config, [D1, D2], STEPS)
    assert ran == {}
    assert date_lines(lines) == [
        f"date 1/2 {D1} complete for the same inputs, skipped",
        f"date 2/2 {D2} complete for the same inputs, skipped",
    ]
    assert versions(config) == before
