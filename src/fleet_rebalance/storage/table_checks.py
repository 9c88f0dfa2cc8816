"""What a write or read must agree on with an existing Delta table.

Shared by the driver (early, clear errors before any task runs) and the commit (the
table may have changed while the job ran).
"""

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

# Reader features whose files Spark's plain Parquet reader would misread.
UNSUPPORTED_READER_FEATURES = {
    "columnMapping": "column mapping (physical column names differ from logical ones)",
    "deletionVectors": "deletion vectors (rows deleted outside the Parquet files)",
    "typeWidening": "type widening (older files hold narrower types)",
    "typeWidening-preview": "type widening (older files hold narrower types)",
    "variantType": "variant columns",
    "variantType-preview": "variant columns",
    "variantShredding-preview": "shredded variant columns",
}
# Writer features a blind file append would violate without enforcing them.
UNSUPPORTED_WRITER_FEATURES = {
    "invariants": "column invariants",
    "checkConstraints": "CHECK constraints",
    "generatedColumns": "generated columns",
    "identityColumns": "identity columns",
    "changeDataFeed": "change data feed",
    "rowTracking": "row tracking",
    "clustering": "liquid clustering",
    "inCommitTimestamp": "in-commit timestamps",
    **UNSUPPORTED_READER_FEATURES,
}


def check_readable(uri: str, protocol: Any, configuration: Mapping[str, str | None]) -> None:
    features = set(protocol.reader_features or ())
    _refuse(uri, "read", features, UNSUPPORTED_READER_FEATURES)
    mode = configuration.get("delta.columnMapping.mode") or "none"
    if mode != "none":
        raise UnsupportedTableFeatureError(
            f"{uri}: table uses column mapping (delta.columnMapping.mode={mode}), "
            "which the delta-rs engine cannot read; use storage.engine: delta-spark"
        )


def check_writable(uri: str, protocol: Any, configuration: Mapping[str, str | None]) -> None:
    features = set(protocol.writer_features or ()) | set(protocol.reader_features or ())
    if configuration.get("delta.enableChangeDataFeed") == "true":
        features.add("changeDataFeed")
    _refuse(uri, "write", features, UNSUPPORTED_WRITER_FEATURES)
    check_readable(uri, protocol, configuration)


def _refuse(uri: str, action: str, features: set[str], unsupported: Mapping[str, str]) -> None:
    found = sorted(features & set(unsupported))
    if found:
        names = ", ".join(f"{f} ({unsupported[f]})" for f in found)
        raise UnsupportedTableFeatureError(
            f"{uri}: cannot {action} with the delta-rs engine: table needs {names}; "
            "use storage.engine: delta-spark"
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


def outside_replace_where(
    replace_where: Mapping[str, Sequence[str | None]], values: Mapping[str, str | None]
) -> bool:
    return any(values.get(c) not in allowed for c, allowed in replace_where.items())


def check_partitioned(uri: str, columns: Sequence[str], column: str) -> None:
    """A read of a partition column's values needs the table partitioned by it."""
    if column not in columns:
        raise StorageError(f"{uri}: not partitioned by {column} (partitions: {list(columns)})")
