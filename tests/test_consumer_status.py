"""consumer_status's numpy core on Arrow tables: what the Spark gold tests can't reach
cheaply (row order, the day boundary, skipped entries)."""

from __future__ import annotations

import datetime as dt
import itertools

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from sample_tables import sample_table

from fleet_rebalance.metrics.consumer_status import (
    INPUT_COLUMNS,
    NAMES,
    entries_of,
    group_consumer_status,
    group_id_runs,
    topic_consumer_status,
    window_checks,
    window_ranks,
)

DAY = dt.date(2026, 11, 20)
MIDNIGHT = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def row(topic: str, partition: int, when: dt.datetime, offset, lag, owner: str | None) -> dict:
    return {
        "cluster": "c",
        "group_id": "g",
        "topic": topic,
        "partition": partition,
        "captured_at": when,
        "capture_date": when.date(),
        "current_offset": offset,
        "log_end_offset": None if offset is None or lag is None else offset + lag,
        "lag": lag,
        "consumer_id": owner,
    }


def entries(topic: str, partition: int, minutes_and_values, owner: str | None = "m1"):
    return [
        row(topic, partition, MIDNIGHT + dt.timedelta(minutes=minute), offset, lag, owner)
        for minute, offset, lag in minutes_and_values
    ]


def status(rows: list[dict], intervals: int = 3, allowed_lag: int = 0) -> dict[tuple, dict]:
    table = sample_table(rows, INPUT_COLUMNS)
    columns = group_consumer_status(table, DAY, intervals, allowed_lag)
    instant = pa.timestamp("us", tz="UTC")
    table = pa.table(
        {
            k: pa.array(v, instant if k in ("evaluated_at", "worst_status_at") else None)
            for k, v in columns.items()
        }
    )
    return {(r["topic"], r["partition"]): r for r in table.to_pylist()}


def test_yesterdays_entries_fill_the_first_windows_but_are_not_rated():
    rows = entries("t", 0, [(-20, 30, 5), (-10, 20, 6), (10, 25, 4), (20, 30, 3)])
    got = status(rows)[("t", 0)]
    # 00:10 sees 30 -> 20 (yesterday) in its window: REWIND; by 00:20 it has slid out.
    assert (got["windows"], got["status"], got["worst_status"]) == (2, "OK", "REWIND")
    assert got["worst_status_at"] == MIDNIGHT + dt.timedelta(minutes=10)
    assert got["non_ok_windows"] == 1 and got["group_worst_status"] == "REWIND"


def test_partitions_are_rated_apart_whatever_the_row_order():
    a = entries("a", 0, [(0, 10, 5), (10, 10, 6), (20, 10, 7)])  # STALL
    b = entries("b", 0, [(0, 10, 7), (10, 20, 6), (20, 30, 5)])  # catching up: OK
    rows = [a[2], b[1], a[0], b[2], b[0], a[1]]
    got = status(rows)
    assert {k: r["status"] for k, r in got.items()} == {("a", 0): "STALL", ("b", 0): "OK"}
    assert {r["group_status"] for r in got.values()} == {"ERR"}  # STALL, capped at ERR
    assert got[("b", 0)]["current_lag"] == 5


def test_a_topics_samples_are_rated_per_group_as_each_group_alone():
    """The per-topic call rates each group reading the topic as that group's own call
    would: a null group_id is a group of its own, and rows of one group need not be
    adjacent."""
    stalled = entries("t", 0, [(0, 10, 5), (10, 10, 6), (20, 10, 7)])
    moving = [r | {"group_id": "h"} for r in entries("t", 0, [(0, 10, 7), (10, 20, 6)])]
    nameless = [r | {"group_id": None} for r in entries("t", 1, [(0, 10, 5), (10, 20, 4)])]
    rows = [moving[1], stalled[0], nameless[0], stalled[2], moving[0], nameless[1], stalled[1]]
    table = sample_table(rows, INPUT_COLUMNS)
    runs = group_id_runs(table)
    assert sorted([r["group_id"][0].as_py() or "", r.num_rows] for r in runs) == [
        ["", 2],
        ["g", 3],
        ["h", 2],
    ]
    got = topic_consumer_status(table, DAY, 3)
    alone = [
        group_consumer_status(sample_table(part, INPUT_COLUMNS), DAY, 3)
        for part in (stalled, moving, nameless)
    ]
    key = lambda columns: columns["group_id"][0] or ""  # noqa: E731
    assert [{k: list(v) for k, v in c.items()} for c in sorted(got, key=key)] == [
        {k: list(v) for k, v in c.items()} for c in sorted(alone, key=key)
    ]
    assert group_id_runs(table.slice(0, 0)) == []


