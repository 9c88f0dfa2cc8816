"""`consumer_status`: Burrow's partition evaluation over windows of captured offsets.

The rules, in current Burrow's order (linkedin/Burrow `core/internal/evaluator/
caching.go`, `calculatePartitionStatus`, at ced55ba), and every place captures make
them differ from Burrow's commits are written once, in docs/metrics.md
(consumer_status); Burrow's own cases run as captures in tests/test_burrow_cases.py.

One call rates one group (its status is over all its partitions). Rules over
neighbouring entries are flags on each entry against the one before it; "any flag in
the window" is a difference of running sums and "the first one" a reverse running
minimum, so every window of every partition is rated at once.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.metrics.sample_arrays import SAMPLE_COLUMNS, on_date, valid
from fleet_rebalance.vocabulary import Status

RANKS = {status: rank for rank, status in enumerate(Status, start=1)}  # rank order
NAMES = np.array([None, *RANKS], dtype=object)  # NAMES[rank]
# What one call reads, per offsets sample of the run date or the day before.
INPUT_COLUMNS = [*SAMPLE_COLUMNS, "log_end_offset", "consumer_id"]
# Burrow's `allowed-lag` default: only a zero lag counts as caught up.
ALLOWED_LAG = 0


@dataclass(frozen=True)
class Entries:
    """One group's window entries (captures with a committed offset), sorted by
    partition, then time; unknown lags and log ends are 0 with their flag False."""

    topic_code: np.ndarray
    topics: pa.Array  # topic_code -> name
    partition: np.ndarray
    micros: np.ndarray  # captured_at
    offsets: np.ndarray
    lags: np.ndarray
    lag_known: np.ndarray
    log_ends: np.ndarray
    log_end_known: np.ndarray
    owned: np.ndarray
    on_day: np.ndarray  # captured on the run date
    starts: np.ndarray  # a partition's first entry


@dataclass(frozen=True)
class Checks:
    """Burrow's checks, per entry, over the window ending at it (caching.go's names)."""

    current_lag_allowed: np.ndarray  # not (currentLag > allowedLag)
    single_entry: np.ndarray
    lag_always_not_zero: np.ndarray  # isLagAlwaysNotZero
    offsets_rewind: np.ndarray  # checkIfOffsetsRewind > 0
    rewind_recovered: np.ndarray  # checkIfRewindRecovered (False without a rewind)
    offsets_stopped: np.ndarray  # checkIfOffsetsStopped
    offsets_stalled: np.ndarray  # checkIfOffsetsStalled
    lag_not_decreasing: np.ndarray  # checkIfLagNotDecreasing
    recent_lag_zero: np.ndarray  # checkIfRecentLagZero


def entries_of(table: pa.Table, run_date: dt.date) -> Entries:
    """The window entries of one group's offsets samples (INPUT_COLUMNS): captures
    without a committed offset or time are none (Burrow has no commit for them)."""
    committed = pc.and_(pc.is_valid(table["current_offset"]), pc.is_valid(table["captured_at"]))
    table = table.filter(committed)
    topics = table["topic"].combine_chunks().dictionary_encode()
    topic_code = topics.indices.to_numpy(zero_copy_only=False)
    partition = table["partition"].to_numpy(zero_copy_only=False)
    micros = pc.cast(table["captured_at"], pa.int64()).to_numpy(zero_copy_only=False)
    order = np.lexsort((micros, partition, topic_code))
    topic_code, partition, micros = topic_code[order], partition[order], micros[order]

    def known(name: str) -> tuple[np.ndarray, np.ndarray]:
        column = table[name]
        if not column.null_count:  # the usual case: skip the fill and the mask
            return column.to_numpy(zero_copy_only=False)[order], np.ones(len(order), bool)
        values = pc.fill_null(column, 0).to_numpy(zero_copy_only=False)
        return values[order], valid(column)[order]

    lags, lag_known = known("lag")
    log_ends, log_end_known = known("log_end_offset")
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (topic_code[1:] != topic_code[:-1]) | (partition[1:] != partition[:-1])
    return Entries(
        topic_code=topic_code,
        topics=topics.dictionary,
        partition=partition,
        micros=micros,
        offsets=table["current_offset"].to_numpy(zero_copy_only=False)[order],
        lags=lags,
        lag_known=lag_known,
        log_ends=log_ends,
        log_end_known=log_end_known,
        owned=valid(table["consumer_id"])[order],
        on_day=on_date(table, run_date)[order],
        starts=starts,
    )


def window_checks(entries: Entries, intervals: int, allowed_lag: int = ALLOWED_LAG) -> Checks:
    """Each of Burrow's checks on the window of every entry: the entry and the
    `intervals - 1` entries of its partition before it."""
    e = entries
    n = len(e.micros)
    row = np.arange(n)
    first = np.maximum.accumulate(np.where(e.starts, row, 0))  # the partition's first row
    window = np.maximum(first, row - intervals + 1)
    pairs = window + 1  # entries compared with the one before, inside the window
    after = row + 1

    def any_in(flag: np.ndarray, begin: np.ndarray) -> np.ndarray:
        """Whether `flag` holds at some entry from `begin` to the window's end."""
        running = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(flag, out=running[1:])
        return running[after] > running[np.minimum(begin, after)]

    def next_at(flag: np.ndarray) -> np.ndarray:
        """The first entry at or after each index (and at n) where `flag` holds, else n."""
        at = np.full(n + 1, n)
        at[:n] = np.where(flag, row, n)
        return np.minimum.accumulate(at[::-1])[::-1]

    previous = np.empty_like(e.offsets)  # the entry before's offset (a start: itself)
    previous[:1], previous[1:] = e.offsets[:1], e.offsets[:-1]
    paired = ~e.starts
    moved = paired & (e.offsets != previous)
    back = paired & (e.offsets < previous)

    # Life: an owner (it commits on every poll) or a moved offset; timestamps in µs.
    last_life = np.maximum.accumulate(np.where(e.starts | e.owned | moved, row, 0))
    ts = e.micros[last_life]
    stopped = e.micros - ts > ts - ts[window]
    # Burrow's recent broker offsets: the log end captured last before the rated capture,
    # after the last life (the committed offset is the current one since) and in the
    # window. At or below that offset, the log end stayed there until the newest capture:
    # a consumer of a quiet partition that a message only just reached (#303). Once the
    # captures after the last life show the log end moving on, the silence is a STOP.
    caught_up = e.log_end_known & (e.log_ends <= e.offsets)
    known_before = np.full(n, -1)
    known_before[1:] = np.maximum.accumulate(np.where(e.log_end_known, row, -1))[:-1]
    recent = (known_before > last_life) & (known_before >= window)
    recent_lag_zero = recent & caught_up[np.maximum(known_before, 0)]

    rewound = rewind_recovered = np.zeros(n, dtype=bool)
    if back.any():  # rare: most partitions never rewind
        rewind_at = next_at(back)[pairs]  # the window's first rewind, n without one
        rewound = rewind_at <= row
        recovered_at = _recovery(e.offsets, back, first, intervals)
        rewind_recovered = rewound & (recovered_at[np.minimum(rewind_at, n)] <= row)

    allowed = e.lag_known & (e.lags <= allowed_lag)
    last_known = np.maximum.accumulate(np.where(e.lag_known, row, -1))
    before = np.empty_like(last_known)  # the previous entry with a lag, -1 for none
    before[:1], before[1:] = -1, last_known[:-1]
    shrank = e.lag_known & (e.lags < e.lags[np.maximum(before, 0)])
    # A shrink counts from the window's second known lag on: the lag it shrank from is
    # then in the window too (and so in the same partition).
    known_from = window if e.lag_known.all() else next_at(e.lag_known)[window]
    return Checks(
        current_lag_allowed=allowed,
        single_entry=row == window,
        lag_always_not_zero=~any_in(allowed, window),
        offsets_rewind=rewound,
        rewind_recovered=rewind_recovered,
        offsets_stopped=stopped,
        offsets_stalled=~any_in(moved, pairs),
        lag_not_decreasing=~any_in(shrank, known_from + 1),
        recent_lag_zero=recent_lag_zero,
    )


