"""A capture's files in the order its parse task reads them (issue 36 item 8, memory):
members files first, so what is kept of the offsets until the capture's end is only
what the members need; the rows are the same whatever the order or the files' content.
No Spark."""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa
from test_offsets_by_chunk import CAPTURE, DAY, PATTERN, _task, _views

from fleet_rebalance.capture import bronze_batches, store
from fleet_rebalance.capture.bronze_batches import capture_batches, parse_file, parse_file_parts
from fleet_rebalance.capture.enrichment_keys import OffsetsKept
from fleet_rebalance.capture.result import MEMBERS, OFFSETS
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline.ingest.tasks import head_kind, members_first


def _files(tmp_path: Path, named: dict[str, bytes]) -> list[dict]:
    directory = tmp_path / CAPTURE
    directory.mkdir(parents=True)
    for name, data in named.items():
        (directory / name).write_bytes(data)
    found = store.discover(location(str(tmp_path)), PATTERN)
    return [
        {"relative": f.relative, "cluster": f.cluster, "captured_at": f.captured_at, "group": None}
        for f in sorted(found, key=lambda f: f.relative)
    ]


class _Spy(OffsetsKept):
    """OffsetsKept that counts the owned-partition rows it keeps."""

    owned_rows = 0

    def add(self, offsets: pa.Table, owner_groups: pa.Array | None = None) -> None:
        before = sum(t.num_rows for t in self._owned)
        super().add(offsets, owner_groups)
        _Spy.owned_rows += sum(t.num_rows for t in self._owned) - before


def _parsers(tmp_path: Path):
    root = location(str(tmp_path))
    whole = functools.partial(parse_file, root, path_pattern=PATTERN, log_timezone="UTC")
    by_chunk = functools.partial(
        parse_file_parts, root, path_pattern=PATTERN, log_timezone="UTC", max_memory_mb=1
    )
    return root, whole, by_chunk


def test_members_are_read_first_and_offsets_keep_no_owners_they_need_not(tmp_path, monkeypatch):
    """Given a 3.6 capture whose offsets file sorts before its members file (members
    printed with topics: no group needs owned partitions), When the parse task orders
    it, Then the offsets file is read last, marked by its head, keeps no owned
    partition, and every table's rows and summary are the unordered whole parse's.
    Expected: equal outcomes, 0 owned rows kept (against > 0 unordered)."""
    offsets, members = _views(300, 12, "3.6")
    files = _files(tmp_path, {"a-offsets.txt": offsets, "b-members.txt": members})
    root, whole, by_chunk = _parsers(tmp_path)
    ordered = members_first(root, files)
    assert [f["relative"].rsplit("/", 1)[1] for f in ordered] == ["b-members.txt", "a-offsets.txt"]
    assert [f["head_kind"] for f in ordered] == [MEMBERS, OFFSETS]
    monkeypatch.setattr(bronze_batches, "OffsetsKept", _Spy)
    expected = _task(files, whole)
    assert _Spy.owned_rows > 0
    _Spy.owned_rows = 0
    assert _task(ordered, by_chunk) == expected
    assert _Spy.owned_rows == 0


def test_members_needing_owners_keep_theirs_and_the_same_rows(tmp_path):
    """Given a 3.9 capture (assignments printed without topics: owners needed), When
    it is read members first, in chunks, Then its rows are the unordered whole
    parse's and its members' assignments are completed. Expected: equal outcomes."""
    offsets, members = _views(300, 12, "3.9")
    files = _files(tmp_path, {"a-offsets.txt": offsets, "b-members.txt": members})
    root, whole, by_chunk = _parsers(tmp_path)
    rows, summaries = _task(members_first(root, files), by_chunk)
    assert (rows, summaries) == _task(files, whole)
    assert sum(r["assignment"] is not None for r in rows[MEMBERS]) == len(rows[MEMBERS]) - 1


def test_a_members_view_below_the_offsets_view_of_one_file_is_completed(tmp_path):
    """Given one file holding a 3.9 offsets view and then the members view of the same
    groups (its head shows offsets, so the owners were not kept while it was read),
    Then its offsets are read again for the groups its members need: each member's
    assignment is the one the two views in two files give. Expected: equal assignments."""
    offsets, members = _views(200, 12, "3.9")
    apart = _files(tmp_path / "apart", {"offsets.txt": offsets, "members.txt": members})
    together = _files(tmp_path / "together", {"both.txt": offsets + b"\n" + members})
    root = location(str(tmp_path / "together"))
    assert head_kind(root, together[0]["relative"]) == OFFSETS
    _, whole, _ = _parsers(tmp_path / "apart")
    _, _, by_chunk = _parsers(tmp_path / "together")

    def assignments(files, parse) -> dict:
        out = [b for t, b in capture_batches(files, parse, DAY) if t == MEMBERS]
        rows = [r for b in out for r in b.to_pylist()]
        return {(r["group_id"], r["consumer_id"]): r["assignment"] for r in rows}

    expected = assignments(apart, whole)
    assert len(expected) == 600 and sum(a is not None for a in expected.values()) == 599
    assert assignments(together, by_chunk) == expected


def test_a_single_file_and_an_unreadable_one_are_left_as_they_are(tmp_path):
    """Given a capture of one file, Then it is not opened to be ordered; given a file
    that cannot be read any more, Then its head shows no kind and it is read first
    (its parse reports why). Expected: the same list; None; unreadable file first."""
    offsets, members = _views(3, 4, "3.6")
    files = _files(tmp_path, {"a-offsets.txt": offsets, "b-members.txt": members})
    root = location(str(tmp_path))
    assert members_first(root, files[:1]) == files[:1]
    (tmp_path / files[1]["relative"]).unlink()
    ordered = members_first(root, files)
    assert head_kind(root, files[1]["relative"]) is None
    assert [f["head_kind"] for f in ordered] == [None, OFFSETS]
