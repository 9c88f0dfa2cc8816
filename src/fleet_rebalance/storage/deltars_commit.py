"""The delta-rs engine's driver side: one transaction per job, and cleanup on abort."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from deltalake import DeltaTable, Schema
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.schema import Field
from deltalake.transaction import AddAction, CommitProperties, create_table_with_add_actions

from fleet_rebalance.storage.deltars_source import (
    ABORTED_DIR,
    WriteRequest,
    WrittenFile,
    add_action_fields,
    file_prefix,
    local_path,
)
from fleet_rebalance.storage.errors import CommitConflictError, ReplaceWhereError
from fleet_rebalance.storage.table_checks import (
    check_partitioning,
    check_writable,
    compare_schemas,
    outside_replace_where,
    schema_fields,
)

log = logging.getLogger(__name__)


def open_table(uri: str, version: int | None = None) -> DeltaTable | None:
    try:
        return DeltaTable(uri, version=version)
    except TableNotFoundError:
        if version is not None and DeltaTable.is_deltatable(uri):
            raise
        return None


def validate_against_table(request: WriteRequest, schema_json: str) -> list[str]:
    """Raise when the write cannot go into the table as it is now; return added columns."""
    table = open_table(request.table_uri)
    if table is None:
        return []
    metadata = table.metadata()
    check_writable(request.table_uri, table.protocol(), metadata.configuration)
    check_partitioning(request.table_uri, metadata.partition_columns, request.partition_by)
    return compare_schemas(
        request.table_uri, table.schema().to_json(), schema_json, request.schema_evolution
    )


def commit_files(request: WriteRequest, schema_json: str, files: list[WrittenFile]) -> None:
    """Commit every task's files at once; on any failure delete them before re-raising
    (Spark does not promise to call abort when the commit itself fails)."""
    try:
        _commit(request, schema_json, files)
    except BaseException:
        delete_uncommitted(request, files)
        raise


def _commit(request: WriteRequest, schema_json: str, files: list[WrittenFile]) -> None:
    uri = request.table_uri
    if request.replace_where:
        stray = [
            f.path
            for f in files
            if outside_replace_where(request.replace_where, f.partition_values)
        ]
        if stray:
            raise ReplaceWhereError(
                f"{uri}: {len(stray)} file(s) hold rows outside replace_where "
                f"{request.replace_where}, e.g. {stray[0]}"
            )
    actions = [AddAction(**add_action_fields(f)) for f in files]
    properties = CommitProperties(custom_metadata=request.commit_info, max_commit_retries=15)
    schema = Schema.from_json(schema_json)
    table = open_table(uri)
    if table is None:
        try:
            create_table_with_add_actions(
                uri,
                schema,
                actions,
                mode="error",
                partition_by=list(request.partition_by),
                commit_properties=properties,
            )
            log.info("%s: created with %d file(s)", uri, len(actions))
            return
        except DeltaError as exc:
            table = open_table(uri)
            if table is None:
                raise
            log.info("%s: created concurrently (%s); committing into it", uri, exc)
    added = validate_against_table(request, schema_json)
    if added:
        table_fields = schema_fields(table.schema().to_json())
        new_fields = [
            Field.from_json(json.dumps({**f, "nullable": True}))
            for n, f in schema_fields(schema_json).items()
            if n in added and n not in table_fields
        ]
        table.alter.add_columns(new_fields, commit_properties=properties)
        table = open_table(uri)
    # The table's own schema keeps its column order and nullability.
    schema = table.schema()
    filters = None
    if request.replace_where:
        filters = [(c, "in", list(v)) for c, v in request.replace_where.items()]
    try:
        table.create_write_transaction(
            actions,
            request.mode,
            schema,
            partition_by=list(request.partition_by),
            partition_filters=filters,
            commit_properties=properties,
        )
    except CommitFailedError as exc:
        raise CommitConflictError(
            f"{uri}: commit conflicts with a concurrent transaction; nothing was committed: {exc}"
        ) from exc
    log.info("%s: %s of %d file(s) committed", uri, request.mode, len(actions))
    sweep_aborted(uri)


TOMBSTONE_TTL_S = 24 * 3600


def delete_uncommitted(request: WriteRequest, files: list[WrittenFile]) -> None:
    """Delete every file of this write that no commit references: the ones tasks
    reported, and any left by tasks killed mid-write (found by the write id). A
    tombstone makes tasks still running delete their own files when they finish."""
    root = Path(local_path(request.table_uri))
    tombstone = root / ABORTED_DIR / request.write_id
    tombstone.parent.mkdir(parents=True, exist_ok=True)
    tombstone.touch()
    _delete_write(
        root,
        request.write_id,
        {root / written.path for written in files},
        _referenced(request.table_uri),
    )


def sweep_aborted(table_uri: str) -> None:
    """After a commit: remove what late tasks of aborted writes left behind."""
    root = Path(local_path(table_uri))
    tombstones = list((root / ABORTED_DIR).glob("*"))
    if not tombstones:
        return
    referenced = _referenced(table_uri)
    for tombstone in tombstones:
        _delete_write(root, tombstone.name, set(), referenced)
        if time.time() - tombstone.stat().st_mtime > TOMBSTONE_TTL_S:
            tombstone.unlink(missing_ok=True)


def _referenced(uri: str) -> set[str]:
    table = open_table(uri)
    return set(table.file_uris()) if table is not None else set()


def _delete_write(root: Path, write_id: str, known: set[Path], referenced: set[str]) -> None:
    candidates = known | set(root.rglob(f"{file_prefix(write_id)}*"))
    for path in candidates:
        if str(path) not in referenced:
            path.unlink(missing_ok=True)
