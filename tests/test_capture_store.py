"""capture/store/: listing, log sniffing and reading raw captures, locally and on S3
(moto). Spark-free."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from fleet_rebalance.capture import store
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN
from fleet_rebalance.capture.store import RawFile
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline.ingest_files import files_for, select

DAY = dt.date(2026, 11, 20)
OFFSETS = (
    "\nGROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID\n"
    "g1     t      0          10              12              2    -            -     -\n"
)
LOG_LINE = (
    "[2026-11-21 02:17:52,800] INFO [GroupCoordinator 3]: Stabilized group g1 generation 4 "
    "(__consumer_offsets-41) with 3 members (kafka.coordinator.group.GroupCoordinator)\n"
)
ODD = "prod east/captures/2026-11-20T0910Z"
TREE: dict[str, bytes] = {
    f"{ODD}/consumer-groups \"offsets\" 'q' #1 %41 été ü.txt": OFFSETS.encode(),
    f"{ODD}/consumer-groups-offsets.log": OFFSETS.encode(),
    "prod east/captures/2026-11-21T0100Z/consumer-groups-offsets.log": OFFSETS.encode(),
    "prod east/logs/brøker-1/broker.out.2026-11-21-02": (LOG_LINE * 2).encode(),
    "prod east/logs/broker-2/server.log.2026-11-19-23": (LOG_LINE * 2000).encode(),
    "prod east/logs/broker-2/server.log.2026-11-20-09": LOG_LINE.encode(),
    "prod east/logs/broker-2/broker.out": LOG_LINE.encode(),
    "prod east/captures/2026-11-22T0100Z/offsets.txt": OFFSETS.encode(),
    "west/captures/20261120T091000Z/big.jsonl": b'{"group": "g"}\n' * 200_000,
    "west/notes/readme.txt": b"no date here\n",
    "west/empty.txt": b"",
}
HIDDEN = [
    ".staging/2026-11-20T0910Z/offsets.txt",
    "prod east/.tmp/offsets.txt",
    "prod east/captures/.offsets.txt.partial",
]
# How the listing reports them: a hidden directory once, not entered.
HIDDEN_ENTRIES = {
    ".staging/": store.HIDDEN_DIRECTORY,
    "prod east/.tmp/": store.HIDDEN_DIRECTORY,
    "prod east/captures/.offsets.txt.partial": store.HIDDEN_FILE,
}


def write_tree(root: Path) -> Path:
    for relative, data in {**TREE, **{h: OFFSETS.encode() for h in HIDDEN}}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "raw root #1 %41")


def walk_as_before(root: Path) -> list[tuple[str, int]]:
    """The os.walk listing discover() replaced, for parity."""
    found = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if not name.startswith("."):
                path = Path(directory) / name
                found.append((path.relative_to(root).as_posix(), path.stat().st_size))
    return sorted(found)


def test_discover_lists_a_local_tree_as_os_walk_did(tree: Path):
    files = store.discover(location(str(tree)), DEFAULT_PATH_PATTERN)
    assert [(f.relative, f.size) for f in files] == walk_as_before(tree)
    assert [f.relative for f in files] == sorted(TREE)
    assert all(f.is_log is None for f in files)


def test_survey_reports_hidden_entries_instead_of_dropping_them(tree: Path):
    """Given a tree with a hidden file and two hidden directories, Then survey lists
    every readable file as discover does, plus one skipped entry per hidden name (a
    directory once, its contents not listed), with the reason."""
    entries = store.survey(location(str(tree)), DEFAULT_PATH_PATTERN)
    skipped = {f.relative: f.skipped for f in entries if f.skipped is not None}
    assert skipped == HIDDEN_ENTRIES
    assert [f for f in entries if f.skipped is None] == store.discover(
        location(str(tree)), DEFAULT_PATH_PATTERN
    )
    hidden_dated = next(f for f in entries if f.relative == ".staging/")
    assert hidden_dated.path_date is None and hidden_dated.size is None


def test_discover_takes_file_uris_and_refuses_a_missing_root(tree: Path):
    from_uri = store.discover(location(tree.as_uri()), DEFAULT_PATH_PATTERN)
    assert [f.relative for f in from_uri] == sorted(TREE)
    for missing in (tree / "nowhere", tree / "west" / "notes" / "readme.txt"):
        with pytest.raises(FileNotFoundError, match="no such directory"):
            store.discover(location(str(missing)), DEFAULT_PATH_PATTERN)


def test_symlinked_directories_are_not_entered(tree: Path):
    (tree / "west" / "up").symlink_to("..")  # a cycle: must neither hang nor repeat
    (tree / "west" / "alias").symlink_to(tree / "prod east")
    (tree / "west" / "offsets-link.txt").symlink_to(tree / ODD / "consumer-groups-offsets.log")
    files = store.discover(location(str(tree)), DEFAULT_PATH_PATTERN)
    assert [(f.relative, f.size) for f in files] == walk_as_before(tree)
    assert "west/offsets-link.txt" in {f.relative for f in files}
    skipped = {
        f.relative: f.skipped
        for f in store.survey(location(str(tree)), DEFAULT_PATH_PATTERN)
        if f.skipped is not None
    }
    assert skipped == {
        **HIDDEN_ENTRIES,
        "west/alias": store.LINK_TO_DIRECTORY,
        "west/up": store.LINK_TO_DIRECTORY,
    }


def test_the_path_is_parsed_once_at_discovery(tree: Path, monkeypatch: pytest.MonkeyPatch):
    calls = []
    parse = store.entries.parse_capture_path
    monkeypatch.setattr(
        store.entries, "parse_capture_path", lambda *a: calls.append(a) or parse(*a)
    )
    files = {f.relative: f for f in store.discover(location(str(tree)), DEFAULT_PATH_PATTERN)}
    assert len(calls) == len(TREE) + len(HIDDEN_ENTRIES)  # once per entry listed
    odd = files[f"{ODD}/consumer-groups-offsets.log"]
    assert (odd.cluster, odd.group) == ("prod east", None)
    assert odd.captured_at == dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
    assert files["west/notes/readme.txt"].path_date is None
    assert files["prod east/logs/broker-2/server.log.2026-11-19-23"].path_date == DAY.replace(
        day=19
    )


def test_a_pattern_may_name_the_group():
    pattern = r"^(?P<cluster>[^/]+)/(?P<group>[^/]+)/(?P<timestamp>[^/]+)/"
    raw = RawFile.at("east/billing/2026-11-20T09:10:00Z/members.txt", 3, pattern)
    assert (raw.cluster, raw.group, raw.path_date) == ("east", "billing", DAY)


def test_raw_files_pickle_small():
    raw = RawFile.at(f"{ODD}/consumer-groups-offsets.log", 10, DEFAULT_PATH_PATTERN)
    data = pickle.dumps(raw)
    assert pickle.loads(data) == raw
    assert len(data) < 400


def test_logs_are_known_by_content_and_only_neighbours_and_undated_are_sniffed(tree: Path):
    root = location(str(tree))
    files = store.survey(root, DEFAULT_PATH_PATTERN)
    kinds = {f.relative: f.is_log for f in store.with_log_kinds(root, files, DAY)}
    assert kinds == {
        relative: {
            "prod east/logs/brøker-1/broker.out.2026-11-21-02": True,
            "prod east/logs/broker-2/server.log.2026-11-19-23": True,
            "prod east/captures/2026-11-21T0100Z/consumer-groups-offsets.log": False,
            "prod east/logs/broker-2/broker.out": True,
            "west/notes/readme.txt": False,
            "west/empty.txt": False,
        }.get(relative)
        for relative in [*TREE, *HIDDEN_ENTRIES]
    }


def test_files_for_takes_the_day_undated_logs_and_neighbouring_logs(tree: Path):
    """Given the tree, Then the day's files are its captures, the logs dated a
    neighbour, and the logs with no date in their path; the undated files that are not
    logs are rejected (not captures of any date) and the hidden ones skipped."""
    root = location(str(tree))
    files = store.survey(root, DEFAULT_PATH_PATTERN)
    with pytest.raises(ValueError, match="with_log_kinds"):
        files_for(files, DAY)
    chosen = select(store.with_log_kinds(root, files, DAY), DAY)
    assert [f.relative for f in chosen.taken] == [
        f"{ODD}/consumer-groups \"offsets\" 'q' #1 %41 été ü.txt",
        f"{ODD}/consumer-groups-offsets.log",
        "prod east/logs/broker-2/broker.out",
        "prod east/logs/broker-2/server.log.2026-11-19-23",
        "prod east/logs/broker-2/server.log.2026-11-20-09",
        "prod east/logs/brøker-1/broker.out.2026-11-21-02",
        "west/captures/20261120T091000Z/big.jsonl",
    ]
    assert [f.relative for f in chosen.rejected] == ["west/empty.txt", "west/notes/readme.txt"]
    assert [f.relative for f in chosen.skipped] == sorted(HIDDEN_ENTRIES)  # all undated
    assert files_for(store.with_log_kinds(root, files, DAY), DAY) == chosen.taken


def test_decided_records_are_not_read_again(tree: Path, monkeypatch: pytest.MonkeyPatch):
    root = location(str(tree))
    files = store.with_log_kinds(root, store.discover(root, DEFAULT_PATH_PATTERN), DAY)
    monkeypatch.setattr(store.reading, "open_stream", lambda *a: pytest.fail(f"read again: {a}"))
    assert store.with_log_kinds(root, files, DAY) == files


@pytest.mark.parametrize(
    ("head", "complete", "expected"),
    [
        (LOG_LINE.encode(), True, True),
        (b"\n\n" + LOG_LINE.encode() + b"an unrelated stack trace line\n", True, True),
        (OFFSETS.encode(), True, False),
        ((LOG_LINE + OFFSETS).encode(), True, False),
        (b"", True, False),
        (b"\x00\x01\x02" * 100 + LOG_LINE.encode(), True, False),
        (LOG_LINE.encode() + b'{"cut', False, True),
        (b'{"group": "g"}\n', True, False),
    ],
)
def test_is_log_head(head: bytes, complete: bool, expected: bool):
    assert store.is_log_head(head, complete) is expected


def test_latest_capture_date_skips_days_with_only_logs(tree: Path):
    root = location(str(tree))
    files = store.discover(root, DEFAULT_PATH_PATTERN)
    assert store.latest_capture_date(root, files) == dt.date(2026, 11, 22)
    newest = [f for f in files if f.path_date != dt.date(2026, 11, 22)]
    newest = [f for f in newest if not f.relative.startswith("prod east/captures/2026-11-21")]
    assert store.latest_capture_date(root, newest) == DAY


def test_read_and_sha256_match_the_bytes(tree: Path):
    root = location(str(tree))
    for relative, data in TREE.items():
        assert store.read_capture(root, relative) == data
        assert store.sha256(root, relative) == hashlib.sha256(data).hexdigest()


def test_store_does_not_import_spark():
    code = "import sys, fleet_rebalance.capture.store; assert 'pyspark' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("prefix", ["", "raw/tree one"])
def test_an_s3_tree_reads_as_the_local_one(s3, tree: Path, prefix: str):
    bucket = f"captures-{len(prefix)}"
    s3.create_bucket(bucket)
    fs = s3.filesystem()
    for relative, data in {**TREE, **{h: OFFSETS.encode() for h in HIDDEN}}.items():
        with fs.open_output_stream(f"{bucket}/{prefix}/{relative}".replace("//", "/")) as out:
            out.write(data)
    remote = location(f"s3://{bucket}/{prefix}", s3.storage_options)
    local = location(str(tree))
    remote_files = store.with_log_kinds(remote, store.survey(remote, DEFAULT_PATH_PATTERN), DAY)
    local_files = store.with_log_kinds(local, store.survey(local, DEFAULT_PATH_PATTERN), DAY)
    assert remote_files == local_files
    assert store.latest_capture_date(remote, remote_files) == dt.date(2026, 11, 22)
    for relative in TREE:
        assert store.read_capture(remote, relative) == store.read_capture(local, relative)
        assert store.sha256(remote, relative) == store.sha256(local, relative)
    assert isinstance(remote.filesystem()[0], pafs.S3FileSystem)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        store.discover(remote.child("nowhere"), DEFAULT_PATH_PATTERN)


def test_a_compressed_copy_beside_its_plain_file_is_skipped(tmp_path: Path):
    """Given a capture holding consumer-groups-offsets.txt and its .gz copy (and a
    .zst of the members view beside it), and a .gz alone in another capture, Then the
    plain files are read and the copies skipped with the reason (their rows would be
    stored twice); the lone .gz is read. Expected: 2 skipped, the rest readable."""
    at = "lab/captures/2026-11-20T0900Z"
    for relative in (
        f"{at}/consumer-groups-offsets.txt",
        f"{at}/consumer-groups-offsets.txt.gz",
        f"{at}/consumer-groups-members.txt",
        f"{at}/consumer-groups-members.txt.ZST",
        "lab/captures/2026-11-20T0920Z/consumer-groups-offsets.txt.gz",
    ):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(OFFSETS.encode())
    found = {
        raw.relative: raw.skipped
        for raw in store.survey(location(str(tmp_path)), DEFAULT_PATH_PATTERN)
    }
    assert found == {
        f"{at}/consumer-groups-members.txt": None,
        f"{at}/consumer-groups-members.txt.ZST": (
            "a compressed copy of consumer-groups-members.txt beside it: one copy per "
            "capture, consumer-groups-members.txt is read"
        ),
        f"{at}/consumer-groups-offsets.txt": None,
        f"{at}/consumer-groups-offsets.txt.gz": (
            "a compressed copy of consumer-groups-offsets.txt beside it: one copy per "
            "capture, consumer-groups-offsets.txt is read"
        ),
        "lab/captures/2026-11-20T0920Z/consumer-groups-offsets.txt.gz": None,
    }
