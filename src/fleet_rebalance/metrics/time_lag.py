"""Time lag per offsets sample, estimated as Kafka Lag Exporter does.

Each topic partition's log-end offsets across captures form a lookup table of
(offset, time) points. Lag Exporter keeps only points that move forward in time and do
not go backwards in offset; so does this. For a committed offset c captured at `now`:
- c at or past the table's newest log end (as of now): time lag 0;
- fewer than two points: unknown;
- otherwise find the newest pair of neighbouring points with left.offset <= c <=
  right.offset and interpolate the moment the log end was c; when c is older than the
  oldest point, extrapolate along the line from the oldest to the newest point;
- time lag = max(0, now - that moment), in seconds.

Accepted points rise in both time and offset, so both lookups are binary searches of
one partition's table. The table is the run date's captures plus the previous date's
(Lag Exporter runs continuously, so it would have them); Lag Exporter's 60-point
sliding window only bounds its memory and is not applied. A flat table (every point at
the same offset) gives no slope to extrapolate along: unknown, where Lag Exporter
reports infinity. A sample whose capture has no log-end offset for its partition is
unknown too. Unknown is NaN here: no time lag is ever NaN otherwise.
"""

from __future__ import annotations

import numpy as np

MICROS = 1_000_000


def log_end_points(times: np.ndarray, log_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One partition's points: per capture time (µs) the highest log end, ascending in
    time (rows with an unknown log end must already be left out)."""
    order = np.argsort(times, kind="stable")
    times, log_ends = times[order], log_ends[order]
    starts = np.flatnonzero(np.r_[True, times[1:] != times[:-1]])
    return times[starts], np.maximum.reduceat(log_ends, starts) if len(starts) else log_ends


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
) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, extrapolated) for one partition's samples: capture times (µs),
    committed offsets and whether each is known, against the partition's points from
    log_end_points. Seconds are NaN where unknown."""
    n = len(times)
    lags, extrapolated = np.full(n, np.nan), np.zeros(n, bool)
    keep = accepted(point_offsets)
    at, ao = point_times[keep], point_offsets[keep]
    if not n or not len(at):
        return lags, extrapolated
    seconds = at / MICROS
    now = times / MICROS
    # The sample's own capture must have a point (accepted or not) for this partition.
    slot = np.searchsorted(point_times, times)
    own_point = (slot < len(point_times)) & (
        point_times[np.minimum(slot, len(point_times) - 1)] == times
    )
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
        l_t, r_t = seconds[left[idx]], seconds[right[idx]]
        behind = (ao[right[idx]] - c[idx]).astype(np.float64)
        moment = r_t - behind * (r_t - l_t) / dy[idx].astype(np.float64)
        lags[idx] = np.maximum(0.0, now[idx] - moment)
        extrapolated[idx] = outside[idx]
    return lags, extrapolated
