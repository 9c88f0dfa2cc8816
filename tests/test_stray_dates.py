"""Rows dated away from their file's path date (issue 36 item 2): a log's lines of a
neighbouring date go to that date's run, every other row that no run would write is
quarantined by the run of the path's date with a `date mismatch` reason."""

from __future__ import annotations

import datetime as dt
import functools
import json
from pathlib import Path

import pyspark.sql.functions as F
import pytest

from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches, parse_file
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN, parse_capture_path
from fleet_rebalance.capture.stray_dates import mismatch_reason, quarantine_stray_dates
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline import ingest
from fleet_rebalance.storage import read_table

DAY = dt.date(2026, 11, 20)
LOG = "lab/logs/broker-3/server.log.2026-11-20-02"
UNDATED_LOG = "lab/logs/broker-3/server.log"
JSONL = "lab/captures/2026-11-20T0910Z/groups.jsonl"


def stabilized(day: str, generation: int) -> str:
    return (
        f"[{day} 02:35:03,800] INFO [GroupCoordinator 3]: Stabilized group g generation "
        f"{generation} (__consumer_offsets-41) with 4 members "
        "(kafka.coordinator.group.GroupCoordinator)"
    )


LOG_LINES = [
    stabilized("2026-11-17", 1),
    stabilized("2026-11-19", 2),
    stabilized("2026-11-20", 3),
    stabilized("2026-11-21", 4),
    stabilized("2026-11-23", 5),
]


def snapshot(group: str, captured_at: str) -> str:
    return json.dumps(
        {
            "group_id": group,
            "captured_at": captured_at,
            "state": "Stable",
            "members": [{"member_id": "m1", "assignment": [["t", 0]]}],
            "offsets": [{"topic": "t", "partition": 0, "current_offset": 1, "log_end_offset": 2}],
        }
    )


JSONL_LINES = [
    snapshot("on-time", "2026-11-20T09:10:00Z"),
    snapshot("far", "2026-11-23T09:10:00Z"),
    snapshot("before-midnight", "2026-11-19T23:59:59Z"),
]


@pytest.fixture
def raw_root(tmp_path: Path) -> Path:
    """A tiny raw_root: the log dated 11-20 by its name, the same log with no date in
    its name, and a jsonl capture under an 11-20 directory."""
    raw = tmp_path / "raw"
    for relative, lines in ((LOG, LOG_LINES), (UNDATED_LOG, LOG_LINES), (JSONL, JSONL_LINES)):
        (raw / relative).parent.mkdir(parents=True, exist_ok=True)
        (raw / relative).write_text("\n".join(lines) + "\n")
    return raw


def parsed(raw: Path, relative: str, run_date: dt.date) -> tuple[dict, dict]:
    """A parse task's output for one file: rows per table, and the file's summary."""
    path = parse_capture_path(relative, DEFAULT_PATH_PATTERN)
    file = {"relative": relative, "cluster": path.cluster, "captured_at": path.captured_at,
            "group": None}  # fmt: skip
    parse = functools.partial(
        parse_file, location(str(raw)), path_pattern=DEFAULT_PATH_PATTERN, log_timezone="UTC"
    )
    rows: dict[str, list[dict]] = {}
    reports = []
    for table, out in capture_batches([file], parse, run_date):
        if table == FILE_REPORT:
            reports.append(out)
        else:
            rows.setdefault(table, []).extend(out.to_pylist())
    (summary,) = reports
    assert summary["reconciles"]
    return rows, summary


def quarantined(rows: dict) -> list[tuple[int, str]]:
    return [(q["line_number"], q["reason"]) for q in rows.get("quarantine", [])]


def test_a_logs_far_lines_are_quarantined_by_its_path_dates_run(raw_root):
    """Given a log named for 11-20 with lines of 11-17, 11-19, 11-20, 11-21 and 11-23,
    Then the 11-20 run writes its 11-20 line, leaves 11-19 and 11-21 to their runs and
    quarantines 11-17 and 11-23; Expected: 1 event, 2 left for other dates, 2
    quarantined with the dates in the reason."""
    rows, summary = parsed(raw_root, LOG, DAY)
    assert [e["generation"] for e in rows["coordinator_events"]] == [3]
    assert summary["notes"] == {"rows of other dates": 2}
    assert quarantined(rows) == [
        (1, mismatch_reason(dt.date(2026, 11, 17), DAY, log=True)),
        (5, mismatch_reason(dt.date(2026, 11, 23), DAY, log=True)),
    ]
    assert rows["quarantine"][1]["line"] == LOG_LINES[4]
    assert quarantined(rows)[1][1] == (
        "date mismatch: logged 2026-11-23, more than a day from the path's date 2026-11-20 "
        "(a log is read only by the runs of 2026-11-20 and the days either side)"
    )
    assert (summary["lines"], summary["parsed_lines"], summary["quarantined_lines"]) == (5, 3, 2)
    assert (summary["status"], summary["rows"]) == ("ok", 1)


