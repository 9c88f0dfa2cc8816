"""Lost commit races on the delta-rs engine, replayed deterministically: two writers
read one snapshot, one commits, then the other. Only add actions are written to the
log; no data file is read, so these run in milliseconds."""

from __future__ import annotations

import pytest
from deltalake import DeltaTable, Field, Schema
from deltalake.schema import PrimitiveType
from deltalake.transaction import AddAction, create_table_with_add_actions

from fleet_rebalance.storage import CommitConflictError, ReplaceWhereError
from fleet_rebalance.storage.deltars_commit import validate_against_table, write_transaction
from fleet_rebalance.storage.deltars_source import WriteRequest

SCHEMA = Schema([Field("lag", PrimitiveType("long")), Field("day", PrimitiveType("date"))])
D19, D20, D21 = "2026-11-19", "2026-11-20", "2026-11-21"


def add(name: str, day: str | None) -> AddAction:
    return AddAction(
        path=f"day={day or '__HIVE_DEFAULT_PARTITION__'}/{name}.parquet",
        size=100,
        partition_values={"day": day},
        modification_time=0,
        data_change=True,
        stats="{}",
    )


def overwrite(uri: str, *days: str | None) -> WriteRequest:
    return WriteRequest(
        uri, "overwrite", ("day",), {"day": list(days)} if days else None, {}, False
    )


def append(uri: str) -> WriteRequest:
    return WriteRequest(uri, "append", ("day",), None, {}, False)


@pytest.fixture
def uri(tmp_path) -> str:
    uri = str(tmp_path / "offsets")
    create_table_with_add_actions(
        uri, SCHEMA, [add("seed", D19)], mode="error", partition_by=["day"]
    )
    return uri


def files(uri: str) -> list[str]:
    return sorted(
        path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1]
        for path in DeltaTable(uri).file_uris()
    )


def race(uri: str, first: WriteRequest, second: WriteRequest, day: str | None = D20) -> None:
    """Both writers read the same snapshot; `first` commits before `second` tries."""
    left, right = DeltaTable(uri), DeltaTable(uri)
    write_transaction(left, first, [add("first", day)])
    write_transaction(right, second, [add("second", day)])


@pytest.mark.parametrize("seeded", [False, True], ids=["new date", "rewritten date"])
def test_two_overwrites_of_one_date_never_both_land(uri, seeded):
    if seeded:
        write_transaction(DeltaTable(uri), append(uri), [add("old", D20)])
    with pytest.raises(CommitConflictError, match=r"files this overwrite replaces .* were changed"):
        race(uri, overwrite(uri, D20), overwrite(uri, D20))
    assert files(uri) == [f"day={D19}/seed.parquet", f"day={D20}/first.parquet"]


def test_two_overwrites_of_the_null_partition_never_both_land(uri):
    write_transaction(DeltaTable(uri), append(uri), [add("old", None)])
    with pytest.raises(CommitConflictError):
        race(uri, overwrite(uri, None), overwrite(uri, None), day=None)
    assert files(uri) == [f"day={D19}/seed.parquet", "day=__HIVE_DEFAULT_PARTITION__/first.parquet"]


def test_null_and_dated_partitions_of_one_column_are_refused_before_any_write(uri):
    with pytest.raises(ReplaceWhereError, match="null and non-null partitions of day"):
        validate_against_table(overwrite(uri, None, D20), SCHEMA.to_json())


def test_an_overwrite_commits_over_a_concurrent_write_to_another_date(uri):
    left, right = DeltaTable(uri), DeltaTable(uri)
    write_transaction(left, overwrite(uri, D21), [add("first", D21)])
    assert write_transaction(right, overwrite(uri, D20), [add("second", D20)]) == 2
    assert files(uri) == [
        f"day={D19}/seed.parquet",
        f"day={D20}/second.parquet",
        f"day={D21}/first.parquet",
    ]


def test_concurrent_appends_both_land(uri):
    race(uri, append(uri), append(uri))
    assert files(uri) == [
        f"day={D19}/seed.parquet",
        f"day={D20}/first.parquet",
        f"day={D20}/second.parquet",
    ]


def test_a_whole_table_overwrite_conflicts_with_any_concurrent_add(uri):
    with pytest.raises(CommitConflictError, match="the whole table"):
        race(uri, append(uri), overwrite(uri))
    assert files(uri) == [f"day={D19}/seed.parquet", f"day={D20}/first.parquet"]


def test_a_concurrent_schema_change_is_a_conflict(uri):
    stale = DeltaTable(uri)
    DeltaTable(uri).alter.add_columns([Field("skew", PrimitiveType("double"))])
    with pytest.raises(CommitConflictError, match="schema"):
        write_transaction(stale, append(uri), [add("late", D20)])
    assert files(uri) == [f"day={D19}/seed.parquet"]
