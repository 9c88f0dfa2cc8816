"""What a parse task writes for one capture: typed Arrow batches per bronze table and a
summary per file. No Spark: this is the code inside the ingest's parse tasks."""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter
from pathlib import Path

import pyarrow as pa

from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches, parse_file
from fleet_rebalance.capture.result import GROUP_STATES, MEMBERS, OFFSETS, ParseResult
from fleet_rebalance.capture.schemas import TABLES
from fleet_rebalance.filesystems import location

SAMPLE = location(str(Path(__file__).resolve().parent.parent / "data" / "sample"))
DAY = dt.date(2026, 11, 20)
PATTERN = r"^(?P<cluster>[^/]+)/"


def unit(prefix: str) -> list[dict]:
    files = [f for f in store.discover(SAMPLE, PATTERN) if f.relative.startswith(prefix)]
    return [
        {"relative": f.relative, "cluster": f.cluster, "captured_at": f.captured_at, "group": None}
        for f in files
    ]


def run(files, parse) -> tuple[dict[str, list[pa.RecordBatch]], list[dict]]:
    batches: dict[str, list[pa.RecordBatch]] = {}
    summaries = []
    for table, out in capture_batches(files, parse, DAY):
        if table == FILE_REPORT:
            summaries.append(out)
        else:
            batches.setdefault(table, []).append(out)
    return batches, summaries


def test_one_capture_gives_typed_batches_and_a_summary_per_file():
    """Given the six files of one sample capture (the hour's first: the three group views,
    topics, brokers and log-dirs), Then every table's batches have the bronze schema,
    every file has a reconciling summary, and the summaries count exactly the rows
    written."""
    files = unit("prod-east/captures/2026-11-20T0900Z/")
    parse = functools.partial(parse_file, SAMPLE, path_pattern=PATTERN, log_timezone="UTC")
    batches, summaries = run(files, parse)
    assert set(batches) == {
        "offsets",
        "members",
        "group_states",
        "topic_partitions",
        "brokers",
        "partition_sizes",
    }
    for table, parts in batches.items():
        for batch in parts:
            assert batch.schema.remove_metadata().equals(TABLES[table]), table
    assert sorted(s["source_file"] for s in summaries) == sorted(f["relative"] for f in files)
    assert all(s["reconciles"] and s["status"] == "ok" for s in summaries)
    written = Counter({t: sum(b.num_rows for b in parts) for t, parts in batches.items()})
    counted: Counter[str] = Counter()
    for s in summaries:
        counted.update(s["table_rows"])
    assert counted == written
    members = pa.Table.from_batches(batches["members"])
    assert set(members["cluster"].to_pylist()) == {"prod-east"}
    assert set(members["capture_date"].to_pylist()) == {DAY}


def test_a_value_its_column_cannot_hold_is_quarantined_not_nulled():
    """Given a state row whose coordinator id is past 2^31, Then that row goes to
    quarantine with the reason, its line counts as quarantined, and the file's other
    row is written as parsed."""
    at = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)

    def parse(file):
        result = ParseResult(kind="state", lines=3, structural=1, row_lines=2)
        for line, coordinator in ((2, 2**31), (3, 7)):
            result.add(
                GROUP_STATES,
                {
                    "cluster": "c",
                    "group_id": f"g{line}",
                    "coordinator_id": coordinator,
                    "captured_at": at,
                    "capture_date": DAY,
                    "source_file": file["relative"],
                    "line_number": line,
                },
            )
        return result, "sha"

    files = [{"relative": "c/2026-11-20T0900Z/s.txt", "cluster": "c", "captured_at": at}]
    batches, [summary] = run(files, parse)
    states = pa.Table.from_batches(batches["group_states"])
    assert states["group_id"].to_pylist() == ["g3"]
    assert states["coordinator_id"].to_pylist() == [7]
    [quarantined] = pa.Table.from_batches(batches["quarantine"]).to_pylist()
    assert quarantined["line_number"] == 2
    assert quarantined["reason"].startswith("value out of range for the table's column types")
    assert (summary["parsed_lines"], summary["quarantined"], summary["rows"]) == (1, 1, 1)
    assert summary["table_rows"] == {"group_states": 1, "quarantine": 1}


def test_a_line_with_one_unfit_row_is_quarantined_with_all_its_rows():
    """Given a jsonl-like file whose line 1 gave a group_states, a members and an
    offsets row, the members row holding a value its column cannot hold, Then none of
    line 1's rows is written, in any table (a snapshot is never stored in part), and
    line 2's are. Expected: one quarantine row for line 1 naming the value."""
    at = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    common = {"cluster": "c", "captured_at": at, "capture_date": DAY}

    def parse(file):
        result = ParseResult(kind="jsonl", lines=2, row_lines=2, text_lines=["one", "two"])
        for line in (1, 2):
            row = {**common, "group_id": f"g{line}", "line_number": line}
            result.add(GROUP_STATES, {**row, "source_file": file["relative"]})
            result.add(OFFSETS, {**row, "topic": "t", "partition": 0, "lag": 5})
            epoch = 2**31 if line == 1 else 3
            result.add(MEMBERS, {**row, "consumer_id": "m", "member_epoch": epoch})
        return result, "sha"

    files = [{"relative": "c/2026-11-20T0900Z/g.jsonl", "cluster": "c", "captured_at": at}]
    batches, [summary] = run(files, parse)
    for table in (GROUP_STATES, OFFSETS, MEMBERS):
        rows = pa.Table.from_batches(batches[table]).to_pylist()
        assert [r["line_number"] for r in rows] == [2], table
    [quarantined] = pa.Table.from_batches(batches["quarantine"]).to_pylist()
    assert (quarantined["line_number"], quarantined["line"]) == (1, "one")
    assert "2147483648" in quarantined["reason"]
    assert (summary["parsed_lines"], summary["quarantined"], summary["rows"]) == (1, 1, 3)
