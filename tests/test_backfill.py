"""Backfill end to end on data/sample's two dates. `nightly --all` whose metrics step
fails for the second date stops there; the same command again runs both dates (ingest
finds the first's captures ingested and commits nothing), and the warehouse then holds
the tables of two single-date nightlies. `--all`, `--from` and `--to` run the same
dates; each job's backfill runs its own dates."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import logging
import runpy
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from deltalake import DeltaTable

from fleet_rebalance.cli.job_failures import failure_line
from fleet_rebalance.config import Config
from fleet_rebalance.date_span import DateSpan
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.pipeline import backfill, bronze, gold, metrics, silver
from fleet_rebalance.pipeline.nightly import STEPS, StepFailed, report
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample"
NIGHTLY = PROJECT / "jobs" / "nightly.py"
D1, D2 = dt.date(2026, 11, 19), dt.date(2026, 11, 20)
TABLES = [*bronze.TABLES, *silver.TABLES, *gold.TABLES]
# Columns that say which run wrote a row and when, not what it holds.
PER_RUN = ("run_id", "ingested_at")


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
def singles(spark, sample_nightlies):
    """Two single-date nightlies, D1 then D2 (the session's, conftest.sample_nightlies):
    the reference, and their rows."""
    config = sample_nightlies.config
    return config, rows(spark, config)


@dataclass
class JobRun:
    """What jobs/nightly.py printed: its exit code, stdout and stderr."""

    code: int | str | None
    out: str
    err: str


def nightly_script(spark, argv: list[str]) -> JobRun:
    """jobs/nightly.py as `./spark-submit.sh nightly ARGV` runs it, in this session."""
    import fleet_rebalance.spark.session
    from fleet_rebalance.cli.run_job import reset_logging

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fleet_rebalance.spark.session, "build_session", lambda *a, **k: spark)
        patch.setattr(sys, "argv", [str(NIGHTLY), *argv])
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        try:
            with pytest.raises(SystemExit) as caught:
                runpy.run_path(str(NIGHTLY), run_name="__main__")
        finally:
            reset_logging()
    return JobRun(caught.value.code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def backfilled(spark, tmp_path_factory):
    """`nightly --all` into a new warehouse with metrics failing for D2 (a report for
    each date run), then the same command again through jobs/nightly.py, as a user
    resumes it."""
    config = sample_config(tmp_path_factory.mktemp("backfill"))
    dates = backfill.capture_dates(config, DateSpan())
    after = partial(report, spark, config)
    with progress() as first, pytest.raises(StepFailed) as failed:
        backfill.run(spark, config, dates, metrics_failing_on(D2), after=after)
    after_failure = versions(config)
    conf = tmp_path_factory.mktemp("backfill-conf") / "backfill.yaml"
    conf.write_text(f"raw_root: {SAMPLE}\nwarehouse: {config.warehouse}\n")
    with progress() as second:
        again = nightly_script(spark, ["--all", "--conf", str(conf)])
    return config, dates, failed.value, after_failure, first, second, again


def test_all_is_every_capture_date_in_order(backfilled):
    _, dates, *_ = backfilled
    assert dates == [D1, D2]


def test_a_failing_date_stops_the_run_naming_it(backfilled):
    _, _, failed, _, first, *_ = backfilled
    assert str(failed) == (
        f"date 2/2 {D2}: step metrics failed (the 1 date(s) before it are done; run the "
        f"same command again to resume from {D2}): made to fail for the test"
    )
    assert failure_line(failed) == str(failed)  # one line, exit 1 (run_job)
    assert date_lines(first) == [f"date 1/2 {D1}"]
    assert ", eta " in first[-1]


def test_the_same_command_resumes_from_the_failed_date(spark, backfilled):
    """Both dates run again through jobs/nightly.py: a progress line per date on stderr,
    the last date's summary on stdout. Ingest finds their captures ingested (no bronze
    commit); replay and metrics replace each date's rows (the tables' rows are the
    reference's: test_all_gives_the_tables_of_two_single_date_nightlies). A table with
    no row for either date gets no version: Delta commits nothing for a write that adds
    and removes no file."""
    config, _, _, after_failure, _, second, again = backfilled
    assert again.code == 0, again.err
    assert date_lines(second) == [f"date 1/2 {D1}", f"date 2/2 {D2}"]
    assert ", eta " not in second[-1]  # the last date
    for number, day in enumerate([D1, D2], start=1):
        assert f"date {number}/2 {day} done in " in again.err
    changed = {name for name, version in versions(config).items() if version != after_failure[name]}
    held = {name for name, found in rows(spark, config).items() if found}
    assert changed == {*silver.TABLES, *gold.TABLES} & held
    summary = again.out.splitlines()
    assert summary[0].startswith(f"fleet_rebalance {D2}: 26 groups analysed")  # 24 + share, streams
    assert summary[-1] == f"report: {config.warehouse}/reports/{D2}.html"
    assert all((Path(config.warehouse) / "reports" / f"{day}.html").is_file() for day in (D1, D2))


def test_all_gives_the_tables_of_two_single_date_nightlies(spark, singles, backfilled):
    _, reference = singles
    config, *_ = backfilled
    assert rows(spark, config) == reference


SPANS = [DateSpan(D1, D2), DateSpan(D1), DateSpan(last=D2)]


@pytest.mark.parametrize("span", SPANS, ids=["from-to", "from", "to"])
def test_from_and_to_give_the_same_dates(span, tmp_path):
    """--from D1 --to D2, --from D1 and --to D2 select the capture dates --all does, and
    the dates are all backfill.run is given: a span's run is --all's."""
    config = sample_config(tmp_path / "unused")
    assert backfill.capture_dates(config, span) == backfill.capture_dates(config, DateSpan())
    assert backfill.capture_dates(config, span) == [D1, D2]


@pytest.mark.parametrize("step", [name for name, _ in STEPS])
def test_each_jobs_backfill_runs_its_dates(spark, backfilled, step, tmp_path):
    """ingest runs the capture dates (into an empty warehouse here), replay and metrics
    the dates bronze holds (with no capture left under raw_root here). The steps record
    the dates they are given: what a step does with a date is the nightly's tests'."""
    config, *_ = backfilled
    if step == "ingest":
        config = sample_config(tmp_path / "empty-warehouse")
    else:
        config = config.model_copy(update={"raw_root": str(tmp_path)})
    given: list[dt.date] = []
    backfill.run_span(spark, config, DateSpan(), [(step, lambda s, c, day: given.append(day))])
    assert given == [D1, D2]
