"""Backfill's rules without Spark: which dates a span runs and which days it names as
missing, the progress lines and their eta, the loop's order, skips and failure line, and
when a date counts as complete for the same inputs."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

import fleet_rebalance
from fleet_rebalance.cli import DateSpan, JobFailed
from fleet_rebalance.config import Config, MetricsConfig
from fleet_rebalance.date_span import bronze_span, capture_span, span_dates
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline import backfill, run_inputs, runs
from fleet_rebalance.pipeline.ingest_files import select
from fleet_rebalance.pipeline.nightly import StepFailed
from fleet_rebalance.storage.engine import RUN_DATE_KEY


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
    assert backfill.skipped_line(3, 90, dt.date(2026, 9, 3)) == (
        "date 3/90 2026-09-03 complete for the same inputs, skipped"
    )


class FakeConf(dict):
    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value):
        self[key] = value


class FakeSpark:
    def __init__(self) -> None:
        self.conf = FakeConf({RUN_DATE_KEY: "before"})


@pytest.fixture
def loop(monkeypatch, tmp_path, caplog):
    """backfill.run with its steps, completeness and clock replaced: dates 20 and 22
    complete, each date run taking its day of the month in seconds."""
    spark, seen = FakeSpark(), []
    complete, clock = {day(20), day(22)}, iter([])

    def run_steps(spark_, config, run_date, steps, assignors=None):
        seen.append((run_date, spark_.conf.get(RUN_DATE_KEY)))
        if run_date == day(24):
            why = "boom"
            raise StepFailed(f"step replay failed for {run_date}: {why}", step="replay", reason=why)

    class Complete:
        def __init__(self, *args) -> None:
            pass

        def complete(self, run_date):
            return run_date in complete

        def ran(self, run_date):
            pass

    def run(dates, after=None):
        nonlocal clock
        clock = iter(t for d in dates if d not in complete for t in (0.0, float(d.day)))
        return backfill.run(spark, Config(warehouse=str(tmp_path)), dates, [], after=after)

    monkeypatch.setattr(backfill, "run_steps", run_steps)
    monkeypatch.setattr(backfill, "_Completeness", Complete)
    monkeypatch.setattr(backfill, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    caplog.set_level(logging.INFO, logger="fleet_rebalance.backfill")
    return run, spark, seen, caplog


def test_dates_run_in_order_and_the_eta_counts_only_dates_run(loop):
    run, spark, seen, caplog = loop
    results = run([day(19), day(20), day(21), day(22), day(23)], after=lambda d: d.day)
    assert caplog.messages == [
        "date 1/5 2026-11-19 done in 19 s, eta 1 min",  # 19 s x 4
        "date 2/5 2026-11-20 complete for the same inputs, skipped",
        "date 3/5 2026-11-21 done in 21 s, eta 40 s",  # (19 + 21) / 2 x 2
        "date 4/5 2026-11-22 complete for the same inputs, skipped",
        "date 5/5 2026-11-23 done in 23 s",
    ]
    assert results == {day(19): 19, day(21): 21, day(23): 23}
    # Each date's commits name it; the session's run date is put back after.
    assert seen == [(d, d.isoformat()) for d in (day(19), day(21), day(23))]
    assert spark.conf.get(RUN_DATE_KEY) == "before"


def test_a_failing_date_stops_the_run_with_one_line_naming_it(loop):
    run, spark, seen, _ = loop
    with pytest.raises(StepFailed) as caught:
        run([day(23), day(24), day(25)])
    assert str(caught.value) == (
        "date 2/3 2026-11-24: step replay failed (the 1 date(s) before it are done; run the "
        "same command again to resume from 2026-11-24): boom"
    )
    assert [d for d, _ in seen] == [day(23), day(24)]
    assert spark.conf.get(RUN_DATE_KEY) == "before"
    with pytest.raises(StepFailed, match=r"^date 1/1 2026-11-24: step replay failed \(it is the "):
        run([day(24)])


def test_a_failing_report_is_named_as_the_dates_step(loop):
    run, *_ = loop

    def report(run_date):
        raise OSError("disk full")

    with pytest.raises(StepFailed, match=r"date 1/1 2026-11-23: step report failed .*: disk full$"):
        run([day(23)], after=report)


# --- complete for the same inputs ---------------------------------------------------


def test_the_code_version_is_the_version_and_a_hash_of_the_source():
    version = run_inputs.code_version()
    name, _, digest = version.partition("+")
    assert name == fleet_rebalance.__version__
    assert len(digest) == 16 and int(digest, 16) >= 0
    run_inputs.code_version.cache_clear()
    assert run_inputs.code_version() == version


def test_the_ingest_digest_of_raw_files_is_the_one_of_their_recorded_rows(tmp_path):
    """What a backfill computes from raw_root before running ingest is what it computes
    from the ingested_files rows ingest writes for the same files."""
    one = capture(tmp_path, "c1/2026-11-20T0910Z/offsets.txt", "a\n")
    two = capture(tmp_path, "c1/2026-11-20T1010Z/members.txt", "bb\n")
    capture(tmp_path, "c1/2026-11-21T0010Z/offsets.txt")  # another date
    capture(tmp_path, "c1/2026-11-20T1110Z/.partial")  # hidden: recorded, never read
    root = location(str(tmp_path))
    from fleet_rebalance.capture import store

    files = store.survey(root, Config().capture.path_pattern)
    chosen = select(store.with_log_kinds(root, files, day(20)), day(20))
    from_raw = run_inputs.files_digest(
        run_inputs.raw_entries(root, chosen, Config().capture.path_pattern)
    )
    rows = [
        {"path": "c1/2026-11-20T1110Z/.partial", "size": None, "sha256": None}
        | {"status": "skipped", "reason": store.HIDDEN_FILE},
        {"path": "c1/2026-11-20T1010Z/members.txt", "size": 3, "status": "ok", "reason": None}
        | {"sha256": hashlib.sha256(two.read_bytes()).hexdigest()},
        {"path": "c1/2026-11-20T0910Z/offsets.txt", "size": 2, "status": "ok", "reason": None}
        | {"sha256": hashlib.sha256(one.read_bytes()).hexdigest()},
    ]
    assert run_inputs.files_digest(map(run_inputs.recorded_entry, rows)) == from_raw
    rows[1]["sha256"] = "0" * 64
    assert run_inputs.files_digest(map(run_inputs.recorded_entry, rows)) != from_raw


STEPS = [runs.INGEST, runs.REPLAY, runs.METRICS]
ASSIGNORS = ["range", "sticky", "observed"]


def records_of(files, config=None, assignors=ASSIGNORS):
    """The records nightlies of the 20th and 21st write on ingest digests `files`."""
    found = {}
    for run_date in (day(20), day(21)):
        inputs = runs.expected(STEPS, run_date, files, None, config or Config(), assignors)
        code = run_inputs.code_version()
        found |= {(run_date, step): runs.Record(inputs[step], code) for step in STEPS}
    return found


def complete(files, records, steps=STEPS, config=None, assignors=ASSIGNORS):
    """Per date of the records: whether `steps` are complete on `files` now."""
    result = {}
    for run_date in sorted({d for d, _ in records}):
        inputs = runs.expected(
            steps,
            run_date,
            files,
            records.get((run_date, runs.REPLAY)),
            config or Config(),
            assignors,
        )
        result[run_date] = runs.complete(steps, run_date, inputs, records)
    return result


def files_of(shas: dict[dt.date, str]) -> dict[dt.date, str]:
    """The ingest digests of dates of one file each, that file's sha256 as given."""
    row = {"size": 10, "status": "ok", "reason": None}
    return {
        d: run_inputs.files_digest(
            [run_inputs.recorded_entry(row | {"path": f"c1/{d}T0100Z/o.txt", "sha256": sha})]
        )
        for d, sha in shas.items()
    }


