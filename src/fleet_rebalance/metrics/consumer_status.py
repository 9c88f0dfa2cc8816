"""`consumer_status`: Burrow's partition evaluation over windows of captured offsets.

Burrow keeps, per partition, the last `intervals` commits (offset, lag, timestamp) and
rates them (evaluator/caching.go): OK when the lag is zero now or anywhere in the
window; otherwise, worst first, REWIND (an offset went backwards), STOP (time since the
last commit exceeds the window's span), STALL (offsets never move), WARN (lag never
decreases), else OK. A group's status is its worst partition's, capped at ERR.

Captures are not commits, so each capture is one window entry and its timestamp says
when the consumer last showed life: the capture time while a member owns the
partition (a live consumer commits on every poll), else the first capture that showed
the current offset (nobody has committed since). So a partition left without an owner
STOPs, and one whose owner keeps the offset still STALLs, as Burrow tells them apart.
The previous date's captures fill the first windows of the day; one status is rated at
every capture of the date. A window of a single capture has nothing to compare and is
OK (Burrow, rating one commit, would call it STALL or STOP).

One call rates one group (its status is over all its partitions). Rules over
neighbouring entries (an offset going back, moving, the lag shrinking) are flags on
each entry against the one before it; "any pair in the window" is a difference of
running sums, so every window of every partition is rated at once.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.metrics.sample_arrays import SAMPLE_COLUMNS, on_date, valid

RANKS = {"OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5, "REWIND": 6}
NAMES = np.array([None, *RANKS], dtype=object)  # NAMES[rank]
# What one call reads, per offsets sample of the run date or the day before.
INPUT_COLUMNS = [*SAMPLE_COLUMNS, "consumer_id"]


def window_ranks(
    starts: np.ndarray,
    micros: np.ndarray,
    offsets: np.ndarray,
    lags: np.ndarray,
    owned: np.ndarray,
    intervals: int,
) -> np.ndarray:
    """The Burrow rank of each entry's window: entries sorted by partition, then time;
    `starts` marks each partition's first entry; a window is the entry and the
    `intervals - 1` entries of its partition before it."""
    row = np.arange(len(micros))
    first = np.maximum.accumulate(np.where(starts, row, 0))  # the partition's first row
    window = np.maximum(first, row - intervals + 1)
    pairs = np.maximum(first, row - intervals + 2)  # entries compared with one before

    def any_in(flag: np.ndarray, begin: np.ndarray) -> np.ndarray:
        running = np.r_[0, np.cumsum(flag)]
        return running[row + 1] > running[begin]

    previous_offset, previous_lag = np.r_[0, offsets[:-1]], np.r_[0, lags[:-1]]
    paired = ~starts
    seconds = micros / 1_000_000
    changed = starts | (offsets != previous_offset)
    since = seconds[np.maximum.accumulate(np.where(changed, row, 0))]
    ts = np.where(owned, seconds, since)
    rules = [
        (lags <= 0) | any_in(lags == 0, window),
        row - window < 1,  # a window of one entry
        any_in(paired & (offsets < previous_offset), pairs),
        seconds - ts > ts - ts[window],
        ~any_in(paired & (offsets != previous_offset), pairs),
        ~any_in(paired & (lags < previous_lag), pairs),
    ]
    ranks = [RANKS[s] for s in ("OK", "OK", "REWIND", "STOP", "STALL", "WARN")]
    return np.select(rules, ranks, default=RANKS["OK"])


def group_consumer_status(table: pa.Table, run_date: dt.date, intervals: int) -> dict[str, list]:
    """consumer_status columns of one group for run_date ({} when it has no rated entry
    that day); `table` holds the group's offset_samples rows (INPUT_COLUMNS: topic and
    partition known) of run_date and the day before."""
    committed = pc.and_(
        pc.and_(pc.is_valid(table["current_offset"]), pc.is_valid(table["lag"])),
        pc.is_valid(table["captured_at"]),
    )
    table = table.filter(committed)
    if not table.num_rows:
        return {}
    topics = table["topic"].combine_chunks().dictionary_encode()
    topic_code = topics.indices.to_numpy(zero_copy_only=False)
    partition = table["partition"].to_numpy(zero_copy_only=False)
    micros = pc.cast(table["captured_at"], pa.int64()).to_numpy(zero_copy_only=False)
    order = np.lexsort((micros, partition, topic_code))
    topic_code, partition, micros = topic_code[order], partition[order], micros[order]
    today = on_date(table, run_date)[order]
    rows = np.flatnonzero(today)
    if not len(rows):
        return {}
    offsets = table["current_offset"].to_numpy(zero_copy_only=False)[order]
    lags = table["lag"].to_numpy(zero_copy_only=False)[order]
    owned = valid(table["consumer_id"])[order]
    starts = np.r_[True, (topic_code[1:] != topic_code[:-1]) | (partition[1:] != partition[:-1])]
    ranks = window_ranks(starts, micros, offsets, lags, owned, intervals)[today]
    # A partition's entries of the date are consecutive in `rows`: one segment each.
    partition_of = (np.cumsum(starts) - 1)[rows]
    begin = np.flatnonzero(np.r_[True, partition_of[1:] != partition_of[:-1]])
    end = np.r_[begin[1:], len(rows)] - 1
    times = micros[rows]
    worst = np.maximum.reduceat(ranks, begin)
    windows = np.diff(np.r_[begin, len(rows)])
    is_worst = ranks == np.repeat(worst, windows)
    worst_at = np.minimum.reduceat(np.where(is_worst, times, np.iinfo(np.int64).max), begin)
    last = ranks[end]
    cluster, group = table["cluster"][0].as_py(), table["group_id"][0].as_py()
    count = len(begin)
    return {
        "cluster": [cluster] * count,
        "group_id": [group] * count,
        "date": [run_date] * count,
        "topic": topics.dictionary.take(pa.array(topic_code[rows[begin]])).to_pylist(),
        "partition": partition[rows[begin]],
        "windows": windows,
        "status": NAMES[last],
        "current_lag": lags[rows[end]],
        "evaluated_at": times[end],
        "worst_status": NAMES[worst],
        "worst_status_at": worst_at,
        "non_ok_windows": np.add.reduceat((ranks > RANKS["OK"]).astype(np.int64), begin),
        "group_status": [NAMES[min(last.max(), RANKS["ERR"])]] * count,
        "group_worst_status": [NAMES[worst.max()]] * count,
    }
