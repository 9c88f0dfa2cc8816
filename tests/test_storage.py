"""The storage layer on delta-spark end to end: real Spark jobs, real Delta tables, on a
local directory and on S3 (moto's server, through Hadoop's S3A)."""

from __future__ import annotations

import contextlib
import datetime as dt
import posixpath
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from fleet_rebalance.filesystems import Location, location
from fleet_rebalance.storage import (
    CommitConflictError,
    ReplaceWhereError,
    SchemaMismatchError,
    read_table,
    write_table,
)
from fleet_rebalance.storage.commit_context import commit_context
from fleet_rebalance.storage.context import changed_context

pytestmark = pytest.mark.spark
UTC = dt.UTC
D19, D20 = dt.date(2026, 11, 19), dt.date(2026, 11, 20)

TP = StructType([StructField("topic", StringType()), StructField("partition", IntegerType())])
SCHEMA = StructType(
    [
        StructField("group_id", StringType()),
        StructField("partition", IntegerType()),
        StructField("lag", LongType()),
        StructField("skew", DoubleType()),
        StructField("inferred", BooleanType()),
        StructField("captured_at", TimestampType()),
        StructField("assignment", ArrayType(TP)),
        StructField("capture_date", DateType()),
    ]
)


def rows_for(day: dt.date, groups: list[str], lag: int = 10) -> list[tuple]:
    at = dt.datetime(day.year, day.month, day.day, 9, 10, 0, 123456, tzinfo=UTC)
    return [
        (g, i, lag + i, 1.5, i % 2 == 0, at, [("orders", i), ("audit", 0)], day)
        for i, g in enumerate(groups)
    ]


NULL_ROW = (None, None, None, None, None, None, None, D19)


@dataclass(frozen=True)
class Store:
    """Where one test's tables live: a local directory or a prefix in an S3 bucket."""

    root: str
    options: dict[str, str]

    def table(self, name: str) -> str:
        return f"{self.root}/{name}"

    def delta(self, table: str, version: int | None = None) -> DeltaTable:
        """The table as deltalake reads it, outside Spark."""
        return DeltaTable(
            Location(table).delta_uri, version=version, storage_options=self.options or None
        )

    def listing(self, table: str) -> list[str]:
        """Every file under the table, relative to it."""
        fs, root = location(table, self.options).filesystem()
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
        return sorted(
            posixpath.relpath(i.path, root) for i in infos if i.type == pafs.FileType.File
        )


@pytest.fixture(params=["local", "s3"])
def store(request, spark, tmp_path, s3) -> Iterator[Store]:
    if request.param == "local":
        yield Store(str(tmp_path), {})
        return
    bucket = "storage-suite"
    with contextlib.suppress(Exception):  # made by an earlier test of the session
        s3.create_bucket(bucket)
    with changed_context(spark, storage_options=dict(s3.storage_options)):
        yield Store(f"s3://{bucket}/{uuid.uuid4().hex}", dict(s3.storage_options))


@pytest.fixture
def table(store) -> str:
    return store.table("offsets")


def df_of(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


def sort(df):
    return df.orderBy(*[F.col(c).asc_nulls_first() for c in ("capture_date", "group_id", "lag")])


def test_round_trip_of_every_type_including_nulls_and_nested(spark, store, table):
    expected = df_of(spark, [*rows_for(D19, ["a", "b"]), NULL_ROW, *rows_for(D20, ["c"])])
    write_table(expected, table, partition_by=("capture_date",))
    actual = read_table(spark, table)
    assert actual.schema.simpleString() == SCHEMA.simpleString()
    assert_df_equality(sort(actual), sort(expected), ignore_nullable=True)
    assert sorted({p.split("/")[0] for p in store.listing(table)}) == [
        "_delta_log",
        "capture_date=2026-11-19",
        "capture_date=2026-11-20",
    ]


def test_tables_open_with_deltalake_with_the_same_rows(spark, store, table):
    """What `sql --engine duckdb` reads outside Spark: the same rows, and Delta's file
    statistics (rows per file) as delta-spark wrote them."""
    df = df_of(spark, [*rows_for(D19, ["a", "b"]), NULL_ROW, *rows_for(D20, ["c"])]).coalesce(1)
    write_table(df, table, partition_by=("capture_date",))
    via_deltalake = store.delta(table).to_pyarrow_table()
    via_spark = spark.createDataFrame(via_deltalake.to_pandas(), SCHEMA)
    assert_df_equality(sort(via_spark), sort(read_table(spark, table)), ignore_nullable=True)
    stats = pa.table(store.delta(table).get_add_actions(flatten=True)).to_pylist()
    assert sorted(s["num_records"] for s in stats) == [1, 3]
    day19 = next(s for s in stats if s["partition.capture_date"] == D19)
    assert (day19["min.lag"], day19["max.lag"], day19["null_count.lag"]) == (10, 11, 1)


def test_append_adds_rows(spark, store, table):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=("capture_date",))
    write_table(df_of(spark, rows_for(D19, ["b"])), table, partition_by=("capture_date",))
    assert sorted(r.group_id for r in read_table(spark, table).collect()) == ["a", "b"]
    assert store.delta(table).version() == 1


