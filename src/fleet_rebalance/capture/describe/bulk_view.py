"""What the bulk readers of the describe views share (dispatch.parse_describe drives
them): which header layouts they take, and where their rows go."""

from __future__ import annotations

from abc import ABC, abstractmethod

import pyarrow as pa

from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.result import ParseResult


class BulkView(ABC):
    """One view's common rows in Arrow's kernels, a header layout at a time; every row
    convert() leaves out takes the per-line path."""

    table: str
    required: tuple[str, ...]

    def __init__(self, result: ParseResult, context: ParseContext) -> None:
        self.result, self.context = result, context

    def layout_for(
        self, columns: list[str], comma: bool, group: str | None
    ) -> tuple[str, ...] | None:
        """The layout to convert in bulk, or None: 0.9's comma-separated one, one
        without a required column, or one without GROUP where no `group` is known for
        its block (from the path or the tool's message above it)."""
        if comma or not set(self.required) <= set(columns):
            return None
        if "GROUP" not in columns and not group:
            return None
        return tuple(columns)

    @abstractmethod
    def convert(
        self, layout: tuple[str, ...], group: str | None, numbers: pa.Array, lines: pa.Array
    ) -> set[int]:
        """Append the good rows as a batch (`group` for a layout without GROUP column);
        return the line numbers left for the per-line path."""

    def append(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self.result.common = self.context["common"]
            self.result.batches.setdefault(self.table, []).append(batch)
            self.result.row_lines += batch.num_rows