def test_entries_without_an_offset_are_skipped_without_a_lag_not_rated():
    rows = entries("t", 0, [(0, 10, 5), (10, None, None), (20, 20, None), (30, 30, 4)])
    got = status(rows)[("t", 0)]
    assert (got["windows"], got["status"], got["current_lag"]) == (2, "OK", 4)
    assert status(entries("t", 1, [(0, None, 5)])) == {}
    assert status(entries("t", 1, [(-10, 10, 5)])) == {}  # nothing of the date to rate


def test_an_offset_without_a_lag_still_counts():
    """Given an owned partition at 10, then 5 with no lag known, then 10 again, Then the
    middle capture is an entry (Burrow keeps commits without a lag) that moved the
    offset and rewound it, Expected: not STALL but WARN (the rewind recovered; the
    known lags 5 and 6 never shrink); dropping that capture would make it STALL."""
    got = status(entries("t", 0, [(0, 10, 5), (10, 5, None), (20, 10, 6)]))[("t", 0)]
    assert (got["status"], got["windows"]) == ("WARN", 2)


def test_a_lag_shrinking_across_an_unknown_one_is_a_decrease():
    """Given known lags 6 then 5 with an unknown lag between them, Then the lag rule
    compares each known lag with the previous known one, Expected: OK, not WARN."""
    got = status(entries("t", 0, [(0, 10, 6), (10, 20, None), (20, 30, 5)]))[("t", 0)]
    assert got["status"] == "OK"


def test_only_the_first_rewind_of_a_window_counts():
    """Given offsets 10, 5, 12, 8 with lags never zero, Then Burrow looks at the first
    rewind (10 -> 5) and whether the window got back to 10 (12: yes), Expected: not
    REWIND though 12 -> 8 never recovers; the lag shrank, so OK."""
    rows = entries("t", 0, [(0, 10, 9), (10, 5, 20), (20, 12, 7), (30, 8, 11)])
    assert status(rows, intervals=4)[("t", 0)]["status"] == "OK"
    # With three-entry windows the last one starts at 5: its first rewind is 12 -> 8.
    assert status(rows, intervals=3)[("t", 0)]["status"] == "REWIND"


def test_allowed_lag():
    """Given lags 3, 2, 2 on an owned partition whose offset never moves, Then with
    allowed lag 2 the current lag is within it, Expected: OK; with 0, STALL."""
    rows = entries("t", 0, [(0, 10, 3), (10, 10, 2), (20, 10, 2)])
    assert status(rows, allowed_lag=2)[("t", 0)]["status"] == "OK"
    assert status(rows)[("t", 0)]["status"] == "STALL"


def _left_behind(lags_after: list[int]) -> list[dict]:
    """Owned and moving 100 -> 400 (minutes 0-30, lags 50, 50, 50, 0), then nobody owns
    it and it stays at 400 with `lags_after` (minutes 40-90)."""
    owned = entries("t", 0, [(10 * i, 100 * (i + 1), lag) for i, lag in enumerate([50] * 3 + [0])])
    later = [(40 + 10 * i, 400, lag) for i, lag in enumerate(lags_after)]
    return owned + entries("t", 0, later, owner=None)