def test_overwrite_replaces_the_whole_table(spark, table):
    write_table(
        df_of(spark, rows_for(D19, ["a"]) + rows_for(D20, ["b"])),
        table,
        partition_by=("capture_date",),
    )
    write_table(
        df_of(spark, rows_for(D20, ["c"])), table, mode="overwrite", partition_by=("capture_date",)
    )
    assert [r.group_id for r in read_table(spark, table).collect()] == ["c"]


def test_replace_where_replaces_one_date_and_leaves_others_untouched(spark, table):
    write_table(
        df_of(spark, rows_for(D19, ["a", "b"]) + rows_for(D20, ["c", "d"])),
        table,
        partition_by=("capture_date",),
    )
    before = read_table(spark, table).filter(F.col("capture_date") == D19)
    write_table(
        df_of(spark, rows_for(D20, ["e"], lag=99)),
        table,
        mode="overwrite",
        partition_by=("capture_date",),
        replace_where={"capture_date": D20},
    )
    after = read_table(spark, table)
    assert_df_equality(sort(after.filter(F.col("capture_date") == D19)), sort(before))
    assert [(r.group_id, r.lag) for r in after.filter(F.col("capture_date") == D20).collect()] == [
        ("e", 99)
    ]


def test_rerunning_a_date_is_idempotent(spark, table):
    day = df_of(spark, rows_for(D20, ["a", "b"]))
    for _ in range(2):
        write_table(
            day,
            table,
            mode="overwrite",
            partition_by=("capture_date",),
            replace_where={"capture_date": "2026-11-20"},
        )
    assert read_table(spark, table).count() == 2


def test_replace_where_refuses_rows_outside_it(spark, store, table):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=("capture_date",))
    with pytest.raises(ReplaceWhereError, match=r"rows outside replace_where"):
        write_table(
            df_of(spark, rows_for(D19, ["x"]) + rows_for(D20, ["y"])),
            table,
            mode="overwrite",
            partition_by=("capture_date",),
            replace_where={"capture_date": D20},
        )
    assert [r.group_id for r in read_table(spark, table).collect()] == ["a"]
    assert store.delta(table).version() == 0  # nothing was committed


def test_empty_writes_create_the_table_and_empty_a_partition(spark, table):
    empty = spark.createDataFrame([], SCHEMA)
    write_table(empty, table, partition_by=("capture_date",))
    assert read_table(spark, table).count() == 0
    assert read_table(spark, table).schema.simpleString() == SCHEMA.simpleString()
    write_table(
        df_of(spark, rows_for(D19, ["a"]) + rows_for(D20, ["b"])),
        table,
        partition_by=("capture_date",),
    )
    write_table(
        empty,
        table,
        mode="overwrite",
        partition_by=("capture_date",),
        replace_where={"capture_date": D20},
    )
    assert [r.group_id for r in read_table(spark, table).collect()] == ["a"]


def test_time_travel_reads_older_versions(spark, table):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=("capture_date",))
    write_table(
        df_of(spark, rows_for(D19, ["b"])), table, mode="overwrite", partition_by=("capture_date",)
    )
    assert [r.group_id for r in read_table(spark, table, version=0).collect()] == ["a"]
    assert [r.group_id for r in read_table(spark, table, version=1).collect()] == ["b"]
    with pytest.raises(Exception, match=r"cannot load version 7"):
        read_table(spark, table, version=7)


