"""Backfill's rules without Spark: which dates a span runs and which days it names as
missing, the progress lines and their eta, the loop's order and failure line."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from fleet_rebalance.config import Config
from fleet_rebalance.date_span import DateSpan, bronze_span, capture_span, span_dates
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.pipeline import backfill
from fleet_rebalance.pipeline.nightly import StepFailed
from fleet_rebalance.storage.context import RunContext, bind_context, run_context


def day(n: int) -> dt.date:
    return dt.date(2026, 11, n)


# --- dates of a span ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "dates", "gaps"),
    [
        (DateSpan(), [1, 2, 5, 9], [(3, 4), (6, 8)]),
        (DateSpan(day(2), day(5)), [2, 5], [(3, 4)]),
        (DateSpan(day(5)), [5, 9], [(6, 8)]),  # --from alone: through the newest
        (DateSpan(last=day(2)), [1, 2], []),  # --to alone: from the oldest
        (DateSpan(day(3), day(4)), [], [(3, 4)]),
        (DateSpan(day(9), day(12)), [9], [(10, 12)]),  # days past the newest are named
    ],
)
def test_a_span_runs_its_dates_in_order_and_names_the_days_without(span, dates, gaps):
    found = span_dates([day(9), day(1), day(5), day(2), day(5)], span)
    assert found.dates == [day(n) for n in dates]
    assert found.gaps == [(day(a), day(b)) for a, b in gaps]


def test_the_gaps_are_one_warning_line():
    found = span_dates([day(1), day(2), day(5), day(9)], DateSpan())
    assert found.gaps_text("captures") == (
        "no captures on 5 day(s) of the backfill, not run: 2026-11-03..2026-11-04, "
        "2026-11-06..2026-11-08"
    )
    every_other = span_dates([day(n) for n in range(1, 30, 2)], DateSpan())
    assert every_other.gaps_text("captures").endswith("2026-11-18, 2026-11-20 and 4 more gap(s)")
    assert span_dates([day(1), day(2)], DateSpan()).gaps_text("captures") is None


def capture(root: Path, relative: str, text: str = "GROUP TOPIC PARTITION\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_capture_dates_are_the_path_dates_under_raw_root(tmp_path):
    capture(tmp_path, "c1/2026-11-20T0910Z/offsets.txt")
    capture(tmp_path, "c2/2026-11-22T0100Z/offsets.txt")
    capture(tmp_path, "c1/notes.txt")  # no date: not a date of its own
    config = Config(raw_root=str(tmp_path))
    assert capture_span(config, DateSpan()).dates == [day(20), day(22)]
    assert capture_span(config, DateSpan()).gaps == [(day(21), day(21))]
    with pytest.raises(JobFailed) as caught:
        capture_span(config, DateSpan(day(23)))
    assert str(caught.value) == (
        f"no capture dates from 2026-11-23 on under {tmp_path} (path_pattern "
        "'^(?P<cluster>[^/]+)/'); the captures there are dated 2026-11-20 to 2026-11-22"
    )
    with pytest.raises(JobFailed, match=r"raw_root .*missing: no such directory; pass --raw-root"):
        capture_span(Config(raw_root=str(tmp_path / "missing")), DateSpan())


def test_bronze_without_the_span_fails_in_one_line():
    with pytest.raises(JobFailed) as caught:
        bronze_span([day(19), day(20)], DateSpan(last=day(18)), "wh")
    assert str(caught.value) == (
        "no ingested dates up to 2026-11-18 in wh (ingested_files); bronze holds "
        "2026-11-19 to 2026-11-20"
    )
    with pytest.raises(JobFailed, match=r"at all in wh .*run ./spark-submit.sh ingest"):
        bronze_span([], DateSpan(), "wh")


# --- progress ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0 s"), (41.2, "41 s"), (59.6, "1 min"), (3120, "52 min"), (7500, "2 h 5 min")],
)
def test_durations_read_in_seconds_minutes_and_hours(seconds, text):
    assert backfill.duration_text(seconds) == text


def test_progress_lines():
    # Two dates run so far, 40 s on average, 78 dates left: 52 minutes.
    assert (
        backfill.done_line(12, 90, dt.date(2026, 9, 12), [39.0, 41.0])
        == "date 12/90 2026-09-12 done in 41 s, eta 52 min"
    )
    assert backfill.done_line(90, 90, dt.date(2026, 11, 30), [41.0, 83.4]) == (
        "date 90/90 2026-11-30 done in 83 s"
    )


class FakeSpark:
    """Stands in for the session its run context is bound to."""


@pytest.fixture
def loop(monkeypatch, tmp_path, caplog):
    """backfill.run with its steps and clock replaced, each date run taking its day of
    the month in seconds."""
    spark, seen = FakeSpark(), []
    bind_context(spark, RunContext(run_date="before"))
    clock = iter([])

    def run_steps(spark_, config, run_date, steps):
        seen.append((run_date, run_context(spark_).run_date))
        if run_date == day(24):
            why = "boom"
            raise StepFailed(f"step replay failed for {run_date}: {why}", step="replay", reason=why)

    def run(dates, after=None):
        nonlocal clock
        clock = iter(t for d in dates for t in (0.0, float(d.day)))
        return backfill.run(spark, Config(warehouse=str(tmp_path)), dates, [], after=after)

    monkeypatch.setattr(backfill, "run_steps", run_steps)
    monkeypatch.setattr(backfill, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    caplog.set_level(logging.INFO, logger="fleet_rebalance.backfill")
    return run, spark, seen, caplog


def test_dates_run_in_order_with_the_eta_of_the_dates_run(loop):
    run, spark, seen, caplog = loop
    results = run([day(19), day(21), day(23)], after=lambda d: d.day)
    assert caplog.messages == [
        "date 1/3 2026-11-19 done in 19 s, eta 38 s",  # 19 s x 2
        "date 2/3 2026-11-21 done in 21 s, eta 20 s",  # (19 + 21) / 2 x 1
        "date 3/3 2026-11-23 done in 23 s",
    ]
    assert results == {day(19): 19, day(21): 21, day(23): 23}
    # Each date's commits name it; the session's run date is put back after.
    assert seen == [(d, d.isoformat()) for d in (day(19), day(21), day(23))]
    assert run_context(spark).run_date == "before"


def test_a_failing_date_stops_the_run_with_one_line_naming_it(loop):
    run, spark, seen, _ = loop
    with pytest.raises(StepFailed) as caught:
        run([day(23), day(24), day(25)])
    assert str(caught.value) == (
        "date 2/3 2026-11-24: step replay failed (the 1 date(s) before it are done; run the "
        "same command again to resume from 2026-11-24): boom"
    )
    assert [d for d, _ in seen] == [day(23), day(24)]
    assert run_context(spark).run_date == "before"
    with pytest.raises(StepFailed, match=r"^date 1/1 2026-11-24: step replay failed \(it is the "):
        run([day(24)])


def test_a_failing_report_is_named_as_the_dates_step(loop):
    run, *_ = loop

    def report(run_date):
        raise OSError("disk full")

    with pytest.raises(StepFailed, match=r"date 1/1 2026-11-23: step report failed .*: disk full$"):
        run([day(23)], after=report)
