"""Time lag per offsets sample, estimated as Kafka Lag Exporter does.

Each topic partition's log-end offsets across captures form a lookup table of
(offset, time) points, as in Lag Exporter's `LookupTable.MemoryTable`. Lag Exporter
keeps only points that move forward in time and do not go backwards in offset; so does
this. For a committed offset c captured at `now`:
- c at or past the table's newest log end (as of now): time lag 0;
- fewer than two points: unknown;
- otherwise find the newest pair of neighbouring points with left.offset <= c <=
  right.offset and interpolate the moment the log end was c; when c is older than the
  oldest point, extrapolate along the line from the oldest to the newest point;
- time lag = max(0, now - that moment), in seconds.
The moment is Lag Exporter's `predict` in its order of operations, in µs where it has ms
(right.time - (right.offset - c) * dx / dy), and the lag is (now - moment) / 10^6, so a
lookup gives Lag Exporter's number to the last bit.

Accepted points rise in both time and offset, so both lookups are binary searches of
one partition's table. A sample whose capture has no log-end offset for its partition
is unknown (Lag Exporter reports a partition only with its log end), and so is every
sample of a partition with no log-end point at all (every capture printed `-`). Unknown
is NaN here: no time lag is ever NaN otherwise.

Deliberate differences from Lag Exporter (LookupTable.scala and ConsumerGroupCollector's
use of it, seglo/kafka-lag-exporter at 3fcb3c7):
- No window: the table is the run date's captures plus the previous date's (Lag
  Exporter runs continuously, so it would have them); its 60-point sliding window (or a
  Redis table's retention) only bounds its memory and is not applied. Only
  extrapolation sees it: the line starts at the oldest point of both days.
- Never negative: Lag Exporter reports 0 only when c equals the newest log end; past it
  (the committed offset read after the log end) it extrapolates to a moment after now, a
  negative lag, or with a single point reports unknown. Here both are 0.
- A flat table (every point at the same offset) gives no slope to extrapolate along:
  unknown, where Lag Exporter reports +infinity for c below the flat log end.
- Capture order, not arrival order: a batch has no arrival order, so Lag Exporter's
  OutOfOrder refusal (a reading older than its newest point: its clock stepped back)
  has no counterpart; an earlier capture is an earlier point, and a later one below it
  is refused as going backwards. The log ends of a partition at one capture time (one
  per group described) are one point, the highest; Lag Exporter keeps the first to
  arrive.
- Readings that contradict their neighbours never become points (log_end_checks): of
  a history that goes backwards the fewest readings are refused, so one absurd high
  reading is refused itself rather than every later one; a reading of the newest
  capture far above its other groups' is refused too. Otherwise one group's absurd
  log end would move every group's lags.
Not a difference: Lag Exporter compresses a run of equal log ends to its first and last
points. The newest pair holding c is never inside a run (a run at the newest end means
c is at the log end), so no lookup changes; only the reach of the window would.
"""

from __future__ import annotations

import numpy as np

MICROS = 1_000_000


def log_end_points(times: np.ndarray, log_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One partition's points: per capture time (µs) the highest log end, ascending in
    time (rows with an unknown log end must already be left out); none without rows."""
    order = np.argsort(times, kind="stable")
    times, log_ends = times[order], log_ends[order]
    if not len(times):
        return times, log_ends
    starts = np.flatnonzero(np.r_[True, times[1:] != times[:-1]])
    return times[starts], np.maximum.reduceat(log_ends, starts)


def accepted(offsets: np.ndarray) -> np.ndarray:
    """Points not below any earlier point: the lookup table."""
    if not len(offsets):
        return np.zeros(0, bool)
    before = np.maximum.accumulate(offsets)[:-1]
    return np.r_[True, offsets[1:] >= before]


def partition_time_lags(
    point_times: np.ndarray,
    point_offsets: np.ndarray,
    times: np.ndarray,
    committed: np.ndarray,
    known: np.ndarray,
    read_times: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, extrapolated) for one partition's samples: capture times (µs),
    committed offsets and whether each is known, against the partition's points from
    log_end_points (possibly none). Seconds are NaN where unknown. `read_times`, sorted:
    the captures that read a log end of the partition, refused readings included
    (default: the points' times)."""
    n = len(times)
    lags, extrapolated = np.full(n, np.nan), np.zeros(n, bool)
    keep = accepted(point_offsets)
    at, ao = point_times[keep], point_offsets[keep]
    if not n or not len(at):
        return lags, extrapolated
    # The sample's own capture must have read a log end (a point or not) of the partition.
    read = point_times if read_times is None else read_times
    slot = np.searchsorted(read, times)
    own_point = (slot < len(read)) & (read[np.minimum(slot, len(read) - 1)] == times)
    count_now = np.searchsorted(at, times, side="right")  # accepted points as of now
    newest = np.maximum(count_now - 1, 0)
    c = np.where(known, committed, 0)
    live = known & own_point & (count_now > 0)
    caught_up = live & (c >= ao[newest])
    lags[caught_up] = 0.0
    todo = live & ~caught_up & (count_now >= 2)
    left = np.searchsorted(ao, c, side="right") - 1  # newest point with offset <= c
    outside = left < 0
    right = np.where(outside, newest, left + 1)
    todo &= right < len(at)
    left = np.where(outside, 0, left)
    right = np.minimum(right, len(at) - 1)
    dy = ao[right] - ao[left]
    todo &= dy > 0
    idx = np.flatnonzero(todo)
    if len(idx):
        lo, hi = left[idx], right[idx]
        dx = (at[hi] - at[lo]).astype(np.float64)
        behind = (ao[hi] - c[idx]).astype(np.float64)
        moment = at[hi].astype(np.float64) - behind * dx / dy[idx].astype(np.float64)
        lags[idx] = np.maximum(0.0, (times[idx].astype(np.float64) - moment) / MICROS)
        extrapolated[idx] = outside[idx]
    return lags, extrapolated
