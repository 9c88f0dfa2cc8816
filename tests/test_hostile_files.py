"""Hostile entries under raw_root (issue 19): a FIFO, an unreadable file, symbolic links
that loop, dangle or lead out of raw_root, a name that is not UTF-8, hidden entries and
invalid path timestamps. Each is reported with its status and reason, nothing blocks,
and the good files are read as if the others were not there. Listing, selection and
the parse tasks' reads without Spark; then one ingest end to end."""

from __future__ import annotations

import datetime as dt
import errno
import functools
import io
import logging
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable

from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches, parse_file
from fleet_rebalance.capture.paths import SPELLINGS, parse_capture_path, timestamp_problem
from fleet_rebalance.capture.result import FAILED_CAPTURE, REJECTED, SKIPPED
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline import bronze, ingest
from fleet_rebalance.pipeline.ingest_files import select
from fleet_rebalance.storage import read_table
from fleet_rebalance.storage.warehouse import Warehouse

PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "tests" / "data" / "fleet_v1"
PATTERN = r"^(?P<cluster>[^/]+)/"
DAY = dt.date(2026, 11, 20)
CAPTURES = "prod-east/captures"
# One cluster's two captures of data/sample: the good files.
GOOD = sorted(
    f"{CAPTURES}/{stamp}/{name}"
    for stamp, names in {
        "2026-11-20T0240Z": ["consumer-groups-offsets.txt", "consumer-groups-members.txt"],
        "2026-11-20T0500Z": ["consumer-groups-offsets.txt", "consumer-groups-state.txt"],
    }.items()
    for name in names
)
OFFSETS = f"{CAPTURES}/2026-11-20T0240Z/consumer-groups-offsets.txt"
SECRET = "SECRET-OUTSIDE-RAW-ROOT"
# Each hostile entry as ingested_files shows it: path -> (status, reason or a part of it).
FIFO = f"{CAPTURES}/2026-11-20T0300Z/consumer-groups-offsets.txt"
UNREADABLE = f"{CAPTURES}/2026-11-20T0320Z/consumer-groups-offsets.txt"
HOSTILE: dict[str, tuple[str, str]] = {
    FIFO: (SKIPPED, "not a regular file (a FIFO): never opened"),
    UNREADABLE: (SKIPPED, store.UNREADABLE),
    f"{CAPTURES}/2026-11-20T0340Z/loop-a.txt": (SKIPPED, store.LINK_LOOP),
    f"{CAPTURES}/2026-11-20T0340Z/loop-b.txt": (SKIPPED, store.LINK_LOOP),
    f"{CAPTURES}/2026-11-20T0400Z/consumer-groups-state.txt": (SKIPPED, store.LINK_DANGLING),
    f"{CAPTURES}/2026-11-20T0420Z/consumer-groups-members.txt": (SKIPPED, store.LINK_OUTSIDE),
    f"{CAPTURES}/2026-11-20T0420Z/passwd.txt": (SKIPPED, store.LINK_OUTSIDE),
    f"{CAPTURES}/2026-11-20T0240Z/\\xff-offsets.txt": (SKIPPED, store.UNDECODABLE_NAME),
    f"{CAPTURES}/2026-11-20T0240Z/.consumer-groups-state.txt.partial": (
        SKIPPED,
        store.HIDDEN_FILE,
    ),
    f"{CAPTURES}/.2026-11-20T0500Z/": (SKIPPED, store.HIDDEN_DIRECTORY),
    f"{CAPTURES}/2026-11-20T2500Z/consumer-groups-offsets.txt": (
        REJECTED,
        "'2026-11-20T2500Z' is not a valid time (hour must be in 0..23)",
    ),
    f"{CAPTURES}/9999-12-31T23:59:59-01:00/consumer-groups-state.txt": (
        REJECTED,
        "'9999-12-31T23:59:59-01:00' is not a valid time (date value out of range)",
    ),
}
RUNNING_AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def build_tree(root: Path, *, hostile: bool) -> Path:
    """The good files; with `hostile`, every hostile entry beside them (and, outside
    raw_root, a file that looks like a capture for the link out to point at)."""
    for relative in GOOD:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / relative, root / relative)
    if not hostile:
        return root
    captures = root / CAPTURES
    for stamp in ("2026-11-20T0300Z", "2026-11-20T0320Z", "2026-11-20T0340Z", "2026-11-20T0400Z"):
        (captures / stamp).mkdir()
    os.mkfifo(root / FIFO)  # no writer ever: opening it would block for good
    shutil.copy(SAMPLE / OFFSETS, root / UNREADABLE)
    (root / UNREADABLE).chmod(0)
    (captures / "2026-11-20T0340Z" / "loop-a.txt").symlink_to("loop-b.txt")
    (captures / "2026-11-20T0340Z" / "loop-b.txt").symlink_to("loop-a.txt")
    (captures / "2026-11-20T0400Z" / "consumer-groups-state.txt").symlink_to("missing.txt")
    outside = root.parent / f"{root.name}-outside" / "members.txt"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text((SAMPLE / OFFSETS).read_text().replace("audit-enricher-5", SECRET))
    (captures / "2026-11-20T0420Z").mkdir()
    (captures / "2026-11-20T0420Z" / "consumer-groups-members.txt").symlink_to(outside)
    (captures / "2026-11-20T0420Z" / "passwd.txt").symlink_to("/etc/passwd")
    undecodable = os.path.join(os.fsencode(captures / "2026-11-20T0240Z"), b"\xff-offsets.txt")
    shutil.copy(SAMPLE / OFFSETS, undecodable)
    shutil.copy(
        SAMPLE / OFFSETS, captures / "2026-11-20T0240Z" / ".consumer-groups-state.txt.partial"
    )
    (captures / ".2026-11-20T0500Z").mkdir()
    shutil.copy(SAMPLE / OFFSETS, captures / ".2026-11-20T0500Z" / "consumer-groups-offsets.txt")
    for stamp in ("2026-11-20T2500Z", "9999-12-31T23:59:59-01:00"):
        (captures / stamp).mkdir()
    shutil.copy(SAMPLE / OFFSETS, captures / "2026-11-20T2500Z" / "consumer-groups-offsets.txt")
    shutil.copy(
        SAMPLE / f"{CAPTURES}/2026-11-20T0240Z/consumer-groups-state.txt",
        captures / "9999-12-31T23:59:59-01:00" / "consumer-groups-state.txt",
    )
    return root


