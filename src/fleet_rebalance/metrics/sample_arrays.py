"""numpy views of the offsets samples one Arrow call of a lag metric receives."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# What every lag metric's call reads; each metric adds its own columns.
SAMPLE_COLUMNS = [
    "cluster",
    "group_id",
    "topic",
    "partition",
    "captured_at",
    "capture_date",
    "current_offset",
    "lag",
]


def valid(values: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return pc.is_valid(values).to_numpy(zero_copy_only=False)


def on_date(table: pa.Table, day: dt.date) -> np.ndarray:
    """Rows captured on `day` (an unknown capture date is not)."""
    same = pc.equal(table["capture_date"], pa.scalar(day, pa.date32()))
    return same.fill_null(False).to_numpy(zero_copy_only=False)
