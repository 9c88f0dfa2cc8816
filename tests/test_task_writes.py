"""Writes whose files the caller's own tasks produce (storage.task_writes): committed in
one transaction like the data source writer's, nothing left behind on abort or by task
attempts nobody reported, and refused up front where write_table would refuse."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql.types import DateType, LongType, StringType, StructField, StructType

from fleet_rebalance.storage import SchemaMismatchError
from fleet_rebalance.storage.deltars.files import ROW_GROUP_ROWS, WriteRequest
from fleet_rebalance.storage.engine import DELTA_SPARK
from fleet_rebalance.storage.engines import run_changed
from fleet_rebalance.storage.task_writes import TaskWrite, task_write

SCHEMA = StructType(
    [StructField("key", StringType()), StructField("n", LongType()), StructField("day", DateType())]
)
DAY = dt.date(2026, 11, 20)
INT64 = pa.int64()


def _write(table: Path, *, replace: list[dt.date] | None = None) -> TaskWrite:
    where = {"day": [d.isoformat() for d in replace]} if replace else None
    request = WriteRequest(
        str(table), "overwrite" if replace else "append", ("day",), where, {}, False
    )
    return TaskWrite(request, SCHEMA.json())


def _batch(keys: list[str], day: dt.date = DAY, n_type: pa.DataType = INT64) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "day": pa.array([day] * len(keys), pa.date32()),
            "key": keys,
            "n": pa.array(range(len(keys)), n_type),
        }
    )


def _rows(table: Path) -> list[tuple]:
    data = DeltaTable(str(table)).to_pyarrow_table().sort_by([("key", "ascending")])
    return list(zip(*(data[c].to_pylist() for c in ("key", "n", "day")), strict=True))


def _parquet_files(table: Path) -> set[Path]:
    return set(table.rglob("*.parquet"))


def test_every_tasks_files_land_in_one_commit_in_the_tables_own_schema(tmp_path):
    table = tmp_path / "t"
    write = _write(table)
    first, second = write.files(), write.files()
    # Columns in another order and a narrower type: the table's schema is what is written.
    first.write(_batch(["a", "b"], n_type=pa.int32()).select(["n", "day", "key"]))
    second.write(_batch(["c"]))
    second.write(_batch(["d"], DAY + dt.timedelta(days=1)))
    write.commit(first.close() + second.close())

    assert DeltaTable(str(table)).version() == 0
    assert _rows(table) == [
        ("a", 0, DAY),
        ("b", 1, DAY),
        ("c", 0, DAY),
        ("d", 0, DAY + dt.timedelta(days=1)),
    ]
    assert len(DeltaTable(str(table)).file_uris()) == 3  # one per task and date
    for path in _parquet_files(table):
        assert pq.read_schema(path).names == ["key", "n"]  # the partition is the directory
        assert pq.read_schema(path).field("n").type == pa.int64()


def test_small_batches_are_gathered_into_row_groups(tmp_path):
    table = tmp_path / "t"
    write = _write(table)
    files = write.files()
    rows = ROW_GROUP_ROWS + 10
    for start in range(0, rows, 1024):
        files.write(_batch([f"k{i}" for i in range(start, min(start + 1024, rows))]))
    write.commit(files.close())
    (path,) = _parquet_files(table)
    metadata = pq.ParquetFile(path).metadata
    assert (metadata.num_rows, metadata.num_row_groups) == (rows, 2)


def test_files_of_attempts_nobody_reported_are_deleted_after_the_commit(tmp_path):
    """A recomputed partition writes its files again; only the reported ones count."""
    table = tmp_path / "t"
    write = _write(table, replace=[DAY])
    reported, rerun = write.files(), write.files()
    reported.write(_batch(["a"]))
    rerun.write(_batch(["a"]))
    rerun.close()
    committed = reported.close()
    write.commit(committed)
    assert _rows(table) == [("a", 0, DAY)]
    assert _parquet_files(table) == {table / f.path for f in committed}


def test_an_overwrite_replaces_only_its_dates(tmp_path):
    table = tmp_path / "t"
    before = _write(table)
    files = before.files()
    files.write(_batch(["old"]))
    files.write(_batch(["other"], DAY - dt.timedelta(days=1)))
    before.commit(files.close())

    again = _write(table, replace=[DAY])
    files = again.files()
    files.write(_batch(["new"]))
    again.commit(files.close())
    assert _rows(table) == [("new", 0, DAY), ("other", 0, DAY - dt.timedelta(days=1))]


def test_abort_deletes_reported_and_unreported_files_and_the_table_stays(tmp_path):
    table = tmp_path / "t"
    first = _write(table)
    files = first.files()
    files.write(_batch(["kept"]))
    first.commit(files.close())
    kept = _parquet_files(table)

    failed = _write(table, replace=[DAY])
    reported, killed = failed.files(), failed.files()
    reported.write(_batch(["x"]))
    killed.write(_batch(["y"]))
    killed.close()  # its task died before reporting
    failed.abort(reported.close())
    assert _parquet_files(table) == kept
    assert _rows(table) == [("kept", 0, DAY)]


def test_a_failing_task_discards_what_it_wrote(tmp_path):
    table = tmp_path / "t"
    files = _write(table).files()
    files.write(_batch(["a"]))
    files.write(_batch(["b"], DAY + dt.timedelta(days=1)))
    files.discard()
    assert _parquet_files(table) == set()


def test_task_write_checks_the_table_before_any_task_runs(spark, tmp_path):
    table = tmp_path / "t"
    write = task_write(spark, str(table), SCHEMA, mode="append", partition_by=("day",))
    files = write.files()
    files.write(_batch(["a"]))
    write.commit(files.close())

    other = StructType([StructField("key", LongType()), StructField("day", DateType())])
    with pytest.raises(SchemaMismatchError):
        task_write(spark, str(table), other, mode="overwrite", partition_by=("day",))
    with pytest.raises(SchemaMismatchError, match="partition column"):
        task_write(spark, str(tmp_path / "u"), SCHEMA, mode="append", partition_by=("hour",))
    with pytest.raises(ValueError, match="mode"):
        task_write(spark, str(table), SCHEMA, mode="merge", partition_by=("day",))


def test_under_delta_spark_tasks_stage_files_and_spark_commits_their_rows(
    spark, tmp_path, monkeypatch
):
    """Spark's Delta connector writes its own tables: the tasks' files are staged under
    the table's _fleet_staging/<write id>/, and the commit hands their rows to the
    session's engine with the same mode and replace_where, then drops the staging files."""
    import fleet_rebalance.storage.task_writes as task_writes

    committed = {}

    def fake_write_frame(engine, frame, table, plan, per_run_columns=()):
        committed.update(
            rows=sorted(tuple(r) for r in frame.collect()),
            path=table.uri,
            mode=plan.mode,
            partition_by=plan.partition_by,
            replace_where=plan.replace_where,
            engine=engine.context.engine,
        )

    monkeypatch.setattr(task_writes, "write_frame", fake_write_frame)
    table = tmp_path / "t"
    with run_changed(spark, engine=DELTA_SPARK):
        write = task_write(
            spark,
            str(table),
            SCHEMA,
            mode="overwrite",
            partition_by=("day",),
            replace_where={"day": DAY},
        )
        files = write.files()
        files.write(_batch(["a", "b"]))
        written = files.close()
        staging = table / "_fleet_staging" / write.request.write_id
        assert {staging / f.path for f in written} == set(staging.glob("*.parquet"))
        write.commit(written)
    assert committed["engine"] == DELTA_SPARK
    assert committed["path"] == str(table)
    assert committed["mode"] == "overwrite"
    assert committed["partition_by"] == ("day",)
    assert committed["replace_where"] == {"day": [DAY.isoformat()]}
    assert committed["rows"] == [("a", 0, DAY), ("b", 1, DAY)]
    assert not (table / "_fleet_staging" / write.request.write_id).exists()
