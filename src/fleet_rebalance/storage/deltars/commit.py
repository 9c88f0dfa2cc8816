"""The delta-rs engine's driver side: one transaction per job, and cleanup on abort."""

from __future__ import annotations

import json
import logging
import posixpath
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import DeltaTable, Schema
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError
from deltalake.schema import Field
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    RemoveAction,
    create_table_with_add_actions,
)

from fleet_rebalance.filesystems import Location, LocationError
from fleet_rebalance.storage.commit_context import commit_metadata
from fleet_rebalance.storage.deltars.files import (
    ABORTED_DIR,
    WriteRequest,
    add_action_fields,
    file_prefix,
)
from fleet_rebalance.storage.engine import WrittenFile
from fleet_rebalance.storage.errors import CommitConflictError, ReplaceWhereError, StorageError
from fleet_rebalance.storage.partitions import partition_dir, partition_value
from fleet_rebalance.storage.table_checks import (
    check_partitioning,
    check_writable,
    compare_schemas,
    outside_replace_where,
    schema_fields,
)

log = logging.getLogger(__name__)


# delta-rs (1.6) decodes a local table path as a URL once more than it encodes it: a
# directory named `x%41` is looked for as `xA`, and a write commits before it fails.
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def delta_uri(uri: str) -> str:
    """The table's URI for deltalake; refuses what delta-rs would misread."""
    if "://" not in uri and _PERCENT_ESCAPE.search(uri):
        raise LocationError(
            f"{uri}: the delta-rs engine cannot use a local path containing a percent "
            "escape such as %41 (delta-rs decodes it); rename the directory or use "
            "storage.engine: delta-spark"
        )
    return Location(uri).delta_uri


def open_table(
    uri: str, version: int | None = None, storage_options: Mapping[str, str] | None = None
) -> DeltaTable | None:
    options = dict(storage_options or {}) or None
    target = delta_uri(uri)
    try:
        return DeltaTable(target, version=version, storage_options=options)
    except TableNotFoundError:
        if version is not None and DeltaTable.is_deltatable(target, storage_options=options):
            raise
        return None


def validate_against_table(request: WriteRequest, schema_json: str) -> list[str]:
    """Raise when the write cannot go into the table as it is now; return added columns."""
    _partition_filters(request)
    table = open_table(request.table_uri, storage_options=request.storage_options)
    if table is None:
        return []
    metadata = table.metadata()
    check_writable(request.table_uri, table.protocol(), metadata.configuration)
    if request.overwrite_schema:
        return []  # the commit replaces the table's schema and partitioning with the write's
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
    properties = CommitProperties(
        custom_metadata=commit_metadata(request.commit_info), max_commit_retries=15
    )
    schema = Schema.from_json(schema_json)
    options = request.storage_options
    table = open_table(uri, storage_options=options)
    if table is None:
        try:
            # No retries: delta-rs retries a create that lost the race as version 1, an
            # append of its files over the winner's (two overwrites of a new table would
            # both land). The loser commits into the winner's table below, judged there.
            create_table_with_add_actions(
                delta_uri(uri),
                schema,
                actions,
                mode="error",
                partition_by=list(request.partition_by),
                commit_properties=CommitProperties(
                    custom_metadata=properties.custom_metadata, max_commit_retries=0
                ),
                storage_options=dict(options) or None,
            )
            log.info("%s: created with %d file(s)", uri, len(actions))
            return
        except DeltaError as exc:
            table = open_table(uri, storage_options=options)
            if table is None:
                raise
            if _replaced_files(table, request):  # this write read no rows there
                raise CommitConflictError(
                    f"{uri}: created with rows this overwrite replaces by a concurrent "
                    "commit; nothing was committed"
                ) from exc
            log.info("%s: created concurrently (%s); committing into it", uri, exc)
    added = validate_against_table(request, schema_json)
    if request.overwrite_schema and list(table.metadata().partition_columns) != list(
        request.partition_by
    ):
        _repartition(table, request, actions, schema, properties)
        return
    if added:
        table_fields = schema_fields(table.schema().to_json())
        new_fields = [
            Field.from_json(json.dumps({**f, "nullable": True}))
            for n, f in schema_fields(schema_json).items()
            if n in added and n not in table_fields
        ]
        table.alter.add_columns(new_fields, commit_properties=properties)
        table = open_table(uri, storage_options=options)
        if table is None:
            raise StorageError(f"{uri}: the table went away while its columns were added")
    read = None
    if request.read_version is not None:
        read = open_table(uri, version=request.read_version, storage_options=options)
    version = write_transaction(table, request, actions, schema, read=read)
    log.info(
        "%s: %s of %d file(s) committed as version %d", uri, request.mode, len(actions), version
    )
    sweep_aborted(request.location)