def _recovery(
    offsets: np.ndarray, back: np.ndarray, first: np.ndarray, intervals: int
) -> np.ndarray:
    """For each rewind (and at n), the first entry from it on that is back at or past the
    offset before it; n if none within reach: a window holding the rewind ends at most
    `intervals - 2` entries after it."""
    n = len(offsets)
    recovered = np.full(n + 1, n)
    at = np.flatnonzero(back)
    if not len(at) or intervals < 2:
        return recovered
    later = at[:, None] + np.arange(intervals - 1)
    reach = np.minimum(later, n - 1)
    hit = (later < n) & (first[reach] == first[at, None])
    hit &= offsets[reach] >= offsets[at - 1, None]
    recovered[at] = np.where(hit.any(axis=1), at + hit.argmax(axis=1), n)
    return recovered


def window_ranks(checks: Checks) -> np.ndarray:
    """Each entry's Burrow status rank: the checks in Burrow's order, first match wins."""
    c = checks
    rules = [
        (c.current_lag_allowed, Status.OK),
        (c.single_entry, Status.OK),
        (c.offsets_stopped & ~c.recent_lag_zero, Status.STOP),
        (c.offsets_rewind & ~c.rewind_recovered, Status.REWIND),
        (~c.lag_always_not_zero, Status.OK),
        (c.offsets_stalled, Status.STALL),
        (c.lag_not_decreasing, Status.WARN),
    ]
    return np.select([r for r, _ in rules], [RANKS[s] for _, s in rules], RANKS[Status.OK])


