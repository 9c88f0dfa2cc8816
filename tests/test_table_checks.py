import json
from types import SimpleNamespace

import pytest

from fleet_rebalance.storage.errors import (
    ReplaceWhereError,
    SchemaMismatchError,
    UnsupportedTableFeatureError,
)
from fleet_rebalance.storage.table_checks import (
    check_partitioning,
    check_readable,
    check_writable,
    compare_schemas,
    normalise_replace_where,
    outside_replace_where,
)


def schema(*fields: tuple[str, object, bool]) -> str:
    return json.dumps(
        {
            "type": "struct",
            "fields": [
                {"name": n, "type": t, "nullable": nullable, "metadata": {}}
                for n, t, nullable in fields
            ],
        }
    )


TABLE = schema(("group_id", "string", True), ("lag", "long", True))


def test_equal_schemas_pass_whatever_the_nullability():
    assert (
        compare_schemas(
            "t", TABLE, schema(("group_id", "string", False), ("lag", "long", True)), False
        )
        == []
    )


def test_mismatch_names_every_differing_column():
    with pytest.raises(
        SchemaMismatchError,
        match=r"t: schema mismatch in columns: group_id \(missing from the write\); "
        r"lag \(table long, write integer\); extra \(not in the table; "
        r"schema_evolution is off\)",
    ):
        compare_schemas(
            "t", TABLE, schema(("lag", "integer", True), ("extra", "string", True)), False
        )


def test_evolution_allows_new_columns():
    write = schema(("group_id", "string", True), ("lag", "long", True), ("rack", "string", False))
    assert compare_schemas("t", TABLE, write, True) == ["rack"]


def test_nested_types_are_compared_structurally():
    assignment = {
        "type": "array",
        "containsNull": True,
        "elementType": {
            "type": "struct",
            "fields": [{"name": "topic", "type": "string", "nullable": True, "metadata": {}}],
        },
    }
    renamed = json.loads(json.dumps(assignment))
    renamed["elementType"]["fields"][0]["name"] = "t"
    with pytest.raises(SchemaMismatchError, match="assignment"):
        compare_schemas(
            "t",
            schema(("assignment", assignment, True)),
            schema(("assignment", renamed, True)),
            False,
        )


def protocol(reader=None, writer=None):
    return SimpleNamespace(reader_features=reader, writer_features=writer)


def test_unreadable_features_are_named():
    with pytest.raises(UnsupportedTableFeatureError, match=r"/t: cannot read .*deletionVectors"):
        check_readable("/t", protocol(reader=["deletionVectors", "timestampNtz"]), {})
    with pytest.raises(UnsupportedTableFeatureError, match=r"delta\.columnMapping\.mode=name"):
        check_readable("/t", protocol(), {"delta.columnMapping.mode": "name"})
    check_readable("/t", protocol(reader=["timestampNtz", "v2Checkpoint"]), {})


def test_unwritable_features_are_named():
    with pytest.raises(UnsupportedTableFeatureError, match=r"cannot write .*checkConstraints"):
        check_writable("/t", protocol(writer=["appendOnly", "checkConstraints"]), {})


def test_partitioning_must_match_the_table():
    with pytest.raises(
        SchemaMismatchError, match=r"partitioned by \['capture_date'\], the write by"
    ):
        check_partitioning("t", ["capture_date"], [])


def test_replace_where_must_name_partition_columns():
    with pytest.raises(ReplaceWhereError, match=r"replace_where on \['group_id'\]"):
        normalise_replace_where({"group_id": "g"}, ["capture_date"], "t")
    assert normalise_replace_where(
        {"capture_date": ["2026-11-20", "2026-11-19"]}, ["capture_date"], "t"
    ) == {"capture_date": ["2026-11-19", "2026-11-20"]}
    where = {"capture_date": ["2026-11-20"]}
    assert outside_replace_where(where, {"capture_date": "2026-11-19"})
    assert not outside_replace_where(where, {"capture_date": "2026-11-20"})