def _repartition(
    table: DeltaTable,
    request: WriteRequest,
    actions: list[AddAction],
    schema: Schema,
    properties: CommitProperties,
) -> None:
    """A whole-table overwrite that changes the partition columns (Delta's
    overwriteSchema): one commit holding the new metadata, every remove and every add.
    delta-rs's transaction API keeps a table's partitioning, its replace-table
    commit does not; that commit has no conflict check of ours, so a commit that
    landed since `table` was read is refused rather than silently replaced."""
    uri = request.table_uri
    latest = open_table(uri, storage_options=request.storage_options)
    if latest is None or latest.version() != table.version():
        raise CommitConflictError(
            f"{uri}: changed since version {table.version()} while its partitioning was "
            "being replaced; nothing was committed"
        )
    create_table_with_add_actions(
        delta_uri(uri),
        schema,
        actions,
        mode="overwrite",
        partition_by=list(request.partition_by),
        commit_properties=properties,
        storage_options=dict(request.storage_options) or None,
    )
    log.info(
        "%s: rewritten partitioned by %s in %d file(s) as version %d",
        uri,
        list(request.partition_by),
        len(actions),
        table.version() + 1,
    )
    sweep_aborted(request.location)


MAX_COMMIT_ATTEMPTS = 15


def write_transaction(
    table: DeltaTable,
    request: WriteRequest,
    actions: list[AddAction],
    schema: Schema | None = None,
    *,
    read: DeltaTable | None = None,
) -> int:
    """Commit `actions` over the snapshot `table` was read at; return the new version.
    The table keeps its own schema (its column order and nullability) unless the
    request overwrites it with the write's, `schema`. `read`: an older snapshot the
    write was planned on (unchanged.py compared rows there): commits since then are
    judged as lost races are.

    delta-rs's own retry checks an overwrite against what concurrent commits removed,
    not what they added: two overwrites of a date nobody had written yet would both
    land, every row twice. So each lost race is judged here, Delta's WriteSerializable
    way: a concurrent commit that changed the files this write replaces, or the table's
    metadata, is a conflict; any other is committed over."""
    uri = request.table_uri
    read, filters = read or table, _partition_filters(request)
    if read.version() != table.version():
        _raise_on_conflict(read, table, request)
    for _ in range(MAX_COMMIT_ATTEMPTS):
        try:
            table.create_write_transaction(
                list[AddAction | RemoveAction](actions),
                request.mode,
                schema if request.overwrite_schema and schema else table.schema(),
                partition_by=list(request.partition_by),
                partition_filters=filters,
                commit_properties=CommitProperties(
                    custom_metadata=commit_metadata(request.commit_info), max_commit_retries=0
                ),
            )
            return table.version() + 1
        except CommitFailedError as exc:
            latest = open_table(uri, storage_options=request.storage_options)
            if latest is None or latest.version() <= table.version():
                raise  # not a lost race
            _raise_on_conflict(read, latest, request, exc)
            table = latest
    raise CommitConflictError(
        f"{uri}: lost the commit race {MAX_COMMIT_ATTEMPTS} times; nothing was committed"
    )


def _raise_on_conflict(
    read: DeltaTable, latest: DeltaTable, request: WriteRequest, cause: Exception | None = None
) -> None:
    conflict = _conflict(read, latest, request)
    if conflict:
        raise CommitConflictError(
            f"{request.table_uri}: {conflict} by a concurrent commit since version "
            f"{read.version()}; nothing was committed"
        ) from cause