def unreadable_as_root(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """chmod 000 does not stop root from reading: there, the listing's permission check
    is told what it would find as any other user."""
    if RUNNING_AS_ROOT:
        denied = str(root / UNREADABLE)
        permitted = store.local_checks.permitted
        monkeypatch.setattr(
            store.local_checks, "permitted", lambda path: path != denied and permitted(path)
        )


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = build_tree(tmp_path / "raw", hostile=True)
    unreadable_as_root(monkeypatch, root)
    return root


def bounded(call: Callable[[], Any], timeout_s: float = 60) -> Any:
    """call() in a daemon thread: a call blocked on a FIFO fails the test instead of
    hanging it (and the thread cannot keep the interpreter alive)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), f"still blocked after {timeout_s}s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_the_listing_reports_every_hostile_entry_without_opening_it(tree: Path):
    """Given the good files and every hostile entry, Then the listing returns at once
    (the FIFO has no writer: opening it would block for good), reports each skipped
    entry with its reason and each good file as it is, and reads nothing outside."""
    entries = {
        raw.relative: raw for raw in bounded(lambda: store.survey(location(str(tree)), PATTERN))
    }
    skipped = {path: raw.skipped for path, raw in entries.items() if raw.skipped is not None}
    assert skipped == {p: why for p, (status, why) in HOSTILE.items() if status == SKIPPED}
    readable = sorted(path for path, raw in entries.items() if raw.skipped is None)
    invalid = [p for p, (status, _) in HOSTILE.items() if status == REJECTED]
    assert readable == sorted([*GOOD, *invalid])
    for relative in GOOD:
        raw = entries[relative]
        assert (raw.size, raw.cluster) == ((SAMPLE / relative).stat().st_size, "prod-east")
        assert raw.path_date == DAY
    assert entries[FIFO].path_date == DAY  # recorded for its own date


def test_every_read_refuses_what_the_listing_skipped(tree: Path):
    """Given the skipped entries, Then sniffing, hashing and reading each is refused at
    once with the listing's reason (the entry is checked again at every read)."""
    root = location(str(tree))
    for relative, (status, why) in HOSTILE.items():
        if status != SKIPPED or relative.endswith("/") or "\\x" in relative:
            continue  # directories and escaped names are never read by their path
        for read in (store.read_capture, store.sha256):
            with pytest.raises(store.UnreadableFile) as refused:
                bounded(functools.partial(read, root, relative))
            assert (refused.value.reason, refused.value.status) == (why, SKIPPED), relative
        raw = store.RawFile.at(relative, 0, PATTERN)
        assert bounded(lambda raw=raw: store.sniff(root, raw)).skipped == why


def test_a_directory_replaced_by_a_link_out_after_the_listing_is_not_read(
    tree: Path, tmp_path: Path
):
    """Given a capture listed, then its directory moved out of raw_root and a link to it
    left in its place, Then reading one of its files is refused: its path leads out."""
    root = location(str(tree))
    relative = f"{CAPTURES}/2026-11-20T0500Z/consumer-groups-state.txt"
    assert relative in {raw.relative for raw in store.discover(root, PATTERN)}
    capture, elsewhere = tree / CAPTURES / "2026-11-20T0500Z", tmp_path / "elsewhere"
    shutil.move(capture, elsewhere)
    capture.symlink_to(elsewhere)
    with pytest.raises(store.UnreadableFile, match="leads outside raw_root"):
        store.read_capture(root, relative)


def test_the_day_takes_the_good_files_and_records_the_others(tree: Path):
    """Given the tree, Then the day's selection takes exactly the good files, rejects
    the files whose path timestamp is invalid (not logs) and skips the hostile ones."""
    root = location(str(tree))
    files = bounded(lambda: store.with_log_kinds(root, store.survey(root, PATTERN), DAY))
    chosen = select(files, DAY)
    assert [raw.relative for raw in chosen.taken] == GOOD
    assert {raw.relative for raw in chosen.rejected} == {
        p for p, (status, _) in HOSTILE.items() if status == REJECTED
    }
    assert {raw.relative for raw in chosen.skipped} == {
        p for p, (status, _) in HOSTILE.items() if status == SKIPPED
    }
    assert chosen.has_captures


def test_invalid_timestamps_are_no_capture_of_any_date_but_undated_logs_are(tmp_path: Path):
    """Given only a capture whose path timestamp is invalid and a broker log with no
    date in its path, Then for any date the log is taken and the capture rejected with
    a reason naming its path and the spellings expected; without the log the date has
    no captures."""
    root = tmp_path / "raw"
    bad = f"{CAPTURES}/2026-11-20T2500Z/consumer-groups-offsets.txt"
    log = "prod-east/logs/broker-3/server.log"
    for relative, source in (
        (bad, OFFSETS),
        (log, "prod-east/logs/broker-3/server.log.2026-11-20-02"),
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / source, root / relative)
    loc = location(str(root))
    for day in (DAY, dt.date(2030, 1, 1)):
        chosen = select(store.with_log_kinds(loc, store.survey(loc, PATTERN), day), day)
        assert ([r.relative for r in chosen.taken], [r.relative for r in chosen.rejected]) == (
            [log],
            [bad],
        )
    (root / log).unlink()
    files = store.with_log_kinds(loc, store.survey(loc, PATTERN), DAY)
    assert not select(files, DAY).has_captures
    reason = timestamp_problem(bad, PATTERN)
    assert bad in reason and SPELLINGS in reason and "hour must be in 0..23" in reason


@pytest.mark.parametrize(
    ("relative", "invalid"),
    [
        ("c/2026-11-20T2500Z/o.txt", "hour must be in 0..23"),
        ("c/9999-12-31T23:59:59-01:00/o.txt", "date value out of range"),
        ("c/2026-11-20T0910+24:00/o.txt", "UTC offset +24:00 out of range"),
        ("c/2026-02-30T0910Z/o.txt", "day is out of range for month"),
    ],
)
def test_a_path_timestamp_that_names_no_instant_is_none(relative: str, invalid: str):
    assert parse_capture_path(relative, PATTERN).captured_at is None
    assert invalid in timestamp_problem(relative, PATTERN)


def test_a_file_that_changed_since_the_listing_is_a_result_not_an_exception(
    tree: Path, monkeypatch: pytest.MonkeyPatch
):
    """Given good files listed, then one replaced by a FIFO, one made unreadable, one by
    a link out of raw_root, and one whose read fails mid-way (EIO), Then each parse
    returns a whole-file result (skipped, or failed_capture mid-read) with the reason
    and no sha256, the capture's other file is parsed as before, and nothing outside
    raw_root reaches a row."""
    root = location(str(tree))
    listed = {raw.relative: raw for raw in store.survey(root, PATTERN)}
    units = {
        relative: {
            "relative": relative,
            "cluster": listed[relative].cluster,
            "captured_at": listed[relative].captured_at,
            "group": None,
        }
        for relative in GOOD
    }
    fifo, unreadable, linked, broken = GOOD
    os.remove(tree / fifo)
    os.mkfifo(tree / fifo)
    (tree / linked).unlink()
    (tree / linked).symlink_to(tree.parent / "raw-outside" / "members.txt")
    permitted = store.local_checks.permitted
    monkeypatch.setattr(
        store.local_checks,
        "permitted",
        lambda path: not path.endswith(unreadable) and permitted(path),
    )
    opener = store.reading.open_stream

    class FailingStream(io.RawIOBase):
        def read(self, size: int = -1) -> bytes:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(
        store.reading,
        "open_stream",
        lambda raw_root, relative: (
            FailingStream() if relative == broken else opener(raw_root, relative)
        ),
    )
    parse = functools.partial(parse_file, root, path_pattern=PATTERN, log_timezone="UTC")
    expected = {
        fifo: (SKIPPED, "not a regular file (a FIFO): never opened"),
        unreadable: (SKIPPED, store.UNREADABLE),
        linked: (SKIPPED, store.LINK_OUTSIDE),
        broken: (FAILED_CAPTURE, f"reading failed mid-way: {os.strerror(errno.EIO)}"),
    }
    for relative, (status, why) in expected.items():
        result, sha256 = bounded(lambda relative=relative: parse(units[relative]))
        assert (result.status, sha256, result.kind, result.row_count) == (
            status,
            None,
            "unknown",
            0,
        )
        assert result.quarantine == [
            {"line_number": None, "line": "", "reason": why, "kind": "unknown"}
        ]
    # One capture unit with a good file and a FIFO: the task carries on, both reported.
    (tree / fifo).unlink()
    shutil.copy(SAMPLE / fifo, tree / fifo)
    os.remove(tree / unreadable)
    os.mkfifo(tree / unreadable)
    out = bounded(lambda: list(capture_batches([units[fifo], units[unreadable]], parse, DAY)))
    summaries = {body["source_file"]: body for table, body in out if table == FILE_REPORT}
    assert summaries[fifo]["status"] == "ok" and summaries[fifo]["rows"] > 0
    assert (summaries[unreadable]["status"], summaries[unreadable]["sha256"]) == (SKIPPED, None)
    assert summaries[unreadable]["quarantine_reasons"] == {
        "not a regular file (a FIFO): never opened": 1
    }


def ingested(spark, config: Config) -> dict[str, dict[str, Any]]:
    rows = read_table(spark, config.table_path("ingested_files")).collect()
    return {r["path"]: r.asDict() for r in rows}


OLD_INGESTED_FILES = (
    "path string, size long, sha256 string, kind string, cluster string, "
    "captured_at timestamp, status string, rows long, quarantined long, run_id string, "
    "ingested_at timestamp"
)


@pytest.mark.spark
def test_ingest_records_hostile_entries_and_reads_the_good_files_as_a_clean_run(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """Given the good files alone, and the same files beside every hostile entry in a
    warehouse whose ingested_files predates the reason and capture_date columns, Then
    the hostile run ends normally; ingested_files has the documented schema, keeps the
    older row, and shows each hostile entry with its status and reason (logged at
    WARNING and counted in the summary line); every bronze table and the good files'
    ingested_files rows equal the clean run's; nothing outside raw_root is stored; a
    re-run finds nothing changed, and one after a FIFO appears among the captures (or
    goes again) records it (or drops its row) without touching a bronze table. A date
    with only an invalid path timestamp under raw_root has no capture files."""
    clean = Config(
        raw_root=str(build_tree(tmp_path / "clean", hostile=False)),
        warehouse=str(tmp_path / "clean-wh"),
    )
    root = build_tree(tmp_path / "raw", hostile=True)
    unreadable_as_root(monkeypatch, root)
    config = Config(raw_root=str(root), warehouse=str(tmp_path / "wh"))
    older = dt.datetime(2026, 11, 18, 9, 10)
    old_row = ("gone/2026-11-18T0910Z/offsets.txt", 10, "ab", "offsets", "gone", older, "ok")
    old = spark.createDataFrame([(*old_row, 3, 0, "run-0", older)], OLD_INGESTED_FILES)
    Warehouse(spark, config.warehouse).write(old, "ingested_files", mode="overwrite")

    ingest.run(spark, clean, DAY)
    with caplog.at_level(logging.INFO, logger="fleet_rebalance.ingest"):
        caplog.clear()
        counts = ingest.run(spark, config, DAY)

    files_table = read_table(spark, config.table_path("ingested_files"))
    assert files_table.schema.fieldNames() == bronze.TABLES["ingested_files"].fieldNames()
    rows = ingested(spark, config)
    assert {p: r["status"] for p, r in rows.items() if p in HOSTILE} == {
        p: status for p, (status, _) in HOSTILE.items()
    }
    for path, (_, why) in HOSTILE.items():
        row = rows[path]
        assert why in row["reason"], path
        assert (row["sha256"], row["rows"], row["capture_date"]) == (None, 0, DAY), path
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for path, (status, _) in HOSTILE.items():
        assert any(m.startswith(f"{status} {path}: ") for m in warnings), path
    (summary,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ingest of")]
    assert summary.endswith("10 file(s) skipped, 2 file(s) rejected")
    (kept,) = [r for p, r in rows.items() if p.startswith("gone/")]
    assert (kept["reason"], kept["capture_date"]) == (None, dt.date(2026, 11, 18))

    clean_rows = ingested(spark, clean)
    per_run = ("run_id", "ingested_at")

    def stable(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {
            p: {k: v for k, v in r.items() if k not in per_run}
            for p, r in rows.items()
            if p in GOOD
        }

    assert stable(rows) == stable(clean_rows)
    assert set(stable(clean_rows)) == set(GOOD)
    for name in [*bronze.CAPTURE_TABLES, "quarantine"]:
        assert_df_equality(
            read_table(spark, config.table_path(name)),
            read_table(spark, clean.table_path(name)),
            ignore_row_order=True,
            ignore_nullable=True,
        )
    offsets = read_table(spark, config.table_path("offsets"))
    assert offsets.where(F.col("group_id").contains(SECRET)).count() == 0
    assert counts["offsets"] == offsets.count()

    assert ingest.run(spark, config, DAY) == {}  # nothing changed, nothing recorded again
    late = f"{CAPTURES}/2026-11-20T0240Z/consumer-groups-state.txt"
    os.mkfifo(root / late)
    versions = {n: DeltaTable(config.table_path(n)).version() for n in bronze.TABLES}
    # ingested_files rows are written per capture date: the date's, not gone/'s.
    of_day = sum(1 for r in rows.values() if r["capture_date"] == DAY)
    assert ingest.run(spark, config, DAY) == {"ingested_files": of_day + 1}
    assert ingested(spark, config)[late]["status"] == SKIPPED
    assert {n: DeltaTable(config.table_path(n)).version() for n in bronze.TABLES} == {
        **versions,
        "ingested_files": versions["ingested_files"] + 1,
    }
    os.remove(root / late)  # gone again: its row goes, the bronze tables stay as they are
    assert ingest.run(spark, config, DAY) == {"ingested_files": of_day}
    assert late not in ingested(spark, config)

    lone = tmp_path / "lone"
    invalid = f"{CAPTURES}/2026-11-20T2500Z/consumer-groups-offsets.txt"
    (lone / invalid).parent.mkdir(parents=True)
    shutil.copy(SAMPLE / OFFSETS, lone / invalid)
    only_invalid = Config(raw_root=str(lone), warehouse=str(tmp_path / "lone-wh"))
    for day in (dt.date(2030, 1, 1), DAY):
        with pytest.raises(FileNotFoundError, match=f"no capture files for {day} .*rejected"):
            ingest.run(spark, only_invalid, day)
