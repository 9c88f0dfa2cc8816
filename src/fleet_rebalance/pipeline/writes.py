"""The one way replay and metrics write a date: replace that date's partition."""

from __future__ import annotations

import datetime as dt
import math

from pyspark.sql import DataFrame

from fleet_rebalance.storage import write_table

ROWS_PER_FILE = 1_000_000


def replace_date(frame: DataFrame, path: str, column: str, day: dt.date, rows: int) -> None:
    """One commit replacing `day`'s partition with `rows` rows, in files of about
    ROWS_PER_FILE rows: a write task per shuffle partition would leave many tiny files
    (and pay a Python worker each) for small outputs."""
    write_table(
        frame.coalesce(max(1, math.ceil(rows / ROWS_PER_FILE))),
        path,
        mode="overwrite",
        partition_by=(column,),
        replace_where={column: day},
    )