def _partition_filters(request: WriteRequest) -> list[tuple[str, str, Any]] | None:
    """replace_where as delta-rs partition filters, which are one conjunction: a null
    partition is `= ''`, and `in` never matches it, so one column cannot ask for
    both."""
    if not request.replace_where:
        return None
    filters: list[tuple[str, str, Any]] = []
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


def _metadata(table: DeltaTable) -> tuple[object, ...]:
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
    fs, root = request.location.filesystem()
    tombstone = posixpath.join(root, ABORTED_DIR, request.write_id)
    if request.location.is_local:
        fs.create_dir(posixpath.dirname(tombstone), recursive=True)
    with fs.open_output_stream(tombstone):
        pass
    _delete_write(
        request.location,
        request.write_id,
        {f.path for f in files},
        _referenced(request.location),
        _write_dirs(request, files),
    )


def delete_unreported(request: WriteRequest, committed: list[WrittenFile]) -> None:
    """After this write's commit: delete its files the commit left out (written by task
    attempts nobody reported). The table is not consulted: a later overwrite may have
    removed the committed files, and time travel still needs them."""
    _delete_write(
        request.location,
        request.write_id,
        set(),
        {f.path for f in committed},
        _write_dirs(request, committed),
    )


def sweep_aborted(table: Location) -> None:
    """After a commit: remove what late tasks of aborted writes left behind."""
    fs, root = table.filesystem()
    selector = pafs.FileSelector(posixpath.join(root, ABORTED_DIR), allow_not_found=True)
    tombstones = [i for i in fs.get_file_info(selector) if i.type == pafs.FileType.File]
    if not tombstones:
        return
    referenced = _referenced(table)
    for tombstone in tombstones:
        _delete_write(table, tombstone.base_name, set(), referenced, None)
        age_s = time.time() - (tombstone.mtime_ns or 0) / 1e9
        if age_s > TOMBSTONE_TTL_S:
            fs.delete_file(tombstone.path)


def _referenced(table: Location) -> set[str]:
    """Paths relative to the table root of every file its latest version holds."""
    opened = open_table(table.uri, storage_options=table.options)
    if opened is None:
        return set()
    return {unquote(p) for p in pa.table(opened.get_add_actions(flatten=False))["path"].to_pylist()}


def _write_dirs(request: WriteRequest, files: Iterable[WrittenFile]) -> set[str] | None:
    """The directories a write's files can be in, when they are known: listing them
    instead of the whole table keeps cleanup cheap on object stores and long histories.
    None: list the whole table."""
    if not request.partition_by:
        return {""}
    if not request.replace_where or set(request.replace_where) != set(request.partition_by):
        return None
    dirs: set[str] = {posixpath.dirname(f.path) for f in files}
    combinations: list[dict[str, str | None]] = [{}]
    for column in request.partition_by:
        values = request.replace_where[column]
        combinations = [{**c, column: v} for c in combinations for v in values]
    dirs.update(partition_dir(request.partition_by, c) for c in combinations)
    return dirs


def _delete_write(
    table: Location,
    write_id: str,
    known: set[str],
    keep: set[str],
    dirs: set[str] | None,
) -> None:
    """Delete the write's files (paths relative to the table root) that are not in
    `keep`: the known ones, and every file named with its write id under `dirs`."""
    fs, root = table.filesystem()
    prefix = file_prefix(write_id)
    candidates = set(known)
    for directory in sorted(dirs) if dirs is not None else [""]:
        selector = pafs.FileSelector(
            posixpath.join(root, directory) if directory else root,
            allow_not_found=True,
            recursive=dirs is None,
        )
        for info in fs.get_file_info(selector):
            if info.type == pafs.FileType.File and info.base_name.startswith(prefix):
                candidates.add(posixpath.relpath(info.path, root))
    for relative in candidates - keep:
        path = posixpath.join(root, relative)
        if fs.get_file_info(path).type == pafs.FileType.File:
            fs.delete_file(path)
