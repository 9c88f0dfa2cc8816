"""What a write or read must agree on with an existing Delta table: checked before
Delta is asked, so a mismatch names every column and the partitions in question."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fleet_rebalance.storage.errors import (
    ReplaceWhereError,
    SchemaMismatchError,
    StorageError,
    UnsupportedTableFeatureError,
)
from fleet_rebalance.storage.partitions import partition_strings

# Reader features a Delta reader outside Spark (deltalake's Arrow dataset, under
# `sql --engine duckdb`) would misread; delta-spark writes none of them here.
UNSUPPORTED_READER_FEATURES = {
    "columnMapping": "column mapping (physical column names differ from logical ones)",
    "deletionVectors": "deletion vectors (rows deleted outside the Parquet files)",
    "typeWidening": "type widening (older files hold narrower types)",
    "typeWidening-preview": "type widening (older files hold narrower types)",
    "variantType": "variant columns",
    "variantType-preview": "variant columns",
    "variantShredding-preview": "shredded variant columns",
}
OUTSIDE_SPARK = "read it with the sql job on Spark (--engine spark)"


def check_readable(uri: str, protocol: Any, configuration: Mapping[str, str | None]) -> None:
    """A table a reader outside Spark can read as plain Parquet files, or an error."""
    found = sorted(set(protocol.reader_features or ()) & set(UNSUPPORTED_READER_FEATURES))
    if found:
        names = ", ".join(f"{f} ({UNSUPPORTED_READER_FEATURES[f]})" for f in found)
        raise UnsupportedTableFeatureError(
            f"{uri}: cannot read outside Spark: the table needs {names}; {OUTSIDE_SPARK}"
        )
    mode = configuration.get("delta.columnMapping.mode") or "none"
    if mode != "none":
        raise UnsupportedTableFeatureError(
            f"{uri}: cannot read outside Spark: the table uses column mapping "
            f"(delta.columnMapping.mode={mode}); {OUTSIDE_SPARK}"
        )


def _strip_nullability(kind: Any) -> Any:
    """Delta/Spark JSON type with every nullable flag and metadata dropped."""
    if isinstance(kind, dict):
        return {
            k: _strip_nullability(v)
            for k, v in kind.items()
            if k not in ("nullable", "containsNull", "valueContainsNull", "metadata")
        }
    if isinstance(kind, list):
        return [_strip_nullability(v) for v in kind]
    return kind


def schema_fields(schema_json: str) -> dict[str, dict[str, Any]]:
    return {f["name"]: f for f in json.loads(schema_json)["fields"]}


def compare_schemas(uri: str, table_json: str, write_json: str, evolution: bool) -> list[str]:
    """Return the new columns the write adds; raise when the schemas disagree otherwise.

    Nullability is not compared: Spark marks most DataFrame columns nullable. Added
    columns join the table as nullable (older rows hold null), as Delta's mergeSchema does.
    """
    table, write = schema_fields(table_json), schema_fields(write_json)
    problems = []
    for name, field in table.items():
        if name not in write:
            problems.append(f"{name} (missing from the write)")
        elif _strip_nullability(field["type"]) != _strip_nullability(write[name]["type"]):
            theirs, ours = _type_text(field["type"]), _type_text(write[name]["type"])
            problems.append(f"{name} (table {theirs}, write {ours})")
    added = [n for n in write if n not in table]
    if added and not evolution:
        problems += [f"{n} (not in the table; schema_evolution is off)" for n in added]
    if problems:
        raise SchemaMismatchError(f"{uri}: schema mismatch in columns: " + "; ".join(problems))
    return added


def _type_text(kind: Any) -> str:
    return kind if isinstance(kind, str) else json.dumps(_strip_nullability(kind))


def check_partitioning(
    uri: str, table_columns: Sequence[str], write_columns: Sequence[str]
) -> None:
    if list(table_columns) != list(write_columns):
        raise SchemaMismatchError(
            f"{uri}: table is partitioned by {list(table_columns)}, "
            f"the write by {list(write_columns)}"
        )


def normalise_replace_where(
    replace_where: Mapping[str, Any] | None, partition_by: Sequence[str], uri: str
) -> dict[str, list[str | None]] | None:
    """{"capture_date": "2026-11-20"} or a list of values -> Delta partition strings."""
    if replace_where is None:
        return None
    if not replace_where:
        raise ReplaceWhereError(f"{uri}: replace_where is empty; pass None to overwrite all")
    unknown = [c for c in replace_where if c not in partition_by]
    if unknown:
        raise ReplaceWhereError(
            f"{uri}: replace_where on {unknown} but the table is partitioned by "
            f"{list(partition_by)}: only partition columns can be replaced"
        )
    return partition_strings(replace_where)


def check_partitioned(uri: str, columns: Sequence[str], column: str) -> None:
    """A read of a partition column's values needs the table partitioned by it."""
    if column not in columns:
        raise StorageError(f"{uri}: not partitioned by {column} (partitions: {list(columns)})")
