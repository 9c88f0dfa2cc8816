"""The delta-rs engine end to end: real Spark jobs, real Delta tables on disk."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import posixpath
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs
import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality
from cluster_support import storage_engine, storage_options
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
    UnsupportedTableFeatureError,
    read_table,
    write_table,
)
from fleet_rebalance.storage.commit_context import commit_context
from fleet_rebalance.storage.engine import DELTA_RS, DELTA_SPARK
from fleet_rebalance.storage.engines import run_changed
from fleet_rebalance.storage.task_writes import task_write

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
    """Where one test's tables live: a local directory or a prefix in an S3 bucket, and
    the engine that writes them."""

    root: str
    options: dict[str, str]
    engine: str = DELTA_RS

    def table(self, name: str) -> str:
        return f"{self.root}/{name}"

    def delta(self, table: str, version: int | None = None) -> DeltaTable:
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

    def unreferenced_files(self, table: str) -> list[str]:
        """Parquet files no version of the table references (removed files stay for
        time travel)."""
        latest = self.delta(table).version()
        referenced = {
            unquote(p)
            for v in range(latest + 1)
            for p in pa.table(self.delta(table, v).get_add_actions(flatten=False))[
                "path"
            ].to_pylist()
        }
        return sorted(
            p for p in self.listing(table) if p.endswith(".parquet") and p not in referenced
        )


def _store(request, spark, tmp_path, s3) -> Iterator[Store]:
    engine, where = request.param
    with storage_engine(spark, engine):
        if where == "local":
            yield Store(str(tmp_path), {}, engine)
            return
        bucket = "storage-suite"
        with contextlib.suppress(Exception):  # made by an earlier test of the session
            s3.create_bucket(bucket)
        with storage_options(spark, s3.storage_options):
            yield Store(f"s3://{bucket}/{uuid.uuid4().hex}", dict(s3.storage_options), engine)


RS_LEGS = [(DELTA_RS, "local"), (DELTA_RS, "s3")]
SPARK_LEGS = [(DELTA_SPARK, "local"), (DELTA_SPARK, "s3")]


@pytest.fixture(params=[*RS_LEGS, *SPARK_LEGS], ids=lambda p: "-".join(p))
def store(request, spark, tmp_path, s3) -> Iterator[Store]:
    """The engine contract, on a local directory and on S3 (moto's server, through
    pyarrow for delta-rs and Hadoop's S3A for Spark's own Delta connector)."""
    yield from _store(request, spark, tmp_path, s3)


@pytest.fixture(params=RS_LEGS, ids=lambda p: "-".join(p))
def rs_store(request, spark, tmp_path, s3) -> Iterator[Store]:
    """delta-rs's own machinery (file statistics, cleanup after failed jobs, commit
    races judged by us): local and S3."""
    yield from _store(request, spark, tmp_path, s3)


@pytest.fixture
def table(store) -> str:
    return store.table("offsets")


@pytest.fixture
def rs_table(rs_store) -> str:
    return rs_store.table("offsets")


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


def test_tables_open_with_deltalake_with_the_same_rows(spark, rs_store, rs_table):
    df = df_of(spark, [*rows_for(D19, ["a", "b"]), NULL_ROW, *rows_for(D20, ["c"])]).coalesce(1)
    write_table(df, rs_table, partition_by=("capture_date",))
    via_deltalake = rs_store.delta(rs_table).to_pyarrow_table()
    via_spark = spark.createDataFrame(via_deltalake.to_pandas(), SCHEMA)
    assert_df_equality(sort(via_spark), sort(read_table(spark, rs_table)), ignore_nullable=True)
    stats = pa.table(rs_store.delta(rs_table).get_add_actions(flatten=True)).to_pylist()
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
    if store.engine == DELTA_RS:  # Delta's connector leaves its file to VACUUM
        assert store.unreferenced_files(table) == []


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
    with run_changed(spark, schema_evolution=True):
        write_table(wider, table, partition_by=("capture_date",))
    rows = {r.group_id: r.rack for r in read_table(spark, table).collect()}
    assert rows == {"a": None, "b": "use1-az1"}


def test_partitioning_must_match(spark, table):
    write_table(df_of(spark, rows_for(D19, ["a"])), table, partition_by=("capture_date",))
    with pytest.raises(SchemaMismatchError, match=r"partitioned by \['capture_date'\]"):
        write_table(df_of(spark, rows_for(D19, ["b"])), table)


def test_commit_info_records_job_run_id_and_date(spark, store, table):
    with run_changed(spark, run_date="2026-11-20"):
        write_table(
            df_of(spark, rows_for(D20, ["a"])),
            table,
            partition_by=("capture_date",),
            commit_info={"rows": 1},
        )
    # Both engines record them as the commit's userMetadata (commit_context.py).
    commit = commit_context(store.delta(table).history(1)[0])
    assert commit["job"] == "pytest"
    assert commit["runDate"] == "2026-11-20"
    assert len(commit["runId"]) == 32
    assert commit["rows"] == 1


def test_concurrent_appends_both_land(spark, rs_store, rs_table):
    write_table(df_of(spark, rows_for(D19, ["seed"])), rs_table, partition_by=("capture_date",))
    errors: list[BaseException] = []

    def append(name: str) -> None:
        try:
            write_table(
                df_of(spark, rows_for(D19, [name])), rs_table, partition_by=("capture_date",)
            )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(r.group_id for r in read_table(spark, rs_table).collect()) == [
        "left",
        "right",
        "seed",
    ]
    assert rs_store.delta(rs_table).version() == 2


@pytest.mark.parametrize(
    "seeded", [D20, D19, None], ids=["rewritten date", "new date", "new table"]
)
def test_concurrent_overwrites_of_one_date_never_duplicate(spark, rs_store, rs_table, seeded):
    if seeded is not None:
        write_table(
            df_of(spark, rows_for(seeded, ["seed"])), rs_table, partition_by=("capture_date",)
        )
    outcomes: dict[str, BaseException | None] = {}

    def overwrite(name: str) -> None:
        try:
            write_table(
                df_of(spark, rows_for(D20, [name, name + "2"])),
                rs_table,
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
    rows = read_table(spark, rs_table).where(F.col("capture_date") == D20).collect()
    assert sorted(r.group_id for r in rows) in (["left", "left2"], ["right", "right2"])
    assert rs_store.unreferenced_files(rs_table) == []


def explode_on_poison(*columns):
    # Nested, so cloudpickle ships it by value (workers cannot import test modules).
    def explode(group_id, lag):
        if group_id == "poison":
            raise ValueError("task failed half-way")
        return lag

    return F.udf(explode, "long")(*columns)


def test_a_task_failing_after_writing_batches_leaves_nothing(spark, rs_store, rs_table):
    """Given one task that writes several Arrow batches and then fails, Then the rs_table
    keeps its version and rows and no Parquet file of the failed write remains."""
    write_table(df_of(spark, rows_for(D19, ["a", "b"])), rs_table, partition_by=("capture_date",))
    rows = rows_for(D20, [f"g{i:02d}" for i in range(40)] + ["poison"])
    failing = df_of(spark, rows).coalesce(1).withColumn("lag", explode_on_poison("group_id", "lag"))
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "8")
    try:
        with pytest.raises(Exception, match="task failed half-way"):
            write_table(failing, rs_table, partition_by=("capture_date",))
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    assert rs_store.delta(rs_table).version() == 0
    assert sorted(r.group_id for r in read_table(spark, rs_table).collect()) == ["a", "b"]
    assert rs_store.unreferenced_files(rs_table) == []
    assert len([p for p in rs_store.listing(rs_table) if p.startswith("_fleet_aborted/")]) == 1


def test_a_failed_multi_task_job_commits_nothing(spark, rs_store, rs_table):
    """Other tasks of the job may be killed mid-write: whatever they leave is never
    referenced, and the next commit to the rs_table sweeps it."""
    write_table(df_of(spark, rows_for(D19, ["a", "b"])), rs_table, partition_by=("capture_date",))
    rows = rows_for(D20, [f"g{i}" for i in range(40)] + ["poison"])
    failing = (
        df_of(spark, rows)
        .repartition(4, "group_id")
        .withColumn("lag", explode_on_poison("group_id", "lag"))
    )
    with pytest.raises(Exception, match="task failed half-way"):
        write_table(failing, rs_table, partition_by=("capture_date",))
    assert rs_store.delta(rs_table).version() == 0
    assert sorted(r.group_id for r in read_table(spark, rs_table).collect()) == ["a", "b"]
    write_table(df_of(spark, rows_for(D19, ["c"])), rs_table, partition_by=("capture_date",))
    assert rs_store.unreferenced_files(rs_table) == []


def test_tables_needing_unsupported_reader_features_are_refused(spark, tmp_path):
    log = tmp_path / "dv" / "_delta_log"
    log.mkdir(parents=True)
    actions = [
        {
            "protocol": {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": ["deletionVectors"],
                "writerFeatures": ["deletionVectors"],
            }
        },
        {
            "metaData": {
                "id": "d1",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": SCHEMA.json(),
                "partitionColumns": [],
                "configuration": {"delta.enableDeletionVectors": "true"},
                "createdTime": 0,
            }
        },
    ]
    (log / "00000000000000000000.json").write_text("\n".join(json.dumps(a) for a in actions))
    with pytest.raises(UnsupportedTableFeatureError, match=r"cannot read .*deletionVectors"):
        read_table(spark, str(tmp_path / "dv"))
    with pytest.raises(UnsupportedTableFeatureError, match=r"cannot write .*deletionVectors"):
        write_table(df_of(spark, rows_for(D19, ["a"])), str(tmp_path / "dv"))


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


# A re-run whose rows are already there commits nothing (storage/unchanged.py).

LOCAL_LEGS = [(DELTA_RS, "local"), (DELTA_SPARK, "local")]


@pytest.fixture(params=LOCAL_LEGS, ids=lambda p: "-".join(p))
def local_store(request, spark, tmp_path, s3) -> Iterator[Store]:
    """Both engines on a local directory (the S3 leg reads and writes the same way)."""
    yield from _store(request, spark, tmp_path, s3)


def files_by_date(store: Store, table: str) -> dict[str, set[str]]:
    actions = pa.table(store.delta(table).get_add_actions(flatten=True)).to_pylist()
    by_date: dict[str, set[str]] = {}
    for a in actions:
        by_date.setdefault(str(a["partition.capture_date"]), set()).add(a["path"])
    return by_date


def replace_dates(spark, table, rows, *days, **options):
    write_table(
        df_of(spark, rows),
        table,
        mode="overwrite",
        partition_by=("capture_date",),
        replace_where={"capture_date": list(days)},
        **options,
    )


def test_an_overwrite_commits_only_the_dates_whose_rows_change(spark, local_store, caplog):
    """Given D19 and D20 (nulls, nested values and microseconds included), Then
    rewriting D20 with its own rows in another order commits nothing; a value one
    microsecond off is a change; and rewriting both dates where only D20 changed
    commits D20 alone: D19 keeps its files."""
    table = local_store.table("offsets")
    day19 = rows_for(D19, ["a", "b"])
    day20 = [*rows_for(D20, ["c", "d"]), (None, None, None, None, None, None, None, D20)]
    write_table(df_of(spark, day19 + day20), table, partition_by=("capture_date",))
    before = files_by_date(local_store, table)
    with caplog.at_level(logging.INFO, logger="fleet_rebalance.storage.unchanged"):
        replace_dates(spark, table, list(reversed(day20)), D20)
    assert local_store.delta(table).version() == 0
    assert files_by_date(local_store, table) == before
    assert "table offsets date 2026-11-20: unchanged, nothing committed" in caplog.text

    later = dt.timedelta(microseconds=1)
    moved = [(*r[:5], r[5] + later if r[5] else None, *r[6:]) for r in day20]
    replace_dates(spark, table, day19 + moved, D19, D20)
    assert local_store.delta(table).version() == 1
    after = files_by_date(local_store, table)
    assert after["2026-11-19"] == before["2026-11-19"]
    assert after["2026-11-20"].isdisjoint(before["2026-11-20"])
    assert_df_equality(
        sort(read_table(spark, table)), sort(df_of(spark, day19 + moved)), ignore_nullable=True
    )


def test_per_run_columns_are_not_compared_and_keep_their_values(spark, local_store):
    table = local_store.table("offsets")
    replace_dates(spark, table, rows_for(D20, ["a"]), D20)
    rerun = [(*r[:3], 9.75, *r[4:]) for r in rows_for(D20, ["a"])]
    replace_dates(spark, table, rerun, D20, per_run_columns=("skew",))
    assert local_store.delta(table).version() == 0
    assert [r.skew for r in read_table(spark, table).collect()] == [1.5]
    replace_dates(spark, table, rerun, D20)
    assert [r.skew for r in read_table(spark, table).collect()] == [9.75]


def test_an_overwrite_with_its_schema_repartitions_the_table_in_one_commit(spark, local_store):
    """How a table written unpartitioned becomes partitioned (ingested_files did)."""
    table = local_store.table("offsets")
    rows = df_of(spark, rows_for(D19, ["a"]) + rows_for(D20, ["b"]))
    write_table(rows, table)
    write_table(
        rows, table, mode="overwrite", partition_by=("capture_date",), overwrite_schema=True
    )
    assert local_store.delta(table).version() == 1
    assert local_store.delta(table).metadata().partition_columns == ["capture_date"]
    assert set(files_by_date(local_store, table)) == {"2026-11-19", "2026-11-20"}
    assert_df_equality(sort(read_table(spark, table)), sort(rows), ignore_nullable=True)


def test_reading_some_dates_opens_only_their_files(spark, local_store):
    table = local_store.table("offsets")
    rows = rows_for(D19, ["a"]) + rows_for(D20, ["b", "c"])
    write_table(df_of(spark, rows), table, partition_by=("capture_date",))
    day = read_table(spark, table, where={"capture_date": D20})
    assert sorted(r.group_id for r in day.collect()) == ["b", "c"]
    assert day.inputFiles() and all("capture_date=2026-11-20" in f for f in day.inputFiles())
    assert read_table(spark, table, where={"capture_date": []}).count() == 0


def test_task_writes_leave_out_dates_whose_rows_are_there(spark, rs_store):
    """The parse tasks' files of a date that holds their rows already are deleted, not
    committed; with none left, nothing is committed."""
    table = rs_store.table("offsets")

    def task_files(rows):
        write = task_write(
            spark,
            table,
            SCHEMA,
            mode="overwrite",
            partition_by=("capture_date",),
            replace_where={"capture_date": [D19, D20]},
        )
        files = write.files()
        for batch in df_of(spark, rows).toArrow().to_batches():
            files.write(batch)
        write.commit(files.close())

    task_files(rows_for(D19, ["a"]) + rows_for(D20, ["b"]))
    before = files_by_date(rs_store, table)
    task_files(rows_for(D19, ["a"]) + rows_for(D20, ["b"]))
    assert rs_store.delta(table).version() == 0
    task_files(rows_for(D19, ["a"]) + rows_for(D20, ["x"]))
    assert rs_store.delta(table).version() == 1
    assert files_by_date(rs_store, table)["2026-11-19"] == before["2026-11-19"]
    assert sorted(r.group_id for r in read_table(spark, table).collect()) == ["a", "x"]
    assert rs_store.unreferenced_files(table) == []


def test_a_write_planned_on_an_older_version_conflicts_with_changes_since(tmp_path):
    """The comparison reads version v and the commit comes later: a commit since v that
    changed the dates the write replaces fails it (nothing committed), one that
    changed another date does not. Log actions only, no data file."""
    from deltalake import DeltaTable as Table
    from deltalake import Field, Schema
    from deltalake.schema import PrimitiveType
    from deltalake.transaction import AddAction, create_table_with_add_actions

    from fleet_rebalance.storage.deltars.commit import write_transaction
    from fleet_rebalance.storage.deltars.files import WriteRequest

    def add(name: str, day: str) -> AddAction:
        path = f"day={day}/{name}.parquet"
        return AddAction(path, 100, {"day": day}, 0, True, "{}")

    uri = str(tmp_path / "t")
    schema = Schema([Field("lag", PrimitiveType("long")), Field("day", PrimitiveType("date"))])
    create_table_with_add_actions(uri, schema, [add("seed", "2026-11-20")], "error", ["day"])
    planned = Table(uri)

    def overwrite(day: str) -> WriteRequest:
        return WriteRequest(uri, "overwrite", ("day",), {"day": [day]}, {}, False, read_version=0)

    write_transaction(Table(uri), overwrite("2026-11-21"), [add("other", "2026-11-21")])
    write_transaction(
        Table(uri), overwrite("2026-11-19"), [add("mine", "2026-11-19")], read=planned
    )
    write_transaction(Table(uri), overwrite("2026-11-20"), [add("theirs", "2026-11-20")])
    with pytest.raises(CommitConflictError, match=r"since version 0; nothing was committed"):
        write_transaction(
            Table(uri), overwrite("2026-11-20"), [add("late", "2026-11-20")], read=planned
        )
    assert Table(uri).version() == 3
