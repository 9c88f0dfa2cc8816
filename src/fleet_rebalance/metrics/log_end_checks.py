"""Which log-end readings of one topic partition may enter its shared time-lag points.

Every group reading a partition reports the partition's log end at each capture, and
time_lag.py builds one lookup table from all of them, so one group's absurd reading (an
offsets row with LOG-END-OFFSET = LAG = 2^63-1) would move every other group's time lag.
Two facts about a real log end decide which readings contradict their neighbours:
- it never shrinks: readings ordered by capture time (a capture's readings by value,
  since they are concurrent) keep the longest non-decreasing run of them; the rest are
  refused. The fewest readings are refused that way, so one absurd reading is one
  refusal whether it is too high or too low; between two equally long runs the later
  readings win (Lag Exporter trusts its newest point).
- the groups of one capture read it within the capture, which is shorter than the
  interval between captures: a reading above its capture's lowest kept reading by more
  than the partition's largest growth between two consecutive captures (their lowest
  kept readings) is refused. Kept readings of a capture lie at or below the next
  capture's lowest, so this can refuse only in the newest capture: the high reading the
  first rule cannot see. With a single capture the allowance is 0 and the capture's
  lowest reading is its point.
A refused reading is left out of the shared points only: its row keeps its own offset
lag. A topic deleted and recreated restarts its log end lower; the offsets samples carry
no topic id, so the shorter side of the drop is refused.

Example (one partition, times in captures): (1, 10) (1, 11) (2, 20) (2, 2^63-1) (3, 30):
(2, 2^63-1) is above the later 30: refused; the rest is the table.
"""

from __future__ import annotations

import bisect

import numpy as np

ABOVE_LATER = "log end above a later capture's log end of the same partition"
BELOW_EARLIER = "log end below an earlier capture's log end of the same partition"
NO_READING = np.iinfo(np.int64).max
BEYOND_CAPTURE = (
    "log end above its capture's other readings of the same partition by more than "
    "the partition's log end grew between two captures"
)


def refused_log_ends(times: np.ndarray, log_ends: np.ndarray) -> dict[int, str]:
    """The readings of one partition (capture times, log ends; both known) that may not
    enter the shared points: {position: reason}, empty for a consistent history."""
    n = len(times)
    reasons: dict[int, str] = {}
    if not n:
        return reasons
    order = np.lexsort((log_ends, times))
    ordered = log_ends[order]
    kept = np.ones(n, bool)
    if (np.diff(ordered) < 0).any():
        kept[:] = False
        kept[_longest_non_decreasing(ordered)] = True
        masked = np.where(kept, ordered, NO_READING)
        lowest_after = np.r_[np.minimum.accumulate(masked[::-1])[::-1][1:], NO_READING]
        for i in np.flatnonzero(~kept):
            above = ordered[i] > lowest_after[i]
            reasons[int(order[i])] = ABOVE_LATER if above else BELOW_EARLIER
    for i in _beyond_capture(times[order], ordered, kept):
        reasons[int(order[i])] = BEYOND_CAPTURE
    return reasons


def _longest_non_decreasing(values: np.ndarray) -> np.ndarray:
    """Positions of a longest non-decreasing subsequence, the one ending latest (patience
    sorting with predecessor links)."""
    tails: list[int] = []  # tails[k]: value ending the best run of length k + 1
    ends: list[int] = []  # ...and its position
    before = np.full(len(values), -1)
    for i, v in enumerate(values.tolist()):
        k = bisect.bisect_right(tails, v)
        before[i] = ends[k - 1] if k else -1
        if k == len(tails):
            tails.append(v)
            ends.append(i)
        else:
            tails[k], ends[k] = v, i
    chain, i = [], ends[-1]
    while i >= 0:
        chain.append(i)
        i = before[i]
    return np.array(chain[::-1], np.int64)


def _beyond_capture(times: np.ndarray, log_ends: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Positions (in time order, kept only) of readings too far above their capture's
    lowest kept reading."""
    at = np.flatnonzero(kept)
    t, x = times[at], log_ends[at]
    starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
    lows = np.minimum.reduceat(x, starts)
    # Unsigned differences: each is >= 0 (kept readings never shrink, a low is its
    # capture's least), and a reading near 2^63 minus a negative one must not wrap.
    growth = np.diff(lows.astype(np.uint64))
    allowance = growth.max() if len(growth) else np.uint64(0)
    low_of = np.repeat(lows, np.diff(np.r_[starts, len(t)]))
    return at[x.astype(np.uint64) - low_of.astype(np.uint64) > allowance]
