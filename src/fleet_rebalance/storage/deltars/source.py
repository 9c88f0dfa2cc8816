"""The delta-rs engine's write side: a Spark Python Data Source.

Executor tasks write their rows into the table directory (files.py) and report each
file; the driver-side commit records every task's files in ONE Delta transaction with
the deltalake package (commit.py). An aborted job deletes every reported file not
referenced by the table, so nothing half-written is ever visible or left behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from fleet_rebalance.storage.deltars.commit import commit_files, delete_uncommitted
from fleet_rebalance.storage.deltars.files import PartitionedFiles, WriteRequest
from fleet_rebalance.storage.engine import WrittenFile

SOURCE_NAME = "fleet_rebalance_delta_rs"


@dataclass
class DeltaRsCommitMessage(WriterCommitMessage):
    files: list[WrittenFile]


class DeltaRsDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def writer(self, schema: StructType, overwrite: bool) -> DeltaRsWriter:
        return DeltaRsWriter(WriteRequest.from_options(self.options), schema)


class DeltaRsWriter(DataSourceArrowWriter):
    def __init__(self, request: WriteRequest, schema: StructType) -> None:
        self.request = request
        self.schema_json = schema.json()

    def write(self, iterator: Iterator[pa.RecordBatch]) -> DeltaRsCommitMessage:
        files = PartitionedFiles(self.request)
        try:
            for batch in iterator:
                files.write(batch)
            return DeltaRsCommitMessage(files.close())
        except BaseException:
            files.discard()
            raise

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        commit_files(self.request, self.schema_json, _files(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        delete_uncommitted(self.request, _files(messages))


def _files(messages: list[WriterCommitMessage | None]) -> list[WrittenFile]:
    return [f for m in messages if isinstance(m, DeltaRsCommitMessage) for f in m.files]
