"""The delta-rs engine's driver side: one transaction per job, and cleanup on abort."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pyarrow as pa
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
from fleet_rebalance.storage.partitions import partition_value
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
    _partition_filters(request)
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
    version = write_transaction(table, request, actions)
    log.info(
        "%s: %s of %d file(s) committed as version %d", uri, request.mode, len(actions), version
    )
    sweep_aborted(uri)


MAX_COMMIT_ATTEMPTS = 15


def write_transaction(table: DeltaTable, request: WriteRequest, actions: list[AddAction]) -> int:
    """Commit `actions` over the snapshot `table` was read at; return the new version.

    delta-rs's own retry checks an overwrite against what concurrent commits removed,
    not what they added: two overwrites of a date nobody had written yet would both
    land, every row twice. So each lost race is judged here, Delta's WriteSerializable
    way: a concurrent commit that changed the files this write replaces, or the table's
    metadata, is a conflict; any other is committed over."""
    uri = request.table_uri
    read, filters = table, _partition_filters(request)
    for _ in range(MAX_COMMIT_ATTEMPTS):
        try:
            table.create_write_transaction(
                actions,
                request.mode,
                table.schema(),  # the table's own: its column order and nullability
                partition_by=list(request.partition_by),
                partition_filters=filters,
                commit_properties=CommitProperties(
                    custom_metadata=request.commit_info, max_commit_retries=0
                ),
            )
            return table.version() + 1
        except CommitFailedError as exc:
            latest = open_table(uri)
            if latest is None or latest.version() <= table.version():
                raise  # not a lost race
            conflict = _conflict(read, latest, request)
            if conflict:
                raise CommitConflictError(
                    f"{uri}: {conflict} by a concurrent commit since version "
                    f"{read.version()}; nothing was committed"
                ) from exc
            table = latest
    raise CommitConflictError(
        f"{uri}: lost the commit race {MAX_COMMIT_ATTEMPTS} times; nothing was committed"
    )


def _partition_filters(request: WriteRequest) -> list[tuple] | None:
    """replace_where as delta-rs partition filters, which are one conjunction: a null
    partition is `= ''`, and `in` never matches it, so one column cannot ask for
    both."""
    if not request.replace_where:
        return None
    filters = []
    for column, values in request.replace_where.items():
        if values == [None]:
            filters.append((column, "=", ""))
        elif None in values:
            raise ReplaceWhereError(
                f"{request.table_uri}: the delta-rs engine cannot replace the null and "
                f"non-null partitions of {column} in one commit; write them separately"
            )
        else:
            filters.append((column, "in", list(values)))
    return filters


def _replaced_files(table: DeltaTable, request: WriteRequest) -> set[str]:
    if request.mode != "overwrite":
        return set()
    files = pa.table(table.get_add_actions(flatten=False))
    paths = files["path"].to_pylist()
    if not request.replace_where:
        return set(paths)
    # The snapshot's partition values come typed; compare them in the log's string form.
    return {
        path
        for path, values in zip(paths, files["partition"].to_pylist(), strict=True)
        if not outside_replace_where(
            request.replace_where, {c: partition_value(v) for c, v in values.items()}
        )
    }


def _conflict(read: DeltaTable, latest: DeltaTable, request: WriteRequest) -> str | None:
    """Only after a lost race: `read` is still the snapshot the write started from."""
    if _metadata(read) != _metadata(latest):
        return "the table's schema, partitioning, protocol or properties were changed"
    if _replaced_files(read, request) != _replaced_files(latest, request):
        where = request.replace_where or "the whole table"
        return f"the files this overwrite replaces ({where}) were changed"
    return None


def _metadata(table: DeltaTable) -> tuple:
    metadata, protocol = table.metadata(), table.protocol()
    return (
        table.schema().to_json(),
        tuple(metadata.partition_columns),
        tuple(sorted(metadata.configuration.items())),
        (protocol.min_reader_version, protocol.min_writer_version),
        tuple(protocol.reader_features or ()),
        tuple(protocol.writer_features or ()),
    )


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


def delete_unreported(request: WriteRequest, committed: list[WrittenFile]) -> None:
    """After this write's commit: delete its files the commit left out (written by task
    attempts nobody reported). The table is not consulted: a later overwrite may have
    removed the committed files, and time travel still needs them."""
    root = Path(local_path(request.table_uri))
    _delete_write(root, request.write_id, set(), {str(root / f.path) for f in committed})


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
