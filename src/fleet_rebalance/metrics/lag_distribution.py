"""`lag_distribution`: per cluster, group, topic and date, the day's partition lag.

Offset lag: exact percentiles with linear interpolation between closest ranks (Spark's
`percentile`, to the last bit: the same formula in the same order), max, and a log2
histogram where bucket 0 counts lag 0 and bucket k counts 2^(k-1) <= lag < 2^k;
`histogram[k]` is bucket k's count. A negative lag (a committed offset past the log
end, seen after unclean truncation) is counted in bucket 0. Samples whose lag is
unknown (`-` in the capture) are counted in `unknown_lag_samples`, not dropped. Time
lag: see time_lag.py.

One call computes one topic of one cluster: every group reading the topic shares its
log-end points, so the topic's rows of both days arrive together (sorting them is the
whole cost of the metric, and numpy sorts a topic in microseconds).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.metrics.log_end_checks import refused_log_ends
from fleet_rebalance.metrics.sample_arrays import SAMPLE_COLUMNS, on_date, valid
from fleet_rebalance.metrics.time_lag import log_end_points, partition_time_lags

PERCENTILES = (0.5, 0.9, 0.99)
LAG_DECIMALS = 2  # the most an exact percentile of integers has at PERCENTILES
# What one call reads, per offsets sample of the run date or the day before.
INPUT_COLUMNS = [*SAMPLE_COLUMNS, "log_end_offset"]
REFUSED_LOG_END_COLUMNS = [
    "cluster",
    "group_id",
    "topic",
    "partition",
    "captured_at",
    "log_end_offset",
    "reason",
    "date",
]


def log2_buckets(lags: np.ndarray) -> np.ndarray:
    """0 for lag <= 0, else the bit length of lag (exact: no float rounding)."""
    lags = lags.astype(np.int64)
    buckets = np.zeros(len(lags), np.int64)
    positive = lags > 0
    # frexp's exponent is the bit length while the float is exact (up to 2^53); above,
    # rounding may carry to the next power of two, one too high: corrected here.
    _, exponent = np.frexp(lags[positive].astype(np.float64))
    exponent = np.minimum(exponent.astype(np.int64), 63)
    exponent -= np.left_shift(np.int64(1), exponent - 1) > lags[positive]
    buckets[positive] = exponent
    return buckets


def percentiles(values: np.ndarray) -> list[float | None]:
    """Spark's `percentile` (PERCENTILES) of values: position (n - 1) * p, linear
    between the two closest ranks."""
    if not len(values):
        return [None] * len(PERCENTILES)
    ordered = np.sort(values.astype(np.float64))
    result: list[float | None] = []
    for p in PERCENTILES:
        position = (len(ordered) - 1) * p
        lower, higher = math.floor(position), math.ceil(position)
        low, high = float(ordered[lower]), float(ordered[higher])
        if lower == higher or low == high:
            result.append(low)
        else:
            result.append((higher - position) * low + (position - lower) * high)
    return result


def lag_percentiles(lags: np.ndarray) -> list[float | None]:
    """percentiles of whole-number lags to LAG_DECIMALS: their exact values have no more
    decimals (rank position (n - 1) * p, p in hundredths), so rounding drops only the
    interpolation's float noise (2232390.0999999996 for 2232390.1)."""
    return [None if v is None else round(v, LAG_DECIMALS) for v in percentiles(lags)]


