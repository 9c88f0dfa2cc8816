"""An offsets file parsed in chunks has its bronze rows written a chunk at a time (issue
36 item 8, bounded memory): the parse task's batches, quarantine and ingested_files
accounting are the whole-file parse's, and the capture's members are completed from
its offsets as before. No Spark."""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_members_enrichment import captures

from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import (
    FILE_REPORT,
    capture_batches,
    parse_file,
    parse_file_parts,
)
from fleet_rebalance.capture.chunks import Budget
from fleet_rebalance.capture.enrichment_keys import OffsetsKept
from fleet_rebalance.capture.members_enrichment import MEMBERS_SCHEMA, CaptureOffsets
from fleet_rebalance.capture.result import FAILED_CAPTURE, MEMBERS, OFFSETS
from fleet_rebalance.filesystems import location
from fleet_rebalance.generate.render import GroupView, MemberView, members_view, offsets_view

DAY = dt.date(2026, 11, 20)
AT = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
CAPTURE = "prod-east/captures/2026-11-20T0900Z"
PATTERN = r"^(?P<cluster>[^/]+)/"
CHUNKS_NOTE = re.compile(r"(; )?parsed in chunks of \d+ characters: 1")


def _views(groups: int, partitions: int, version: str) -> tuple[bytes, bytes]:
    """An offsets and a members capture of the same groups; 3.9 members print their
    assignment without topics, so only the offsets view completes it."""
    rng = random.Random(36)
    views = []
    for g in range(groups):
        members = [
            MemberView(f"consumer-g{g}-{m}-{rng.getrandbits(32):08x}", None, "/10.0.0.1", "c", [])
            for m in range(3)
        ]
        offsets = {}
        for p in range(partitions):
            tp = (f"topic-{g % 5}", p)
            members[p % 3].partitions.append(tp)
            end = rng.randint(10**6, 10**9)
            offsets[tp] = (end - rng.randint(0, 10**4), end)
        views.append(GroupView(f"group-{g}", "Stable", "range", ("k:9092", 1), members, offsets))
    offsets_text = offsets_view(views, version).encode()
    lines = offsets_text.split(b"\n")
    lines[len(lines) // 2] = b"group-x topic-1 five 1 2 3 - - -"  # a quarantined row
    return b"\n".join(lines), members_view(views, version).encode()


def _capture(tmp_path: Path, groups: int, partitions: int) -> list[dict]:
    offsets, members = _views(groups, partitions, "3.9")
    directory = tmp_path / CAPTURE
    directory.mkdir(parents=True)
    (directory / "consumer-groups-offsets.txt").write_bytes(offsets)
    (directory / "consumer-groups-members.txt").write_bytes(members)
    assert len(offsets) > 1 << 20 > 10 * Budget.of(1).chunk_chars
    return [
        {"relative": f.relative, "cluster": f.cluster, "captured_at": f.captured_at, "group": None}
        for f in store.discover(location(str(tmp_path)), PATTERN)
    ]


def _task(files: list[dict], parse) -> tuple[dict[str, list[dict]], dict[str, dict]]:
    """Every table's rows as the sinks get them, in line order, and each file's summary
    but its notes (a chunked parse notes its chunks, in the reason too)."""
    rows: dict[str, list[dict]] = {}
    summaries = {}
    for table, out in capture_batches(files, parse, DAY):
        if table == FILE_REPORT:
            summary = {k: v for k, v in out.items() if k != "notes"}
            summary["reason"] = CHUNKS_NOTE.sub("", summary["reason"] or "")
            summaries[out["source_file"]] = summary
        else:
            assert isinstance(out, pa.RecordBatch)
            rows.setdefault(table, []).extend(out.to_pylist())
    for table_rows in rows.values():
        table_rows.sort(key=lambda r: (r["source_file"], r["line_number"] or 0, str(r)))
    return rows, summaries


@pytest.mark.parametrize(
    ("groups", "partitions"),
    [(900, 40), (2, 6000)],  # many blocks per chunk; one block longer than a chunk
)
def test_an_offsets_file_written_by_chunk_gives_the_whole_files_bronze_rows(
    tmp_path, groups, partitions
):
    """Given a capture of a ~1.5-5 MB offsets file (a quarantined row) and its 3.9
    members file, When the parse task writes the offsets a chunk at a time
    (max_memory_mb=1: chunks of ~87,000 characters, one per 1 MiB read), Then every
    table's rows, the quarantine and each file's summary are those of the whole-file
    parse, and the members' topic-less assignments are completed from the offsets all
    the same. Expected: equal outcomes."""
    files = _capture(tmp_path, groups, partitions)
    root = location(str(tmp_path))
    whole = functools.partial(parse_file, root, path_pattern=PATTERN, log_timezone="UTC")
    by_chunk = functools.partial(
        parse_file_parts, root, path_pattern=PATTERN, log_timezone="UTC", max_memory_mb=1
    )
    chunked_parts = by_chunk(files[1] if "offsets" in files[1]["relative"] else files[0])
    assert sum(1 for _ in chunked_parts) >= 2  # the file is handed out in parts
    expected_rows, expected_files = _task(files, whole)
    rows, summaries = _task(files, by_chunk)
    assert summaries == expected_files
    assert rows == expected_rows
    offsets_file = next(s for s in summaries.values() if s["kind"] == OFFSETS)
    assert offsets_file["reconciles"] and offsets_file["quarantined"] == 1
    assert offsets_file["table_rows"][OFFSETS] == len(rows[OFFSETS]) > 0
    # Completed from the offsets, but for the member whose offsets row was replaced.
    assert sum(r["assignment"] is None for r in rows[MEMBERS]) == 1 < len(rows[MEMBERS])


def test_reading_that_fails_after_rows_were_written_says_so(tmp_path, monkeypatch):
    """Given an offsets file whose reading fails after a few chunks were written, Then
    its summary counts the rows written and the lines read, status failed_capture, and
    a whole-file quarantine row names the failure. Expected: reconciling accounting."""
    files = [f for f in _capture(tmp_path, 900, 40) if "offsets" in f["relative"]]
    real = store.open_capture

    class Failing:
        def __init__(self, stream) -> None:
            self.stream, self.read_bytes = stream, 0

        def read(self, size: int = -1) -> bytes:
            if self.read_bytes > 2 << 20:
                raise OSError(5, "Input/output error")
            data = self.stream.read(size)
            self.read_bytes += len(data)
            return data

        def __getattr__(self, name: str):
            return getattr(self.stream, name)

    def failing(raw_root, relative):
        manager = real(raw_root, relative)

        class Wrapped:
            def __enter__(self):
                return Failing(manager.__enter__())

            def __exit__(self, *exc):
                return manager.__exit__(*exc)

        return Wrapped()

    monkeypatch.setattr(store, "open_capture", failing)
    parse = functools.partial(
        parse_file_parts,
        location(str(tmp_path)),
        path_pattern=PATTERN,
        log_timezone="UTC",
        max_memory_mb=1,
    )
    out = list(capture_batches(files, parse, DAY))
    written = sum(b.num_rows for t, b in out if t == OFFSETS)
    (summary,) = [s for t, s in out if t == FILE_REPORT]
    assert written > 0
    assert summary["status"] == FAILED_CAPTURE
    assert summary["table_rows"] == {OFFSETS: written, "quarantine": 1}
    assert summary["rows"] == written
    assert summary["reconciles"] and 0 < summary["lines"] < 50_000
    assert summary["reason"].startswith("reading failed mid-way")
    assert summary["notes"]["rows written before reading failed"] == written


@settings(max_examples=200, derandomize=True, deadline=None)
@given(capture=captures(), cut=st.integers(0, 12))
def test_what_is_kept_of_written_offsets_enriches_members_as_the_whole_rows(capture, cut):
    """Given offsets rows added to OffsetsKept in two pieces, and members rows, Then the
    members are enriched exactly as from CaptureOffsets of all the rows. Expected:
    equal tables (the rules: test_members_enrichment)."""
    offsets, members = capture
    table = pa.Table.from_pylist(members, schema=MEMBERS_SCHEMA)
    kept = OffsetsKept()
    for piece in (offsets[:cut], offsets[cut:]):
        if piece:
            kept.add(pa.Table.from_pylist(piece))
    whole = CaptureOffsets.of([pa.Table.from_pylist(offsets)] if offsets else [])
    assert kept.capture([table]).enrich(table).equals(whole.enrich(table))