def test_a_partition_left_behind_stops_however_caught_up_its_last_commit_was():
    """Given the consumer's last sign of life at minute 30, caught up (its capture shows
    the log end at its offset), and the log end running ahead from the next capture on,
    Then with 5-capture windows the silence exceeds the window's span at minute 60, and
    the captures since show the log end moving on (Burrow's CheckRules case 9: zero lag
    at every commit, then silence while the broker moves on, is STOP), Expected: OK at
    40 and 50 (the span still covers the silence; the zero lag of minute 30 is in the
    window), STOP from 60."""
    rows = _left_behind([100, 150, 200, 250, 300, 350])
    table = sample_table(rows, INPUT_COLUMNS)
    e = entries_of(table, DAY)
    checks = window_checks(e, intervals=5)
    ranks = window_ranks(checks)
    assert [NAMES[r] for r in ranks[4:]] == ["OK", "OK", "STOP", "STOP", "STOP", "STOP"]
    assert checks.offsets_stopped[6:].all() and not checks.recent_lag_zero.any()
    got = status(rows, intervals=5)[("t", 0)]
    assert got["worst_status_at"] == MIDNIGHT + dt.timedelta(minutes=60)


def test_a_consumer_stopped_with_lag_stops_half_a_window_later():
    """Given the consumer's last sign of life at minute 30 with 50 messages of lag (not
    caught up), and no log end at its offset since, Then the silence exceeds the
    window's span at minute 60, Expected: OK at 40 and 50 (the span still covers the
    silence), STOP from 60 (Burrow #290: STOP is checked before a zero lag earlier in
    the window)."""
    owned = entries("t", 0, [(10 * i, 100 * (i + 1), lag) for i, lag in enumerate([0, 0, 0, 50])])
    later = entries("t", 0, [(40 + 10 * i, 400, 60 + i) for i in range(6)], owner=None)
    e = entries_of(sample_table(owned + later, INPUT_COLUMNS), DAY)
    ranks = window_ranks(window_checks(e, intervals=5))
    assert [NAMES[r] for r in ranks[4:]] == ["OK", "OK", "STOP", "STOP", "STOP", "STOP"]


def test_a_quiet_partition_a_message_just_reached_is_not_yet_stopped():
    """Given the same silence, but the log end stayed at the committed offset at minutes
    40 to 70 and one message arrived by minute 80 (Burrow #303, CheckRules case 10),
    Then at 80 the log end stayed at the offset until the newest capture: caught up
    lately; at 90 the capture before shows it moved on, Expected: OK through minute 80
    (a zero lag, then the recent one), STOP at 90."""
    rows = _left_behind([0, 0, 0, 0, 1, 1])
    e = entries_of(sample_table(rows, INPUT_COLUMNS), DAY)
    checks = window_checks(e, intervals=5)
    assert [NAMES[r] for r in window_ranks(checks)[4:]] == ["OK"] * 5 + ["STOP"]
    assert checks.offsets_stopped[8:].all()
    assert [bool(x) for x in checks.recent_lag_zero[8:]] == [True, False]


def test_caught_up_only_before_the_log_end_moved_on_is_not_caught_up_lately():
    """Given the log end at the committed offset at minute 40 only, then moving on at 50
    and after (20, 40, ... messages), Then the captures after the last sign of life show
    the log end moving on; the zero lag of minute 40 is no recent one once a later
    capture shows lag (Burrow's ring of broker fetches holds only the last 100 s),
    Expected: OK at 40 (zero lag) and 50, STOP from 60 when the silence exceeds the span."""
    rows = _left_behind([0, 20, 40, 60, 80, 100])
    e = entries_of(sample_table(rows, INPUT_COLUMNS), DAY)
    checks = window_checks(e, intervals=5)
    assert [NAMES[r] for r in window_ranks(checks)[4:]] == ["OK", "OK"] + ["STOP"] * 4
    assert [bool(x) for x in checks.recent_lag_zero[4:]] == [False, True] + [False] * 4


def test_an_owner_is_a_sign_of_life():
    """Given an owned partition stuck at 10 (minutes 0-40), then left without an owner,
    Then its timestamp stays at the last owned capture (40) instead of going back to
    when 10 was first seen, Expected: STALL while owned and at 50 and 60, STOP from 70
    (silence 30 min over a 20 min span)."""
    rows = entries("t", 0, [(10 * i, 10, 5 + i) for i in range(5)])
    rows += entries("t", 0, [(50 + 10 * i, 10, 10 + i) for i in range(3)], owner=None)
    e = entries_of(sample_table(rows, INPUT_COLUMNS), DAY)
    ranks = window_ranks(window_checks(e, intervals=5))
    assert [NAMES[r] for r in ranks[1:]] == ["STALL"] * 6 + ["STOP"]


