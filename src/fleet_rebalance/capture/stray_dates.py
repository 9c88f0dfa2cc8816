"""Rows that no run would write: dated away from their file's path date (issue 36).

A run of date D parses the files whose path is dated D and the broker logs whose path
is dated D-1 or D+1 (pipeline/ingest_files.py), and writes only its own date's rows: a
log's lines of a neighbouring date go to that date's run, which reads the log too. Any
other row would be left out by every run that reads its file ("rows of other dates")
and so never be written, without a word: a log line dated more than a day from its
path's date, a jsonl snapshot whose `captured_at` is of another date than its path.
The run of the path's date quarantines those lines with a `date mismatch` reason; the
other runs reading a log leave them, as they leave every row of another date. A log
with no date in its path is read by every run, so none of its rows is stray. A jsonl
snapshot is checked by its parser (capture/jsonl.py), which has its line at hand: a
file parsed in chunks keeps no text lines; a log row carries its line.

Example, a log under 2026-11-20: its lines of 11-19, 11-20 and 11-21 are written by
those dates' runs; a line of 11-23 is quarantined by the 11-20 run. A jsonl file under
2026-11-20 holding a snapshot captured 2026-11-19T23:59Z: quarantined by the 11-20 run
(a run of 11-19 never reads a capture dated 11-20).
"""

from __future__ import annotations

import datetime as dt

from fleet_rebalance.capture.result import ParseResult

LOG_KIND = "coordinator_log"  # read by its neighbouring dates' runs too
LOG_REACH_DAYS = 1


def quarantine_stray_dates(
    result: ParseResult, path_at: dt.datetime | None, run_date: dt.date
) -> None:
    """Move the rows no run writes to quarantine, in the run of the path's date
    (`path_at`: the capture time the path gives, None when it has none)."""
    path_date = _utc_date(path_at)
    if path_date is None or path_date != run_date:
        return
    reach = LOG_REACH_DAYS if result.kind == LOG_KIND else 0
    stray: dict[dt.date, dict[int, str]] = {}
    for rows in result.rows.values():
        for row in rows:
            date, number = row.get("log_date") or row.get("capture_date"), row.get("line_number")
            if date is None or number is None or abs((date - path_date).days) <= reach:
                continue
            line = row.get("line") or _text_line(result, number)
            stray.setdefault(date, {})[number] = line
    for date, lines in sorted(stray.items()):
        result.quarantine_lines(lines, mismatch_reason(date, path_date, log=bool(reach)))


def mismatch_reason(date: dt.date, path_date: dt.date, *, log: bool) -> str:
    if log:
        return (
            f"date mismatch: logged {date}, more than a day from the path's date "
            f"{path_date} (a log is read only by the runs of {path_date} and the days "
            "either side)"
        )
    return (
        f"date mismatch: captured {date}, the path is dated {path_date} (a capture is "
        f"read only by the run of its path's date)"
    )


def _text_line(result: ParseResult, number: int) -> str:
    return result.text_lines[number - 1] if number <= len(result.text_lines) else ""


def _utc_date(at: dt.datetime | None) -> dt.date | None:
    if at is None:
        return None
    return (at.astimezone(dt.UTC) if at.tzinfo else at).date()