def test_schema_mismatch_names_the_columns(spark, table):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=("capture_date",))
    bad = (
        df_of(spark, rows_for(D19, ["b"]))
        .withColumn("lag", F.col("lag").cast("int"))
        .withColumn("host", F.lit("/10.0.0.1"))
        .drop("skew")
    )
    with pytest.raises(
        SchemaMismatchError,
        match=r"schema mismatch in columns: lag \(table long, write integer\); "
        r"skew \(missing from the write\); host \(not in the table; "
        r"schema_evolution is off\)",
    ):
        write_table(bad, table, partition_by=("capture_date",))


def test_schema_evolution_adds_nullable_columns(spark, table):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=("capture_date",))
    wider = df_of(spark, rows_for(D19, ["b"])).withColumn("rack", F.lit("use1-az1"))
    with changed_context(spark, schema_evolution=True):
        write_table(wider, table, partition_by=("capture_date",))
    rows = {r.group_id: r.rack for r in read_table(spark, table).collect()}
    assert rows == {"a": None, "b": "use1-az1"}


@pytest.mark.parametrize(
    "columns", [(), ("capture_date",), ("capture_date", "group_id")], ids=["none", "one", "two"]
)
def test_partitioning_must_match(spark, table, columns):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=columns)
    other = () if columns else ("capture_date",)
    with pytest.raises(
        SchemaMismatchError, match=rf"partitioned by {re.escape(str(list(columns)))},"
    ):
        write_table(df_of(spark, rows_for(D19, ["b"])), table, partition_by=other)


def test_commit_info_records_job_run_id_and_date(spark, store, table):
    with changed_context(spark, run_date="2026-11-20"):
        write_table(
            df_of(spark, rows_for(D20, ["a"])),
            table,
            partition_by=("capture_date",),
            commit_info={"rows": 1},
        )
    # Recorded as the commit's userMetadata (commit_context.py), by Delta's own writer.
    commit = commit_context(store.delta(table).history(1)[0])
    assert commit["job"] == "pytest"
    assert commit["runDate"] == "2026-11-20"
    assert len(commit["runId"]) == 32
    assert commit["rows"] == 1
    assert (
        commit["engineInfo"].startswith("Apache-Spark/") and "Delta-Lake/" in commit["engineInfo"]
    )


def test_concurrent_appends_both_land(spark, store, table):
    write_table(df_of(spark, rows_for(D19, ["seed"])), table, partition_by=("capture_date",))
    errors: list[BaseException] = []

    def append(name: str) -> None:
        try:
            write_table(df_of(spark, rows_for(D19, [name])), table, partition_by=("capture_date",))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(r.group_id for r in read_table(spark, table).collect()) == [
        "left",
        "right",
        "seed",
    ]
    assert store.delta(table).version() == 2