def burrow_by_hand(caps: list[dict], intervals: int, allowed_lag: int) -> list[str | None]:
    """Burrow's calculatePartitionStatus, entry by entry in plain Python, on one
    partition's captures as consumer_status maps them (timestamps: the last sign of life;
    broker offsets: the last log end captured after it, before the capture rated): the
    oracle for the running sums."""
    lives = [
        i == 0 or c["owned"] or c["offset"] != caps[i - 1]["offset"] for i, c in enumerate(caps)
    ]
    last_life = [max(j for j in range(i + 1) if lives[j]) for i in range(len(caps))]
    ts = [caps[j]["micros"] for j in last_life]
    out: list[str | None] = []
    for i, now in enumerate(caps):
        w = max(0, i - intervals + 1)
        win, offsets = caps[w : i + 1], [c["offset"] for c in caps[w : i + 1]]
        lags = [c["lag"] for c in win if c["lag"] is not None]
        if now["lag"] is None:
            out.append(None)
            continue
        if now["lag"] <= allowed_lag or len(win) == 1:
            out.append("OK")
            continue
        stopped = now["micros"] - ts[i] > ts[i] - ts[w]
        since = [c["log_end"] for c in caps[max(w, last_life[i] + 1) : i]]
        broker = [b for b in since if b is not None][-1:]  # the last before the newest
        if stopped and not any(b <= now["offset"] for b in broker):
            out.append("STOP")
            continue
        back = [k for k in range(1, len(win)) if offsets[k] < offsets[k - 1]]
        if back and not any(o >= offsets[back[0] - 1] for o in offsets[back[0] :]):
            out.append("REWIND")
            continue
        if all(lag > allowed_lag for lag in lags):
            if all(a == b for a, b in itertools.pairwise(offsets)):
                out.append("STALL")
                continue
            if all(b >= a for a, b in itertools.pairwise(lags)):
                out.append("WARN")
                continue
        out.append("OK")
    return out


capture_steps = st.lists(
    st.tuples(
        st.integers(1, 600),  # seconds since the capture before
        # Offset step (negative: a rewind); often none, so silences and STOP are common.
        st.one_of(st.just(0), st.integers(-3, 3)),
        st.one_of(st.none(), st.integers(0, 3)),  # lag
        st.booleans(),  # owned
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(capture_steps, min_size=1, max_size=3),
    st.integers(1, 6),
    st.integers(0, 2),
)
def test_running_sums_match_burrow_entry_by_entry(partitions, intervals, allowed_lag):
    """Given random captures of up to three partitions (rewinds, unknown lags, owners
    coming and going, uneven gaps), Then every window's rank equals Burrow's algorithm
    run on that window alone, Expected: the same status at every rated capture."""
    rows, by_partition = [], []
    for p, steps in enumerate(partitions):
        caps, offset, when = [], 100, MIDNIGHT
        for gap, step, lag, owned in steps:
            offset, when = offset + step, when + dt.timedelta(seconds=gap)
            rows.append(row("t", p, when, offset, lag, "m" if owned else None))
            caps.append(
                {
                    "offset": offset,
                    "lag": lag,
                    "log_end": rows[-1]["log_end_offset"],
                    "owned": owned,
                    "micros": (when - EPOCH) // dt.timedelta(microseconds=1),
                }
            )
        by_partition.append(burrow_by_hand(caps, intervals, allowed_lag))
    e = entries_of(sample_table(rows, INPUT_COLUMNS), DAY)
    ranks = window_ranks(window_checks(e, intervals, allowed_lag))
    expected = [s for statuses in by_partition for s in statuses]
    got = [NAMES[r] if known else None for r, known in zip(ranks, e.lag_known, strict=True)]
    assert got == expected
