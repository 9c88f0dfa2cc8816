"""maintain: Delta's OPTIMIZE and VACUUM past the retention, for every table.

A small table with a history of several runs, part of it moved 10 days into the past
(its log's timestamps and its files' times, as if written then): after maintain each
partition holds the one file compaction gives, every version inside the retention reads
the rows it read before, and the older ones are refused. The retention is refused
below the longest run (by its commits); the job runs end to end on the sample
nightly's warehouse, and on S3.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import runpy
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from fleet_rebalance.config import Config
from fleet_rebalance.errors import UsageError
from fleet_rebalance.pipeline import maintain
from fleet_rebalance.storage.commit_context import commit_context
from fleet_rebalance.storage.context import changed_context
from fleet_rebalance.storage.versions import Commit, oldest_readable
from fleet_rebalance.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
MAINTAIN = PROJECT / "jobs" / "maintain.py"
D1, D2 = dt.date(2026, 11, 19), dt.date(2026, 11, 20)
SCHEMA = "date date, key string, value bigint"
TABLE = "events"
AGE_DAYS = 10


@contextlib.contextmanager
def run_as(spark, run_id: str) -> Iterator[None]:
    """Commits made inside (by a Warehouse built inside) carry `run_id`, as one job
    run's do."""
    with changed_context(spark, run_id=run_id):
        yield