SHAS = {day(19): "1" * 64, day(20): "2" * 64, day(21): "3" * 64}
FILES = files_of(SHAS)


def test_the_same_inputs_are_complete():
    assert complete(FILES, records_of(FILES)) == {day(20): True, day(21): True}


def test_a_changed_file_invalidates_its_date_and_the_next_ones_replay_and_metrics():
    records = records_of(FILES)
    changed = files_of({**SHAS, day(20): "f" * 64})
    assert complete(changed, records) == {day(20): False, day(21): False}
    for step in (runs.REPLAY, runs.METRICS):
        assert complete(changed, records, [step]) == {day(20): False, day(21): False}
    # Ingest of the next date ran on its own files, which did not change.
    assert complete(changed, records, [runs.INGEST]) == {day(20): False, day(21): True}


def test_a_changed_day_before_invalidates_only_the_first_dates_replay():
    changed = files_of({**SHAS, day(19): "f" * 64})
    assert complete(changed, records_of(FILES)) == {day(20): False, day(21): True}


def test_other_code_assignors_or_metrics_conf_are_not_the_same_inputs(monkeypatch):
    records = records_of(FILES)
    fewer = complete(FILES, records, assignors=["range"])
    assert fewer == {day(20): False, day(21): False}
    assert complete(FILES, records, [runs.INGEST], assignors=["range"]) == {
        day(20): True,
        day(21): True,
    }
    other = Config(metrics=MetricsConfig(burrow_intervals=5))
    assert complete(FILES, records, config=other) == {day(20): False, day(21): False}
    assert complete(FILES, records, [runs.INGEST, runs.REPLAY], config=other) == {
        day(20): True,
        day(21): True,
    }
    monkeypatch.setattr(run_inputs, "code_version", lambda: "0.1.0+another")
    assert complete(FILES, records, [runs.INGEST]) == {day(20): False, day(21): False}


def test_metrics_follows_the_replay_recorded_for_its_date():
    records = records_of(FILES)
    rerun = runs.expected([runs.REPLAY], day(20), FILES, None, Config(), ["range"])
    records[(day(20), runs.REPLAY)] = runs.Record(rerun[runs.REPLAY], run_inputs.code_version())
    assert complete(FILES, records, [runs.METRICS]) == {day(20): False, day(21): True}
