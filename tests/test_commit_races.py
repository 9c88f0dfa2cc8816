"""Commit races under Delta's optimistic concurrency, forced: writer A's transaction has
read the table and its tasks are held (a Python UDF waits for a file) until writer B has
committed; only then may A try to commit."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from cluster_support import held_until, wait_for

from fleet_rebalance.cli.job_failures import CONFLICT_HINT, failure_line
from fleet_rebalance.storage import CommitConflictError, read_table, write_table

pytestmark = pytest.mark.spark
DAY, OTHER_DAY = dt.date(2026, 11, 20), dt.date(2026, 11, 19)
WAIT_S = 120


def race(spark, tmp_path: Path, table: str, write_a: Callable, write_b: Callable) -> list:
    """Run write_a(held) in a thread, held once its transaction has read the table;
    write_b() meanwhile; then release A. Returns A's failures."""
    started, go = tmp_path / "a-started", tmp_path / "b-committed"
    held = held_until(started, go, WAIT_S)
    failures: list[BaseException] = []

    def writer_a() -> None:
        try:
            write_a(held)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=writer_a)
    thread.start()
    wait_for(started, WAIT_S)
    write_b()
    go.touch()
    thread.join(WAIT_S)
    assert not thread.is_alive()
    return failures


def rows(spark, group: str, day: dt.date = DAY):
    return spark.createDataFrame([(group, 1, day)], "group_id string, lag int, capture_date date")


def overwrite_day(df, table: str, day: dt.date = DAY) -> None:
    write_table(
        df,
        table,
        mode="overwrite",
        partition_by=("capture_date",),
        replace_where={"capture_date": day},
    )


@pytest.mark.parametrize("seeded", [True, False], ids=["rewritten date", "new table"])
def test_two_overwrites_of_one_date_never_both_land(spark, tmp_path, seeded):
    """Given A and B replacing the same date (of an existing table, or both creating
    it), Then A's commit fails as CommitConflictError, commits nothing, and its job's
    one line says to run it again; the table holds B's rows alone."""
    table = str(tmp_path / "offsets")
    if seeded:
        write_table(rows(spark, "seed"), table, partition_by=("capture_date",))
    failures = race(
        spark,
        tmp_path,
        table,
        lambda held: overwrite_day(rows(spark, "a").withColumn("lag", held("lag")), table),
        lambda: overwrite_day(rows(spark, "b"), table),
    )
    assert len(failures) == 1 and isinstance(failures[0], CommitConflictError), failures
    assert [r.group_id for r in read_table(spark, table).collect()] == ["b"]
    line = failure_line(failures[0])
    assert line is not None and line.endswith(CONFLICT_HINT)
    assert "a concurrent transaction committed first" in line


def test_an_overwrite_commits_over_a_concurrent_write_to_another_date(spark, tmp_path):
    """Replacing different dates at once is no conflict: both land."""
    table = str(tmp_path / "offsets")
    write_table(rows(spark, "seed"), table, partition_by=("capture_date",))
    failures = race(
        spark,
        tmp_path,
        table,
        lambda held: overwrite_day(rows(spark, "a").withColumn("lag", held("lag")), table),
        lambda: overwrite_day(rows(spark, "b", OTHER_DAY), table, OTHER_DAY),
    )
    assert failures == []
    assert sorted(r.group_id for r in read_table(spark, table).collect()) == ["a", "b"]
