import datetime as dt
import json
from types import SimpleNamespace

import pytest

from fleet_rebalance.storage.errors import (
    ReplaceWhereError,
    SchemaMismatchError,
    UnsupportedTableFeatureError,
)
from fleet_rebalance.storage.partitions import partition_strings, partition_value
from fleet_rebalance.storage.table_checks import (
    check_partitioning,
    check_readable,
    compare_schemas,
    normalise_replace_where,
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


def test_features_a_reader_outside_spark_cannot_honour_are_named():
    with pytest.raises(
        UnsupportedTableFeatureError, match=r"/t: cannot read outside Spark: .*deletionVectors"
    ):
        check_readable("/t", protocol(reader=["deletionVectors", "timestampNtz"]), {})
    with pytest.raises(UnsupportedTableFeatureError, match=r"delta\.columnMapping\.mode=name"):
        check_readable("/t", protocol(), {"delta.columnMapping.mode": "name"})
    check_readable("/t", protocol(reader=["timestampNtz", "v2Checkpoint"]), {})


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


def test_partition_values_are_the_logs_strings():
    assert partition_strings(
        {"d": [dt.date(2026, 11, 20), None], "at": dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)}
    ) == {"d": ["2026-11-20", None], "at": ["2026-11-20 09:10:00.000000"]}
    assert partition_value(True) == "true"
