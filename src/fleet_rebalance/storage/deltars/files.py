"""The delta-rs engine's files: what a write asks for (WriteRequest, carried to the
executors as data), and the Parquet files a task writes for it.

Executor tasks stream Arrow batches into Parquet files inside the table directory (one
file per task and partition value, partition columns left out of the file as Delta
does) and report each file; the driver-side commit (commit.py) records every task's
files in ONE Delta transaction. A task that fails deletes what it wrote.
"""

from __future__ import annotations

import json
import posixpath
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fleet_rebalance.filesystems import Location, exists
from fleet_rebalance.storage.engine import WrittenFile
from fleet_rebalance.storage.partitions import partition_dir, partition_value
from fleet_rebalance.storage.stats import FileStats

__all__ = ["ROW_GROUP_ROWS", "PartitionedFiles", "WriteRequest", "WrittenFile"]

ROW_GROUP_ROWS = 128 * 1024


@dataclass(frozen=True)
class WriteRequest:
    """Everything the executors and the commit need, carried as data-source options."""

    table_uri: str
    mode: str
    partition_by: tuple[str, ...]
    replace_where: dict[str, list[str | None]] | None
    commit_info: dict[str, Any]
    schema_evolution: bool
    # storage.options (never credentials): how executors and the commit reach the store.
    storage_options: dict[str, str] = field(default_factory=dict)
    # A whole-table overwrite that replaces the schema too (Delta's overwriteSchema).
    overwrite_schema: bool = False
    # The version the write was planned on (unchanged.py left out partitions that
    # held its rows then): conflicts are judged from there.
    read_version: int | None = None
    # Names every file of this write, so cleanup also finds files of killed tasks.
    write_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_options(self) -> dict[str, str]:
        return {"request": json.dumps({**self.__dict__, "partition_by": list(self.partition_by)})}

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> WriteRequest:
        raw = json.loads(options["request"])
        return cls(**{**raw, "partition_by": tuple(raw["partition_by"])})

    @property
    def location(self) -> Location:
        return Location(self.table_uri, self.storage_options)


class PartitionedFiles:
    """One task's Parquet files of a write: one per partition value, rows as they come."""

    def __init__(self, request: WriteRequest) -> None:
        self.request = request
        self.open: dict[tuple, _OpenFile] = {}

    def write(self, batch: pa.RecordBatch) -> None:
        for values, part in _split_by_partition(batch, self.request.partition_by):
            handle = self.open.get(values)
            if handle is None:
                handle = _OpenFile.create(self.request, values, part.schema)
                self.open[values] = handle
            handle.write(part)

    def close(self) -> list[WrittenFile]:
        return [handle.close() for handle in self.open.values()]

    def discard(self) -> None:
        for handle in self.open.values():
            handle.discard()


class _OpenFile:
    """Batches are gathered into row groups of ROW_GROUP_ROWS: a writer fed small
    batches would leave as many small row groups, slow to read. The file is written
    through the store's own filesystem, so executors need no shared disk."""

    def __init__(
        self,
        root: Location,
        relative: str,
        values: dict[str, str | None],
        schema: pa.Schema,
        write_id: str,
    ) -> None:
        self.root, self.relative, self.values = root, relative, values
        self.write_id = write_id
        self.fs, root_path = root.filesystem()
        self.full = posixpath.join(root_path, relative)
        if root.is_local:
            self.fs.create_dir(posixpath.dirname(self.full), recursive=True)
        self.stream = self.fs.open_output_stream(self.full)
        self.writer: pq.ParquetWriter | None = pq.ParquetWriter(
            self.stream, schema, compression="snappy"
        )
        self.stats = FileStats()
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = 0

    @classmethod
    def create(cls, request: WriteRequest, values: tuple, schema: pa.Schema) -> _OpenFile:
        named = dict(zip(request.partition_by, values, strict=True))
        directory = partition_dir(request.partition_by, named)
        name = f"{file_prefix(request.write_id)}{uuid.uuid4()}-c000.snappy.parquet"
        relative = f"{directory}/{name}" if directory else name
        return cls(request.location, relative, named, schema, request.write_id)

    def write(self, batch: pa.RecordBatch) -> None:
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        self.stats.update(batch)
        if self.pending_rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        assert self.writer is not None
        if self.pending:
            table = pa.Table.from_batches(self.pending)
            self.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self.pending, self.pending_rows = [], 0

    def _close_writer(self) -> None:
        writer, self.writer = self.writer, None
        try:
            if writer is not None:
                writer.close()
        finally:
            if not self.stream.closed:
                self.stream.close()

    def close(self) -> WrittenFile:
        self._flush()
        self._close_writer()
        if is_aborted(self.root, self.write_id):
            # The job was aborted while this task ran on: nothing may stay behind.
            self.fs.delete_file(self.full)
            raise RuntimeError(f"write {self.write_id} was aborted; discarded {self.relative}")
        info = self.fs.get_file_info(self.full)
        return WrittenFile(
            path=self.relative,
            size=info.size,
            partition_values=self.values,
            modification_time=int(info.mtime_ns // 1_000_000) if info.mtime_ns else 0,
            stats=self.stats.to_json(),
        )

    def discard(self) -> None:
        try:
            self._close_writer()
        finally:
            if exists(self.fs, self.full):
                self.fs.delete_file(self.full)


def _split_by_partition(
    batch: pa.RecordBatch, columns: tuple[str, ...]
) -> Iterator[tuple[tuple, pa.RecordBatch]]:
    """Yield (partition values as Delta strings, rows of that partition without its columns)."""
    if not columns:
        yield (), batch
        return
    if batch.num_rows == 0:
        return
    data_columns = [n for n in batch.schema.names if n not in columns]
    keys = pa.Table.from_batches([batch]).select(list(columns)).group_by(list(columns))
    for key in keys.aggregate([]).to_pylist():
        mask = None
        for column in columns:
            array = batch.column(column)
            value = key[column]
            test = (
                pc.is_null(array)
                if value is None
                else pc.equal(array, pa.scalar(value, type=array.type))
            )
            test = pc.fill_null(test, False)
            mask = test if mask is None else pc.and_(mask, test)
        part = batch.filter(mask).select(data_columns)
        yield tuple(partition_value(key[c]) for c in columns), part


ABORTED_DIR = "_fleet_aborted"  # `_` prefix: ignored by Delta readers and Spark listing


def is_aborted(table: Location, write_id: str) -> bool:
    fs, root = table.filesystem()
    return exists(fs, posixpath.join(root, ABORTED_DIR, write_id))


def file_prefix(write_id: str) -> str:
    return f"part-{write_id}-"


def add_action_fields(written: WrittenFile) -> dict[str, Any]:
    return {
        # deltalake URI-encodes the path into the log itself.
        "path": written.path,
        "size": written.size,
        "partition_values": written.partition_values,
        "modification_time": written.modification_time or int(time.time() * 1000),
        "data_change": True,
        "stats": written.stats,
    }
