"""What parsing one file yields: rows per bronze table, quarantine rows, line accounting."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Bronze table each capture kind feeds (jsonl feeds three).
OFFSETS, MEMBERS, GROUP_STATES, TOPIC_PARTITIONS, COORDINATOR_EVENTS = (
    "offsets",
    "members",
    "group_states",
    "topic_partitions",
    "coordinator_events",
)

OK, FAILED_CAPTURE, REJECTED = "ok", "failed_capture", "rejected"


@dataclass
class ParseResult:
    """Every line of a file is a row, a quarantined line or a structural line."""

    kind: str
    lines: int = 0
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    structural: int = 0
    # Lines that produced a row; a line can feed several tables (jsonl), counted once.
    row_lines: int = 0
    status: str = OK
    notes: Counter = field(default_factory=Counter)
    # Bulk rows as Arrow batches (the offsets view's fast path); the file's common values
    # (cluster, captured_at, capture_date, source_file) are in `common`, not repeated.
    batches: dict[str, list[Any]] = field(default_factory=dict)
    common: dict[str, Any] = field(default_factory=dict)

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.rows.setdefault(table, []).append(row)

    def reject(self, line_number: int | None, line: str, reason: str) -> None:
        self.quarantine.append(
            {"line_number": line_number, "line": line, "reason": reason, "kind": self.kind}
        )

    @property
    def row_count(self) -> int:
        return sum(len(v) for v in self.rows.values()) + sum(
            b.num_rows for batches in self.batches.values() for b in batches
        )

    def records(self, table: str) -> list[dict[str, Any]]:
        """Every row of a table as dicts, whichever way it was stored."""
        rows = list(self.rows.get(table, []))
        for batch in self.batches.get(table, []):
            rows += [{**row, **self.common} for row in batch.to_pylist()]
        return sorted(rows, key=lambda r: r.get("line_number") or 0)

    def reconciles(self) -> bool:
        whole_file = any(q["line_number"] is None for q in self.quarantine)
        if whole_file:
            return True
        return self.lines == self.row_lines + len(self.quarantine) + self.structural

    def reconciliation(self) -> str:
        return (
            f"{self.lines} lines = {self.row_lines} parsed + {len(self.quarantine)} "
            f"quarantined + {self.structural} structural"
        )