def test_a_neighbouring_run_writes_its_line_and_quarantines_nothing(raw_root):
    """Given the same log read by the 11-21 run (a neighbour of its path date), Then it
    writes the 11-21 line and leaves the rest (the 11-20 run quarantines the far ones);
    Expected: 1 event, 4 rows of other dates, no quarantine."""
    rows, summary = parsed(raw_root, LOG, dt.date(2026, 11, 21))
    assert [e["generation"] for e in rows["coordinator_events"]] == [4]
    assert summary["notes"] == {"rows of other dates": 4}
    assert quarantined(rows) == []


def test_a_log_without_a_date_in_its_name_has_no_stray_line(raw_root):
    """Given the log with no date in its path (every run reads it), Then nothing is
    quarantined: each line waits for its own date's run."""
    rows, summary = parsed(raw_root, UNDATED_LOG, DAY)
    assert [e["generation"] for e in rows["coordinator_events"]] == [3]
    assert (quarantined(rows), summary["notes"]) == ([], {"rows of other dates": 4})


def test_a_stray_log_line_is_shown_as_it_was_when_no_text_lines_are_kept():
    """Given the log's result without its text lines (a file parsed in chunks keeps
    none), Then the quarantined line is the one its event row carries."""
    result = parse_capture(LOG, ("\n".join(LOG_LINES) + "\n").encode())
    result.text_lines = []
    path_at = dt.datetime(2026, 11, 20, 2, tzinfo=dt.UTC)
    quarantine_stray_dates(result, path_at, DAY)
    assert [(q["line_number"], q["line"]) for q in result.quarantine] == [
        (1, LOG_LINES[0]),
        (5, LOG_LINES[4]),
    ]
    assert result.reconciles()


def test_a_jsonl_snapshot_of_another_date_than_its_path_is_quarantined(raw_root):
    """Given a jsonl capture under 2026-11-20T0910Z holding snapshots captured 11-20,
    11-23 and 11-19 23:59:59 (no run but 11-20's reads a capture), Then the 11-20 run
    writes the first and quarantines the other two; Expected: their reasons."""
    rows, summary = parsed(raw_root, JSONL, DAY)
    assert {r["group_id"] for t in ("group_states", "members", "offsets") for r in rows[t]} == {
        "on-time"
    }
    assert quarantined(rows) == [
        (2, mismatch_reason(dt.date(2026, 11, 23), DAY, log=False)),
        (3, mismatch_reason(dt.date(2026, 11, 19), DAY, log=False)),
    ]
    assert quarantined(rows)[0][1] == (
        "date mismatch: captured 2026-11-23, the path is dated 2026-11-20 (a capture is "
        "read only by the run of its path's date)"
    )
    assert (summary["status"], summary["notes"], summary["quarantined"]) == ("ok", {}, 2)


@pytest.mark.spark
def test_ingest_runs_write_every_line_once_or_quarantine_it(spark, raw_root, tmp_path):
    """Given the tiny raw_root ingested for 11-20 and 11-21, Then each log line of those
    dates is an event of its date's run, the lines no run writes are quarantined once
    (by 11-20's run), and a run of 11-23 still finds no capture of its own; Expected:
    generations 3 (11-20) and 4 (11-21), 4 quarantine rows of 11-20."""
    (raw_root / UNDATED_LOG).unlink()  # read by every run: not this test's subject
    config = Config(raw_root=str(raw_root), warehouse=str(tmp_path / "wh"))
    ingest.run(spark, config, DAY)
    ingest.run(spark, config, dt.date(2026, 11, 21))
    events = read_table(spark, config.table_path("coordinator_events"))
    assert sorted((r["log_date"], r["generation"]) for r in events.collect()) == [
        (DAY, 3),
        (dt.date(2026, 11, 21), 4),
    ]
    quarantine = read_table(spark, config.table_path("quarantine")).orderBy(
        "source_file", "line_number"
    )
    assert [
        (r["capture_date"], r["source_file"], r["line_number"], r["reason"].split(",")[0])
        for r in quarantine.collect()
    ] == [
        (DAY, JSONL, 2, "date mismatch: captured 2026-11-23"),
        (DAY, JSONL, 3, "date mismatch: captured 2026-11-19"),
        (DAY, LOG, 1, "date mismatch: logged 2026-11-17"),
        (DAY, LOG, 5, "date mismatch: logged 2026-11-23"),
    ]
    files = read_table(spark, config.table_path("ingested_files")).where(
        F.col("capture_date") == DAY
    )
    assert sorted((r["path"], r["status"], r["quarantined"]) for r in files.collect()) == [
        (JSONL, "ok", 2),
        (LOG, "ok", 2),
    ]
    with pytest.raises(FileNotFoundError, match="no capture files for 2026-11-23"):
        ingest.run(spark, config, dt.date(2026, 11, 23))
