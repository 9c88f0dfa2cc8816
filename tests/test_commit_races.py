"""Lost commit races on the delta-rs engine, replayed deterministically: two writers
read one snapshot, one commits, then the other. Only add actions are written to the
log; no data file is read, so these run in milliseconds."""

from __future__ import annotations

import pytest
from deltalake import DeltaTable, Field, Schema
from deltalake.schema import PrimitiveType
from deltalake.transaction import AddAction, create_table_with_add_actions

from fleet_rebalance.storage import CommitConflictError, ReplaceWhereError
from fleet_rebalance.storage.deltars.commit import validate_against_table, write_transaction
from fleet_rebalance.storage.deltars.files import WriteRequest

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


def created_by_another(uri: str, monkeypatch, request: WriteRequest) -> None:
    """`request` commits as a writer that found no table, although another writer has
    just created it with D20's rows (the race two writers of a new table run)."""
    from fleet_rebalance.storage.deltars import commit as deltars_commit
    from fleet_rebalance.storage.engine import WrittenFile

    create_table_with_add_actions(
        uri, SCHEMA, [add("first", D20)], mode="error", partition_by=["day"]
    )
    found = deltars_commit.open_table
    calls: list[int] = []

    def not_yet(*args, **kwargs):
        calls.append(1)
        return None if len(calls) == 1 else found(*args, **kwargs)

    monkeypatch.setattr(deltars_commit, "open_table", not_yet)
    day = (request.replace_where or {"day": [D20]})["day"][0]
    written = WrittenFile(f"day={day}/second.parquet", 100, {"day": day}, 0, "{}")
    deltars_commit._commit(request, SCHEMA.to_json(), [written])


def test_two_overwrites_creating_one_table_never_both_land(tmp_path, monkeypatch):
    """delta-rs retries a create that lost the race as an append over the winner's
    files; the loser read no rows of the date, so its overwrite is a conflict."""
    uri = str(tmp_path / "new")
    with pytest.raises(CommitConflictError, match="created with rows this overwrite replaces"):
        created_by_another(uri, monkeypatch, overwrite(uri, D20))
    assert files(uri) == ["day=2026-11-20/first.parquet"]


def test_a_write_creating_a_table_another_created_commits_into_it(tmp_path, monkeypatch):
    uri = str(tmp_path / "new")
    created_by_another(uri, monkeypatch, overwrite(uri, D21))
    assert files(uri) == ["day=2026-11-20/first.parquet", "day=2026-11-21/second.parquet"]
    other = str(tmp_path / "appended")
    created_by_another(other, monkeypatch, append(other))
    assert files(other) == ["day=2026-11-20/first.parquet", "day=2026-11-20/second.parquet"]


def test_two_overwrites_creating_one_table_at_once_leave_one_writers_rows(tmp_path, monkeypatch):
    """Both find no table and create it at the same moment (a barrier before delta-rs's
    create; it lets both creates through in most tries when it retries commits). Ten
    tries: each leaves one writer's rows and a conflict for the other."""
    import threading

    from fleet_rebalance.storage.deltars import commit as deltars_commit
    from fleet_rebalance.storage.engine import WrittenFile

    create = deltars_commit.create_table_with_add_actions
    for attempt in range(10):
        uri = str(tmp_path / f"new-{attempt}")
        barrier = threading.Barrier(2, timeout=30)

        def at_once(*args, barrier=barrier, **kwargs):
            barrier.wait()
            return create(*args, **kwargs)

        monkeypatch.setattr(deltars_commit, "create_table_with_add_actions", at_once)
        outcomes: dict[str, BaseException | None] = {}

        def write(name: str, uri: str = uri, outcomes: dict = outcomes) -> None:
            written = WrittenFile(f"day={D20}/{name}.parquet", 100, {"day": D20}, 0, "{}")
            try:
                deltars_commit._commit(overwrite(uri, D20), SCHEMA.to_json(), [written])
                outcomes[name] = None
            except BaseException as exc:
                outcomes[name] = exc

        threads = [threading.Thread(target=write, args=(n,)) for n in ("left", "right")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        failed = [e for e in outcomes.values() if e is not None]
        assert len(failed) == 1 and isinstance(failed[0], CommitConflictError), outcomes
        assert len(files(uri)) == 1