def group_consumer_status(
    table: pa.Table, run_date: dt.date, intervals: int, allowed_lag: int = ALLOWED_LAG
) -> dict[str, list]:
    """consumer_status columns of one group for run_date ({} when it has no rated entry
    that day); `table` holds the group's offset_samples rows (INPUT_COLUMNS: topic and
    partition known) of run_date and the day before."""
    e = entries_of(table, run_date)
    rated = e.on_day & e.lag_known
    rows = np.flatnonzero(rated)
    if not len(rows):
        return {}
    ranks = window_ranks(window_checks(e, intervals, allowed_lag))[rows]
    # A partition's rated entries are consecutive in `rows`: one segment each.
    partition_of = (np.cumsum(e.starts) - 1)[rows]
    begin = np.flatnonzero(np.r_[True, partition_of[1:] != partition_of[:-1]])
    end = np.r_[begin[1:], len(rows)] - 1
    times = e.micros[rows]
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
        "topic": e.topics.take(pa.array(e.topic_code[rows[begin]])).to_pylist(),
        "partition": e.partition[rows[begin]],
        "windows": windows,
        "status": NAMES[last],
        "current_lag": e.lags[rows[end]],
        "evaluated_at": times[end],
        "worst_status": NAMES[worst],
        "worst_status_at": worst_at,
        "non_ok_windows": np.add.reduceat((ranks > RANKS[Status.OK]).astype(np.int64), begin),
        "group_status": [NAMES[min(last.max(), RANKS[Status.ERR])]] * count,
        "group_worst_status": [NAMES[worst.max()]] * count,
        "current_offset": e.offsets[rows[end]],
    }


def topic_consumer_status(
    table: pa.Table, run_date: dt.date, intervals: int, allowed_lag: int = ALLOWED_LAG
) -> list[dict[str, list]]:
    """group_consumer_status of each group in one topic's offsets samples (the lag
    metrics' per-topic call holds every group reading it). A partition's windows are
    its own, so its columns are final; group_status and group_worst_status are over the
    topic's partitions only, and the group's over all its topics is their worst."""
    return [
        found
        for group in group_id_runs(table.select(INPUT_COLUMNS))
        if (found := group_consumer_status(group, run_date, intervals, allowed_lag))
    ]


def group_id_runs(table: pa.Table) -> list[pa.Table]:
    """`table`'s rows, one table per group_id (a null group_id is a group of its own, as
    in SQL), in a stable sort by group."""
    if not table.num_rows:
        return []
    encoded = table["group_id"].combine_chunks().dictionary_encode()
    codes = encoded.indices.fill_null(len(encoded.dictionary)).to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    bounds = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True])
    grouped = table.take(order)
    return [grouped.slice(a, b - a) for a, b in itertools.pairwise(bounds)]