@pytest.mark.parametrize(
    "seeded", [D20, D19, None], ids=["rewritten date", "new date", "new table"]
)
def test_concurrent_overwrites_of_one_date_never_duplicate(spark, store, table, seeded):
    if seeded is not None:
        write_table(df_of(spark, rows_for(seeded, ["seed"])), table, partition_by=("capture_date",))
    outcomes: dict[str, BaseException | None] = {}

    def overwrite(name: str) -> None:
        try:
            write_table(
                df_of(spark, rows_for(D20, [name, name + "2"])),
                table,
                mode="overwrite",
                partition_by=("capture_date",),
                replace_where={"capture_date": D20},
            )
            outcomes[name] = None
        except BaseException as exc:
            outcomes[name] = exc

    threads = [threading.Thread(target=overwrite, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failures = [e for e in outcomes.values() if e is not None]
    assert all(isinstance(e, CommitConflictError) for e in failures), failures
    assert len(failures) < 2
    rows = read_table(spark, table).where(F.col("capture_date") == D20).collect()
    assert sorted(r.group_id for r in rows) in (["left", "left2"], ["right", "right2"])


def explode_on_poison(*columns):
    # Nested, so cloudpickle ships it by value (workers cannot import test modules).
    def explode(group_id, lag):
        if group_id == "poison":
            raise ValueError("task failed half-way")
        return lag

    return F.udf(explode, "long")(*columns)


def test_a_failed_job_commits_nothing(spark, store, table):
    """Given a write whose tasks fail half-way (some tasks may have written files),
    Then the table keeps its version and rows: Delta commits only a finished job, and
    VACUUM removes the files it never referenced."""
    write_table(df_of(spark, rows_for(D19, ["a", "b"])), table, partition_by=("capture_date",))
    rows = rows_for(D20, [f"g{i}" for i in range(40)] + ["poison"])
    failing = (
        df_of(spark, rows)
        .repartition(4, "group_id")
        .withColumn("lag", explode_on_poison("group_id", "lag"))
    )
    with pytest.raises(Exception, match="task failed half-way"):
        write_table(failing, table, partition_by=("capture_date",))
    assert store.delta(table).version() == 0
    assert sorted(r.group_id for r in read_table(spark, table).collect()) == ["a", "b"]


def test_reading_a_missing_table_says_so(spark, store):
    with pytest.raises(Exception, match=r"not a Delta table"):
        read_table(spark, store.table("nothing"))


def test_unpartitioned_tables_and_odd_partition_values(spark, store):
    df = df_of(spark, rows_for(D19, ["a", "b"])).withColumn(
        "cluster", F.when(F.col("group_id") == "a", "prod:east 1").otherwise(None)
    )
    write_table(df, store.table("flat"))
    write_table(df, store.table("odd"), partition_by=("cluster",))
    for name in ("flat", "odd"):
        assert_df_equality(
            read_table(spark, store.table(name)).orderBy("group_id").select(*df.columns),
            df.orderBy("group_id"),
            ignore_nullable=True,
        )


def test_round_trip_between_spark_and_deltalake_writers(spark, store, table):
    """deltalake writes, we read; we overwrite a date, deltalake reads: same rows both ways."""
    from deltalake import write_deltalake

    first = df_of(spark, rows_for(D19, ["a"]) + rows_for(D20, ["b"]))
    write_deltalake(
        Location(table).delta_uri,
        first.toArrow(),
        partition_by=["capture_date"],
        storage_options=store.options or None,
    )
    assert_df_equality(sort(read_table(spark, table)), sort(first), ignore_nullable=True)

    second = df_of(spark, rows_for(D20, ["c", "d"]))
    write_table(
        second,
        table,
        mode="overwrite",
        partition_by=("capture_date",),
        replace_where={"capture_date": D20},
    )
    expected = sort(first.filter(F.col("capture_date") == D19).unionByName(second))
    via_deltalake = spark.createDataFrame(store.delta(table).to_pyarrow_table().to_pandas(), SCHEMA)
    assert_df_equality(sort(via_deltalake), expected, ignore_nullable=True)
    assert_df_equality(sort(read_table(spark, table)), expected, ignore_nullable=True)


def files_by_date(store: Store, table: str) -> dict[str, set[str]]:
    actions = pa.table(store.delta(table).get_add_actions(flatten=True)).to_pylist()
    by_date: dict[str, set[str]] = {}
    for a in actions:
        by_date.setdefault(str(a["partition.capture_date"]), set()).add(a["path"])
    return by_date


def test_an_overwrite_with_its_schema_repartitions_the_table_in_one_commit(spark, store):
    """How a table written unpartitioned becomes partitioned (ingested_files did)."""
    table = store.table("offsets")
    rows = df_of(spark, rows_for(D19, ["a"]) + rows_for(D20, ["b"]))
    write_table(rows, table)
    write_table(
        rows, table, mode="overwrite", partition_by=("capture_date",), overwrite_schema=True
    )
    assert store.delta(table).version() == 1
    assert store.delta(table).metadata().partition_columns == ["capture_date"]
    assert set(files_by_date(store, table)) == {"2026-11-19", "2026-11-20"}
    assert_df_equality(sort(read_table(spark, table)), sort(rows), ignore_nullable=True)


def test_reading_some_dates_opens_only_their_files(spark, store):
    table = store.table("offsets")
    rows = rows_for(D19, ["a"]) + rows_for(D20, ["b", "c"])
    write_table(df_of(spark, rows), table, partition_by=("capture_date",))
    day = read_table(spark, table, where={"capture_date": D20})
    assert sorted(r.group_id for r in day.collect()) == ["b", "c"]
    assert day.inputFiles() and all("capture_date=2026-11-20" in f for f in day.inputFiles())
    assert read_table(spark, table, where={"capture_date": []}).count() == 0