def age(table: Path, days: float) -> None:
    """Moves the table's history so far `days` into the past: commit times, removal and
    modification times in the log, and every file's mtime, as if written then (Delta's
    in-commit timestamps are off: the commit's time is its file's mtime)."""
    shift_ms = int(days * 86_400_000)
    for entry in sorted((table / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in entry.read_text().splitlines() if line]
        for action in actions:
            for kind, key in (
                ("commitInfo", "timestamp"),
                ("remove", "deletionTimestamp"),
                ("add", "modificationTime"),
            ):
                if kind in action and key in action[kind]:
                    action[kind][key] -= shift_ms
        entry.write_text("".join(json.dumps(a) + "\n" for a in actions))
        # Hadoop's local filesystem checks a file against its `.<name>.crc` sidecar.
        (entry.parent / f".{entry.name}.crc").unlink(missing_ok=True)
    for path in table.rglob("*"):
        if path.is_file():
            stat = path.stat()
            os.utime(path, (stat.st_atime - shift_ms / 1000, stat.st_mtime - shift_ms / 1000))


def rows_of(spark, day: dt.date, first: int, count: int = 6):
    return spark.createDataFrame(
        [(day, f"k{i}", i) for i in range(first, first + count)], SCHEMA
    ).repartition(3)


def put(warehouse: Warehouse, df, day: dt.date | None = None) -> None:
    """A date replaced (or, without one, rows appended) in 3 files per date."""
    if day is None:
        warehouse.write(df, TABLE, mode="append", partition_by=("date",))
    else:
        warehouse.write(
            df, TABLE, mode="overwrite", partition_by=("date",), replace_where={"date": day}
        )


def files_per_date(table: Path) -> dict[str, int]:
    """Files per value of the table's (one) partition column."""
    delta = DeltaTable(str(table))
    (column,) = delta.metadata().partition_columns
    actions = pa.table(delta.get_add_actions(flatten=True)).to_pydict()
    found: dict[str, int] = {}
    for value in actions[f"partition.{column}"]:
        found[str(value)] = found.get(str(value), 0) + 1
    return found


def collected(warehouse: Warehouse, version: int) -> list[tuple]:
    return sorted(tuple(r) for r in warehouse.read(TABLE, version=version).collect())


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    """A table of runs old-1, old-2 (both 10 days ago), new-1, new-2 (now); the rows
    of every version, then maintain's summary: (config, rows by version, lines)."""
    root = tmp_path_factory.mktemp("maintained")
    config = Config(warehouse=str(root))
    warehouse = Warehouse(spark, config.warehouse)

    def at() -> Warehouse:
        """The warehouse as the run now bound to the session writes it."""
        return Warehouse(spark, config.warehouse)

    with run_as(spark, "old-1"):
        put(at(), rows_of(spark, D1, 0), D1)  # v0
        put(at(), rows_of(spark, D2, 0), D2)  # v1
    with run_as(spark, "old-2"):
        put(at(), rows_of(spark, D1, 100), D1)  # v2: v0's files removed 10 days ago
    before = {v: collected(warehouse, v) for v in range(3)}  # read while they are young
    age(root / TABLE, AGE_DAYS)
    with run_as(spark, "new-1"):
        put(at(), rows_of(spark, D2, 200), D2)  # v3: v1's files removed now
    with run_as(spark, "new-2"):
        put(at(), rows_of(spark, D1, 300))  # v4: 3 more files for D1
    before |= {v: collected(warehouse, v) for v in (3, 4)}
    files = files_per_date(root / TABLE)
    with run_as(spark, "maintain-1"):
        lines = maintain.run(spark, config, 7)
    return config, before, files, lines


def test_compaction_leaves_one_file_per_date(history):
    config, _, files, lines = history
    assert files == {str(D1): 6, str(D2): 3}
    assert files_per_date(Path(config.warehouse) / TABLE) == {str(D1): 1, str(D2): 1}
    assert lines[0].startswith(f"maintain {config.warehouse}: 1 table, retention 7 days ")
    assert "(longest run " in lines[0]
    assert lines[1].startswith(f"{TABLE}: files 9 -> 2, vacuumed 3 files (")
    assert lines[1].endswith(" versions 3..7 readable (5)")
    assert lines[2].startswith("total: files 9 -> 2, vacuumed 3 files (")


def test_every_version_inside_the_retention_reads_as_before(spark, history):
    """v3, v4 are inside the retention; v5 is the compaction, v6 and v7 VACUUM's start
    and end: all read v4's rows."""
    config, before, _, _ = history
    warehouse = Warehouse(spark, config.warehouse)
    assert DeltaTable(str(Path(config.warehouse) / TABLE)).version() == 7
    for version in (3, 4):
        assert collected(warehouse, version) == before[version], version
    for version in (5, 6, 7):
        assert collected(warehouse, version) == before[4], version
    assert collected(warehouse, 7) == sorted(tuple(r) for r in warehouse.read(TABLE).collect())


def test_versions_older_than_the_retention_are_refused(spark, history):
    """v0..v2 are 10 days old: Delta refuses to time travel to them (VACUUM deleted the
    files v2 removed from v0 then: the 3 files of the summary line)."""
    config, _, _, _ = history
    warehouse = Warehouse(spark, config.warehouse)
    for version in (0, 1, 2):
        with pytest.raises(Exception, match=r"Cannot time travel beyond"):
            warehouse.read(TABLE, version=version).collect()


def test_compaction_changes_no_data_and_says_who_did_it(history):
    """The OPTIMIZE commit's actions say dataChange=false, its commitInfo's userMetadata
    job=maintain and the run's id."""
    config, _, _, _ = history
    log = Path(config.warehouse) / TABLE / "_delta_log"
    actions = [json.loads(line) for line in (log / f"{5:020d}.json").read_text().splitlines()]
    info = commit_context(next(a["commitInfo"] for a in actions if "commitInfo" in a))
    assert (info["operation"], info["job"], info["runId"]) == ("OPTIMIZE", "maintain", "maintain-1")
    changes = [a.get("add") or a.get("remove") for a in actions if "add" in a or "remove" in a]
    assert len(changes) == 9 + 2 and all(change["dataChange"] is False for change in changes)


def test_a_second_maintain_compacts_nothing_more(spark, history):
    """Nothing to compact is no commit; VACUUM logs its start and end (v8, v9)."""
    config, _, _, _ = history
    lines = maintain.run(spark, config, 7)
    assert lines[1] == f"{TABLE}: files 2 -> 2, vacuumed 0 files (0 B), versions 3..9 readable (7)"
    assert DeltaTable(str(Path(config.warehouse) / TABLE)).version() == 9


def test_oldest_readable_is_the_oldest_version_inside_the_retention():
    at = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    history = [Commit(v, at + dt.timedelta(days=v), None) for v in range(4)]
    assert oldest_readable(history, at + dt.timedelta(days=1, hours=12)) == 2
    assert oldest_readable(history, at + dt.timedelta(days=1)) == 1
    assert oldest_readable(history, at - dt.timedelta(days=1)) == 0
    assert oldest_readable(history, at + dt.timedelta(days=9)) == 3  # the latest


@pytest.fixture
def long_run(spark, tmp_path):
    """A warehouse whose run `slow` committed 36 hours apart."""
    config = Config(warehouse=str(tmp_path / "wh"))
    with run_as(spark, "slow"):
        warehouse = Warehouse(spark, config.warehouse)
        put(warehouse, rows_of(spark, D1, 0, count=2), D1)
        age(Path(config.warehouse) / TABLE, 1.5)
        put(warehouse, rows_of(spark, D1, 10, count=2), D1)
    return config


def test_a_retention_shorter_than_the_longest_run_is_refused(spark, long_run):
    """36 hours by the commits of run `slow`: 1 day refused, nothing done."""
    table = Path(long_run.warehouse) / TABLE
    with pytest.raises(UsageError) as caught:
        maintain.run(spark, long_run, 1)
    assert str(caught.value) == (
        "--retain-days 1: shorter than the longest run in the warehouse, 36.0 hours (run "
        "slow, by its commits); pass --retain-days 2 or more"
    )
    assert DeltaTable(str(table)).version() == 1 and len(files_per_date(table)) == 1


def conf_file(directory: Path, warehouse: str) -> Path:
    path = directory / "maintain.yaml"
    path.write_text(f"warehouse: {warehouse}\n")
    return path


def run_job_script(monkeypatch, spark, warehouse: str, argv: list[str]) -> int:
    """jobs/maintain.py as spark-submit runs it, in this session."""
    import fleet_rebalance.spark.session

    conf = conf_file(Path(warehouse).parent, warehouse)
    monkeypatch.setattr(fleet_rebalance.spark.session, "build_session", lambda *a, **k: spark)
    monkeypatch.setattr(sys, "argv", [str(MAINTAIN), "--conf", str(conf), *argv])
    with pytest.raises(SystemExit) as caught:
        runpy.run_path(str(MAINTAIN), run_name="__main__")
    return caught.value.code


def _file(path: Path, data: bytes, days_old: float = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    when = path.stat().st_mtime - days_old * 86_400
    os.utime(path, (when, when))
    return path


def test_a_table_without_a_commit_loses_its_files_past_the_retention(spark, tmp_path):
    """Given a warehouse where the first write of `offsets` failed before its commit 10
    days ago (its tasks' Parquet files and an abort's tombstone left, no _delta_log),
    one of `members` failed an hour ago, and a reports directory, When maintain runs
    with a 7-day retention, Then the old files are removed with the table's directory,
    the recent ones stay (a first write still running may own them), and the reports
    are not touched. Expected: one line per such table with the counts."""
    root = tmp_path / "wh"
    old = [
        _file(root / "offsets" / "capture_date=2026-11-20" / f"part-{i}.parquet", b"x" * 10, 10)
        for i in range(6)
    ]
    tombstone = _file(root / "offsets" / "_fleet_aborted" / "write-1", b"", 10)
    recent = _file(root / "members" / "capture_date=2026-11-20" / "part-0.parquet", b"y", 1 / 24)
    stale = _file(root / "members" / "capture_date=2026-11-19" / "part-0.parquet", b"zz", 9)
    report = _file(root / "reports" / "2026-11-10.html", b"<html>", 10)
    lines = maintain.run(spark, Config(warehouse=str(root)), 7)
    assert not any(path.exists() for path in [*old, tombstone, stale])
    assert not (root / "offsets").exists()
    assert recent.exists() and report.exists()
    assert lines == [
        f"maintain {root}: 0 tables, retention 7 days",
        "members: no commit yet (a first write that failed): removed 1 uncommitted files "
        "(2 B) older than 7 days, kept 1 newer",
        "offsets: no commit yet (a first write that failed): removed 7 uncommitted files "
        "(60 B) older than 7 days, kept 0 newer",
        "total: files 0 -> 0, vacuumed 0 files (0 B)",
    ]


def test_the_job_refuses_a_short_retention_in_one_line(spark, long_run, monkeypatch, capsys):
    assert run_job_script(monkeypatch, spark, long_run.warehouse, ["--retain-days", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == (
        "maintain: error: --retain-days 1: shorter than the longest run in the warehouse, "
        "36.0 hours (run slow, by its commits); pass --retain-days 2 or more"
    )


def test_the_job_on_the_sample_nightly_keeps_every_table_as_it_was(
    spark, clean_nightly, tmp_path, monkeypatch, capsys
):
    """The whole job on a copy of the sample's warehouse: a line per table on stdout,
    at most one file per date, and every table's rows as the nightly wrote them."""
    warehouse = tmp_path / "wh"
    shutil.copytree(clean_nightly, warehouse)
    store = Warehouse(spark, str(warehouse))
    names = sorted(p.name for p in warehouse.iterdir() if (p / "_delta_log").is_dir())

    def contents(name: str) -> list:
        return sorted(map(repr, store.read(name).collect()))

    small = [n for n in names if max(files_per_date(warehouse / n).values(), default=0) > 1]
    before = {name: contents(name) for name in names}
    assert run_job_script(monkeypatch, spark, str(warehouse), ["--retain-days", "7"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    print(out, file=sys.stderr)  # the figures, for a report: pytest -s shows them
    assert lines[0].startswith(f"maintain {warehouse}: {len(names)} tables, retention 7 days")
    assert [line.split(":")[0] for line in lines[1:-1]] == names
    assert lines[-1].startswith("total: files ")
    assert all(f"table {name}: files " in err for name in names)
    assert small  # ingest's tables: a file per parse task
    for name in names:
        assert max(files_per_date(warehouse / name).values(), default=0) <= 1, name
        assert contents(name) == before[name], name


def test_maintain_on_s3(spark, s3):
    """Two appends to one date on S3: compacted into one file holding the same rows.
    Written and read back by deltalake (Spark's reads of compacted files are checked
    on the local tables above; here the store is the point). Delta does not log VACUUM
    in the table's history on S3 (its single-driver log store), so the count of files
    VACUUM deleted is not reported there."""
    from deltalake import write_deltalake

    s3.create_bucket("maint")
    config = Config(warehouse="s3://maint/wh")
    for first in (0, 10):
        rows = [{"date": D1, "key": f"k{i}", "value": i} for i in range(first, first + 2)]
        write_deltalake(
            f"{config.warehouse}/{TABLE}",
            pa.Table.from_pylist(rows),
            mode="append",
            partition_by=["date"],
            storage_options=s3.storage_options,
        )
    with changed_context(spark, storage_options=dict(s3.storage_options)):
        lines = maintain.run(spark, config, 7)
    table = DeltaTable(f"{config.warehouse}/{TABLE}", storage_options=s3.storage_options)
    got = sorted(tuple(r.values()) for r in table.to_pyarrow_table().to_pylist())
    assert table.version() == 2
    assert lines[1] == (
        f"{TABLE}: files 2 -> 1, vacuumed files not reported, versions 0..2 readable (3)"
    )
    assert got == [(D1, f"k{i}", i) for i in (0, 1, 10, 11)]
    data = [k for k in s3.list_keys("maint", "wh/events/date=") if k.endswith(".parquet")]
    assert len(data) == 3  # VACUUM keeps the removed files inside the retention


def test_maintain_help_lists_its_flags_and_the_launcher_routes_it(tmp_path, monkeypatch, capsys):
    from fleet_rebalance.cli.launcher import main

    monkeypatch.setenv("FLEET_PROJECT_DIR", str(PROJECT))
    monkeypatch.chdir(PROJECT)
    conf = str(conf_file(tmp_path, str(tmp_path)))
    assert main(["maintain", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: maintain ")
    assert "--retain-days N" in out and "--date" not in out
    assert main(["maintain", "--retain-days", "0"]) == 2
    assert capsys.readouterr().err == (
        "spark-submit.sh: argument --retain-days: expected an integer >= 1, found 0 "
        "(see ./spark-submit.sh maintain --help)\n"
    )
    assert main(["maintain", "--conf", conf, "--warehouse", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith(
        f"spark-submit.sh: --warehouse {tmp_path / 'none'}: no such directory"
    )
    launched = {}

    def execve(path, command, env):
        launched["command"] = command
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", execve)
    with pytest.raises(SystemExit):
        main(["maintain", "--conf", conf, "--retain-days", "14"])
    assert launched["command"][-5:] == [str(MAINTAIN), "--conf", conf, "--retain-days", "14"]