def _readings(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(partition, capture time µs, log end, has a log end and a time) per row."""
    partition = table["partition"].to_numpy(zero_copy_only=False)
    times = pc.cast(table["captured_at"], pa.int64())
    timed = valid(times)
    times = times.fill_null(0).to_numpy(zero_copy_only=False)
    log_end = table["log_end_offset"]
    has_end = valid(log_end) & timed
    return partition, times, log_end.fill_null(0).to_numpy(zero_copy_only=False), has_end


def _refusals(
    partition: np.ndarray, times: np.ndarray, log_end: np.ndarray, has_end: np.ndarray
) -> dict[int, str]:
    """{row: why its log end may not be a shared point} (log_end_checks)."""
    reasons: dict[int, str] = {}
    for rows in _runs(partition):
        ends = rows[has_end[rows]]
        for at, reason in refused_log_ends(times[ends], log_end[ends]).items():
            reasons[int(ends[at])] = reason
    return reasons


def topic_refusals(table: pa.Table) -> dict[int, str]:
    """{row: why its log end is no shared point} of one topic's table (log_end_checks)."""
    return _refusals(*_readings(table))


def topic_time_lags(
    table: pa.Table, today: np.ndarray, reasons: dict[int, str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, extrapolated) for the run date's rows (`today`) of one topic's table,
    each partition against the log-end points of all its rows but the refused
    (`reasons`: topic_refusals of the table, computed here when not given)."""
    partition, times, log_end, has_end = _readings(table)
    if reasons is None:
        reasons = _refusals(partition, times, log_end, has_end)
    refused = np.zeros(len(partition), bool)
    refused[list(reasons)] = True
    committed = table["current_offset"]
    known = valid(committed) & valid(table["captured_at"])
    committed = committed.fill_null(0).to_numpy(zero_copy_only=False)
    lags = np.full(len(partition), np.nan)
    extrapolated = np.zeros(len(partition), bool)
    for rows in _runs(partition):
        ends = rows[has_end[rows]]
        clean = ends[~refused[ends]]
        point_times, point_offsets = log_end_points(times[clean], log_end[clean])
        mine = rows[today[rows]]
        lags[mine], extrapolated[mine] = partition_time_lags(
            point_times,
            point_offsets,
            times[mine],
            committed[mine],
            known[mine],
            # A refused reading is no point, but its capture did read a log end.
            np.unique(times[ends]),
        )
    return lags, extrapolated


def topic_refused_log_ends(
    table: pa.Table, run_date: dt.date, reasons: dict[int, str] | None = None
) -> list[dict[str, Any]]:
    """The run date's rows of one topic's table (INPUT_COLUMNS, both days) whose log end
    is kept out of the shared time-lag points, each with its reason
    (REFUSED_LOG_END_COLUMNS; gold `log_end_quarantine`). The rows themselves keep their
    offset lag. `reasons`: topic_refusals of the table, computed here when not given."""
    today = on_date(table, run_date)
    if reasons is None:
        reasons = topic_refusals(table)
    columns = [c for c in REFUSED_LOG_END_COLUMNS if c not in ("reason", "date")]
    out = []
    for row in sorted(reasons):
        if today[row]:
            values = {c: table[c][row].as_py() for c in columns}
            out.append({**values, "reason": reasons[row], "date": run_date})
    return out


def topic_tables(table: pa.Table, run_date: dt.date) -> dict[str, list[dict[str, Any]]]:
    """{"lag_distribution": ..., "log_end_quarantine": ...} rows of one cluster's topic
    for run_date, the log-end refusals decided once for both."""
    reasons = topic_refusals(table)
    return {
        "lag_distribution": topic_lag_distribution(table, run_date, reasons),
        "log_end_quarantine": topic_refused_log_ends(table, run_date, reasons),
    }


def topic_lag_distribution(
    table: pa.Table, run_date: dt.date, reasons: dict[int, str] | None = None
) -> list[dict[str, Any]]:
    """lag_distribution rows of one cluster's topic for run_date; `table` holds the
    topic's offsets samples (INPUT_COLUMNS) of run_date and the day before (`reasons`:
    as topic_time_lags)."""
    today = on_date(table, run_date)
    if not today.any():
        return []
    seconds, extrapolated = topic_time_lags(table, today, reasons)
    rows = np.flatnonzero(today)
    # Dictionary codes, not the strings: a null group_id is a group of its own, as in SQL.
    groups = table["group_id"].take(rows).combine_chunks().dictionary_encode()
    names = [*groups.dictionary.to_pylist(), None]
    codes = groups.indices.fill_null(len(names) - 1).to_numpy(zero_copy_only=False)
    lag = table["lag"].take(rows)
    lag_known = valid(lag)
    lag = lag.fill_null(0).to_numpy(zero_copy_only=False)
    partition = table["partition"].take(rows).to_numpy(zero_copy_only=False)
    seconds, extrapolated = seconds[rows], extrapolated[rows]
    cluster, topic = table["cluster"][0].as_py(), table["topic"][0].as_py()
    out = []
    for mine in _runs(codes):
        known = mine[lag_known[mine]]
        lags = lag[known]
        timed = mine[~np.isnan(seconds[mine])]
        time_lags = seconds[timed]
        lag_pct, time_pct = lag_percentiles(lags), percentiles(time_lags)
        out.append(
            {
                "cluster": cluster,
                "group_id": names[codes[mine[0]]],
                "topic": topic,
                "date": run_date,
                "partitions": len(np.unique(partition[mine])),
                "samples": len(known),
                "unknown_lag_samples": len(mine) - len(known),
                "lag_p50": lag_pct[0],
                "lag_p90": lag_pct[1],
                "lag_p99": lag_pct[2],
                "lag_max": int(lags.max()) if len(lags) else None,
                "histogram": np.bincount(log2_buckets(lags)).tolist(),
                "time_lag_samples": len(timed),
                "time_lag_extrapolated": int(extrapolated[timed].sum()),
                "time_lag_p50_seconds": time_pct[0],
                "time_lag_p90_seconds": time_pct[1],
                "time_lag_p99_seconds": time_pct[2],
                "time_lag_max_seconds": float(time_lags.max()) if len(timed) else None,
            }
        )
    return out


def _runs(keys: np.ndarray) -> Iterator[np.ndarray]:
    """The row numbers of each distinct key, in key order."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True])
    for start, stop in itertools.pairwise(bounds):
        yield order[start:stop]
