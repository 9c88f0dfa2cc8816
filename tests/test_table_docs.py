"""The tables documented where they live: every column of every table has a description
(table_docs.py), docs/tables.md is what the schemas and those descriptions render to,
and the same descriptions are the Delta column comments a new table gets, so `DESCRIBE`
and any Delta reader's schema (deltalake's here) show them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from deltalake import DeltaTable
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from fleet_rebalance.pipeline import bronze, gold, table_reference
from fleet_rebalance.storage import write_table
from fleet_rebalance.storage.column_comments import commented_frame, commented_schema
from fleet_rebalance.storage.context import changed_context
from fleet_rebalance.storage.warehouse import Warehouse
from fleet_rebalance.table_docs import column_comments

PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)


def test_every_column_of_every_table_has_a_description():
    missing = table_reference.problems()
    assert missing == [], "table_docs.py and the schemas disagree:\n" + "\n".join(missing)


def test_docs_tables_md_is_what_the_schemas_and_descriptions_render_to():
    committed = (PROJECT / "docs" / "tables.md").read_text(encoding="utf-8")
    assert committed == table_reference.render(), (
        f"docs/tables.md is stale: run `{table_reference.COMMAND}` from the project root"
    )


def test_the_check_names_each_missing_and_each_stray_description():
    """Given a written table with an undocumented column, a description of a column it
    lacks, a table with no entry and an entry for a table no layer has; Then one line
    each, naming layer, table and column."""
    two = StructType([StructField("a", StringType()), StructField("b", IntegerType())])
    tables = {"gold": {"t": two, "new": StructType([StructField("x", StringType())])}}
    docs = {
        "gold": {
            "t": {"about": "T.", "columns": {"a": "A.", "gone": "Gone."}},
            "old": {"about": "Old.", "columns": {}},
        }
    }
    assert table_reference.problems(tables, docs) == [
        "gold.t.b: column has no description",
        "gold.t.gone: description of a column the table does not have",
        "gold.new: table has no entry (about and columns)",
        "gold.new.x: column has no description",
        "gold.old: description of a table the gold layer does not have",
    ]


def test_the_rendered_reference_lists_each_column_with_its_type_and_description():
    text = table_reference.render()
    assert "### group_health\n" in text
    lag = column_comments("offsets")["lag"]
    assert f"| `lag` | `bigint` | {lag} |" in text
    assert (
        "| `assignment` | `array<struct<topic:string,partition:int>>` | "
        f"{column_comments('members')['assignment']} |"
    ) in text


def test_commented_schema_and_frame_carry_the_descriptions_and_keep_other_metadata(spark):
    schema = StructType(
        [
            StructField("lag", IntegerType(), metadata={"origin": "capture"}),
            StructField("not_documented", StringType()),
        ]
    )
    expected = [
        {"origin": "capture", "comment": column_comments("offsets")["lag"]},
        {},
    ]
    assert [f.metadata for f in commented_schema(schema, "offsets").fields] == expected
    frame = commented_frame(spark.createDataFrame([(1, "x")], schema), "offsets")
    assert [f.metadata for f in frame.schema.fields] == expected
    assert frame.collect() == [(1, "x")]


def _comments(uri: str) -> dict[str, str | None]:
    """Each column's comment as deltalake reads the table's schema from its log."""
    fields = json.loads(DeltaTable(uri).schema().to_json())["fields"]
    return {f["name"]: f["metadata"].get("comment") for f in fields}


def _described(spark, name: str) -> dict[str, str | None]:
    """`DESCRIBE name`'s columns and comments (the partition section left out)."""
    found = {}
    for row in spark.sql(f"DESCRIBE {name}").collect():
        if not row["col_name"] or row["col_name"].startswith("#"):
            break
        found[row["col_name"]] = row["comment"]
    return found


def _one_row(spark, table: str, schema: StructType, **values):
    row = {name: None for name in schema.fieldNames()} | values
    return spark.createDataFrame([tuple(row.values())], schema)


def _expected(table: str, schema: StructType) -> dict[str, str | None]:
    return {name: column_comments(table).get(name) for name in schema.fieldNames()}


def test_describe_group_health_shows_each_column_s_description(spark, tmp_path):
    """A group_health table the Warehouse created: deltalake's reading of its log and
    Spark's `DESCRIBE` (the sql job's name for it) give every column its description."""
    schema = gold.TABLES["group_health"]
    frame = _one_row(spark, "group_health", schema, cluster="c", group_id="g", date=DAY)
    expected = _expected("group_health", schema)
    warehouse = Warehouse(spark, str(tmp_path / "wh"))
    warehouse.replace_dates(frame, "group_health", "date", [DAY], 1)
    spark.sql("DROP TABLE IF EXISTS group_health")
    try:
        warehouse.name_for_sql("group_health")
        described = _described(spark, "group_health")
    finally:
        spark.sql("DROP TABLE IF EXISTS group_health")
    assert _comments(warehouse.uri("group_health")) == expected
    assert described == expected
    assert all(expected.values())


def test_a_table_created_without_comments_keeps_its_columns_and_a_new_one_gets_its_comment(
    spark, tmp_path
):
    """A warehouse from before the comments: its tables take the Warehouse's writes; their
    existing columns stay without comments (a write does not change a column's
    metadata) and a column schema evolution adds comes with its comment."""
    schema = bronze.TABLES["quarantine"]
    warehouse = Warehouse(spark, str(tmp_path / "wh"))
    uri = warehouse.uri("quarantine")
    before = _one_row(spark, "quarantine", schema, reason="old", capture_date=DAY).drop("kind")
    later = DAY + dt.timedelta(days=1)
    after = _one_row(spark, "quarantine", schema, reason="new", kind="offsets", capture_date=later)
    write_table(before, uri, mode="overwrite", partition_by=("capture_date",))
    with changed_context(spark, schema_evolution=True):
        Warehouse(spark, warehouse.root.uri).replace_dates(
            after, "quarantine", "capture_date", [later], 1
        )
    assert _comments(uri) == {
        name: column_comments("quarantine")[name] if name == "kind" else None
        for name in [*before.columns, "kind"]
    }
    assert sorted(r["reason"] for r in warehouse.read("quarantine").collect()) == ["new", "old"]
