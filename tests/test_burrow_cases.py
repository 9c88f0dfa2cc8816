"""Burrow's own evaluator tests (linkedin/Burrow `core/internal/evaluator/caching_test.go`
at BURROW_COMMIT) as captures, through `window_checks`, `window_ranks` and
`group_consumer_status`.

The mapping (consumer_status's docstring): a Burrow commit is a capture that a member
owns at the commit's timestamp, its log end the offset plus the commit's lag (none
without a lag); each of Burrow's broker offsets is a later capture that nobody owns (no
commit since) and shows the last committed offset, oldest first, the last at Burrow's
`timeNow` with Burrow's current lag: that capture is the one rated. The window is sized
to hold them all. Every case gets Burrow's status. Where a check cannot hold as
captures (case 8), its test id ends in `documented_difference` and the test asserts
our result, and Burrow's, with the reason.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from sample_tables import sample_table

from fleet_rebalance.metrics.consumer_status import (
    INPUT_COLUMNS,
    NAMES,
    entries_of,
    group_consumer_status,
    window_checks,
    window_ranks,
)

BURROW_COMMIT = "ced55ba90f6b833a45a124d411fd5eef63a70933"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MEMBER = "consumer-1-0a1b"


@dataclass(frozen=True)
class Case:
    """One entry of Burrow's CheckRules table: its inputs and what each check and
    calculatePartitionStatus return."""

    commits: list[tuple[int, int, int | None]]  # (offset, timestamp ms, lag or None)
    broker_offsets: list[int]
    current_lag: int
    now: int  # seconds
    allowed_lag: int
    lag_always_not_zero: bool
    rewind_index: int  # -1: none
    stopped: bool
    stalled: bool
    lag_not_decreasing: bool
    recent_lag_zero: bool
    status: str


def _steady(lags: list[int], step: int = 1000, moving: bool = True) -> list[tuple]:
    """Five commits 100 s apart from 100 s, offsets 1000, 2000, ... (or all 1000)."""
    return [(1000 + step * i * moving, 100_000 * (i + 1), lag) for i, lag in enumerate(lags)]


def _busy(lag: int = 0) -> list[tuple]:
    """Fifteen commits about a second apart, a consumer keeping up (Burrow #290)."""
    stamps = [
        1512224618356, 1512224619362, 1512224620366, 1512224621367, 1512224622370,
        1512224623373, 1512224624378, 1512224625379, 1512224626383, 1512224627383,
        1512224628383, 1512224629388, 1512224630391, 1512224631394, 1512224632397,
    ]  # fmt: skip
    return [(792748079 + i, stamp, lag) for i, stamp in enumerate(stamps)]


REWOUND = [(1000, 100_000, 100), (2000, 200_000, 150), (3000, 300_000, 200)]

# Burrow's table, case by case; the comments say what each case is about.
CHECK_RULES = [
    # 0: a zero lag early in the window makes it OK; 100 s since the last commit is
    # well inside the window's 400 s.
    Case(_steady([0, 50, 100, 150, 200]), [5200], 200, 600, 0,
         False, -1, False, False, True, False, "OK"),
    # 1: 400 s since the last commit equals the window's span: not yet stopped.
    Case(_steady([0, 50, 100, 150, 200]), [5200], 200, 900, 0,
         False, -1, False, False, True, False, "OK"),
    # 2: 500 s: stopped, and the early zero lag no longer hides it (#290).
    Case(_steady([0, 50, 100, 150, 200]), [5200], 200, 1000, 0,
         False, -1, True, False, True, False, "STOP"),
    # 3: stopped with a lag that was never zero.
    Case(_steady([50, 100, 150, 200, 250]), [5250], 250, 1000, 0,
         True, -1, True, False, True, False, "STOP"),
    # 4: the offset never moves, but the lag was zero in the window: OK.
    Case(_steady([0, 50, 100, 150, 200], moving=False), [1200], 200, 600, 0,
         False, -1, False, True, True, False, "OK"),
    # 5: the offset never moves and the lag is never zero: STALL.
    Case(_steady([100, 150, 200, 250, 300], moving=False), [1300], 300, 600, 0,
         True, -1, False, True, True, False, "STALL"),
    # 6: the same with a lag that stays put.
    Case(_steady([100] * 5, moving=False), [1100], 100, 600, 0,
         True, -1, False, True, True, False, "STALL"),
    # 7: the offset went back (3000 -> 2000) and then past 3000 again: OK.
    Case([*REWOUND, (2000, 400_000, 1250), (4000, 500_000, 300)], [4300], 300, 600, 0,
         True, 3, False, False, False, False, "OK"),
    # 8: a current lag of zero is OK whatever the timestamps say.
    Case(_steady([50, 100, 150, 200, 250]), [5250], 0, 1000, 0,
         True, -1, True, False, True, False, "OK"),
    # 9: every commit had zero lag, but nothing was committed for 18 s while the broker
    # moved on: STOP (#290).
    Case(_busy(), [792749024, 792749000, 792748800, 792748600, 792748500], 931,
         1512224650, 0, False, -1, True, False, True, False, "STOP"),
    # 10: the same silence, but the broker sat at the committed offset until one new
    # message just arrived: not stopped (#303).
    Case(_busy(), [792748094, 792748093, 792748093, 792748093], 1, 1512224650, 0,
         False, -1, True, False, True, True, "OK"),
    # 11: case 0 with a commit without a lag between each two: they change nothing.
    Case([(1000 + 500 * i, 100_000 + 50_000 * i, None if i % 2 else 50 * (i // 2))
          for i in range(10)], [5700], 200, 600, 0,
         False, -1, False, False, True, False, "OK"),
    # 12: stopped, but the current lag (1) is within the allowed lag (1).
    Case([(1000, 100_000, 2), (2000, 200_000, 1), (2000, 300_000, 1)], [2001], 1, 550, 1,
         False, -1, True, False, False, False, "OK"),
    # 13: case 5 with an allowed lag (99) that every lag exceeds: still STALL.
    Case(_steady([100, 150, 200, 250, 300], moving=False), [1300], 300, 600, 99,
         True, -1, False, True, True, False, "STALL"),
    # 14: case 7 with an allowed lag of 99: still OK.
    Case([*REWOUND, (2000, 400_000, 1250), (4000, 500_000, 300)], [4300], 300, 600, 99,
         True, 3, False, False, False, False, "OK"),
    # 15: the offset went back (3000 -> 2000) and is still short of 3000: REWIND.
    Case([*REWOUND, (2000, 400_000, 1250), (2500, 500_000, 300)], [4300], 300, 600, 0,
         True, 3, False, False, False, False, "REWIND"),
]  # fmt: skip

# Checks whose result must differ, per case, with the reason; never a status.
CASE_8_WHY = (
    "case 8 gives a current lag of 0 beside a broker offset of 5250 over offset 5000; one "
    "capture shows LAG = LOG-END-OFFSET - CURRENT-OFFSET, so the capture rated keeps the "
    "current lag (the rule the case is about) and its log end is 5000, not 5250. In the "
    "window, that capture is a zero lag, and a decrease after 250"
)
DIFFERENCES: dict[int, dict[str, tuple[bool, str]]] = {
    8: {
        "lag_always_not_zero": (False, CASE_8_WHY),
        "lag_not_decreasing": (False, CASE_8_WHY),
    },
}


def at_ms(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


def capture(when: dt.datetime, offset: int, lag: int | None, owner: str | None) -> dict:
    return {
        "cluster": "c",
        "group_id": "g",
        "topic": "t",
        "partition": 0,
        "captured_at": when,
        "capture_date": when.date(),
        "current_offset": offset,
        "log_end_offset": None if lag is None else offset + lag,
        "lag": lag,
        "consumer_id": owner,
    }


def as_captures(case: Case) -> tuple[list[dict], int]:
    """The case's captures and the window that holds them all."""
    rows = [capture(at_ms(ms), offset, lag, MEMBER) for offset, ms, lag in case.commits]
    last_offset, last_ms = case.commits[-1][:2]
    fetches = sorted(case.broker_offsets)  # log ends only grow: oldest first
    now_ms = case.now * 1000
    for k, log_end in enumerate(fetches, start=1):
        when = at_ms(last_ms + (now_ms - last_ms) * k // len(fetches))
        lag = case.current_lag if k == len(fetches) else log_end - last_offset
        rows.append(capture(when, last_offset, lag, None))
    return rows, len(rows)


def rate(rows: list[dict], intervals: int, allowed_lag: int = 0):
    table = sample_table(rows, INPUT_COLUMNS)
    day = rows[-1]["capture_date"]
    entries = entries_of(table, day)
    checks = window_checks(entries, intervals, allowed_lag)
    columns = group_consumer_status(table, day, intervals, allowed_lag)
    return checks, window_ranks(checks), columns


def check_rules_id(index: int) -> str:
    suffix = "-documented_difference" if index in DIFFERENCES else ""
    return f"TestCachingEvaluator_CheckRules-{index}{suffix}"


@pytest.mark.parametrize(
    "index", range(len(CHECK_RULES)), ids=[check_rules_id(i) for i in range(len(CHECK_RULES))]
)
def test_check_rules(index: int) -> None:
    """Given Burrow's CheckRules case as captures, Then the capture at `timeNow` gets
    Burrow's status and each check Burrow's result, Expected: the table above, except
    the checks DIFFERENCES lists (never the status), which hold our documented value."""
    case = CHECK_RULES[index]
    rows, intervals = as_captures(case)
    checks, ranks, columns = rate(rows, intervals, case.allowed_lag)
    burrow = {
        "lag_always_not_zero": case.lag_always_not_zero,
        "offsets_rewind": case.rewind_index > 0,
        "offsets_stopped": case.stopped,
        "offsets_stalled": case.stalled,
        "lag_not_decreasing": case.lag_not_decreasing,
        "recent_lag_zero": case.recent_lag_zero,
    }
    ours = {name: bool(getattr(checks, name)[-1]) for name in burrow}
    for name, (documented, why) in DIFFERENCES.get(index, {}).items():
        assert ours[name] == documented != burrow[name], why
        burrow[name] = documented
    assert ours == burrow
    assert NAMES[ranks[-1]] == case.status
    assert list(columns["status"]) == [case.status]
    assert list(columns["current_lag"]) == [case.current_lag]


@pytest.mark.parametrize("index", range(len(CHECK_RULES)), ids=check_rules_id)
def test_check_rules_captures_keep_the_current_lag(index: int) -> None:
    """Given a case whose newest broker offset minus its last committed offset is not its
    current lag (8 and 15 only), Then the capture rated shows the current lag, Expected:
    its lag is Burrow's current lag and its log end the offset plus that lag."""
    case = CHECK_RULES[index]
    rows, _ = as_captures(case)
    fits = max(case.broker_offsets) - case.commits[-1][0] == case.current_lag
    assert fits == (index not in (8, 15))
    assert rows[-1]["lag"] == case.current_lag
    assert rows[-1]["log_end_offset"] == case.commits[-1][0] + case.current_lag


def test_check_rules_rated_at_timenow() -> None:
    """Given any case, Then the capture rated is the last, at Burrow's timeNow, owned by
    nobody, Expected: captured_at == timeNow and the window holds every capture."""
    for case in CHECK_RULES:
        rows, intervals = as_captures(case)
        assert rows[-1]["captured_at"] == EPOCH + dt.timedelta(seconds=case.now)
        assert rows[-1]["consumer_id"] is None and intervals == len(rows)


# The storage fixture (core/internal/storage/fixtures.go): one broker offset (4321) fetched
# first, then commits 10 s apart from 100 s before the request, offsets 1000, 1100, ...:
# ten for testgroup (a full ring of 10), five for testgroup2. The request is the capture
# rated, 100 s after the first commit (Burrow's comes a few hundred ms later, its sleeps).
FIXTURE_START = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
FIXTURE_INTERVALS = 10
BROKER_OFFSET = 4321


def fixture_group(commits: int) -> list[dict]:
    rows = [
        capture(FIXTURE_START + dt.timedelta(seconds=10 * i), 1000 + 100 * i, None, MEMBER)
        for i in range(commits)
    ]
    now = FIXTURE_START + dt.timedelta(seconds=100)
    rows.append(capture(now, rows[-1]["current_offset"], None, None))
    for row in rows:  # every lag is against the one broker offset
        row["lag"] = BROKER_OFFSET - row["current_offset"]
        row["log_end_offset"] = BROKER_OFFSET
    return rows


def test_TestCachingEvaluator_SingleRequest_ShowAll() -> None:
    """Given testgroup (ten commits, the last 10 s before the request), Then its one
    partition is OK, Expected: status and group status OK, current (total) lag 2421."""
    _, _, columns = rate(fixture_group(10), FIXTURE_INTERVALS + 1)
    assert list(columns["partition"]) == [0]
    assert (list(columns["status"]), columns["group_status"]) == (["OK"], ["OK"])
    assert sum(columns["current_lag"]) == 2421


def test_TestCachingEvaluator_SingleRequest_NoShowAll() -> None:
    """Given testgroup, Then only partitions that are not OK would be listed, Expected:
    none, with the group OK and its total lag 2421."""
    _, _, columns = rate(fixture_group(10), FIXTURE_INTERVALS + 1)
    assert len(columns["partition"]) == 1
    assert [s for s in columns["status"] if s != "OK"] == []
    assert columns["group_status"] == ["OK"] and sum(columns["current_lag"]) == 2421


def test_TestCachingEvaluator_SingleRequest_Incomplete() -> None:
    """Given testgroup2 (five commits, the last 60 s before the request, over a 40 s
    window), Then the partition has stopped, Expected: partition STOP, group ERR,
    current lag 2921. Burrow's `complete` (0.5) and Maxlag's start and end offsets are
    not in the table."""
    _, _, columns = rate(fixture_group(5), FIXTURE_INTERVALS + 1)
    assert (list(columns["status"]), columns["group_status"]) == (["STOP"], ["ERR"])
    assert list(columns["current_lag"]) == [2921]


def test_TestCachingEvaluator_Start_unknown_group_has_no_rows() -> None:
    """Given a group whose captures show no committed offset (Burrow has no commit and
    answers NOTFOUND), Then nothing is rated, Expected: no rows."""
    rows = [capture(FIXTURE_START, 0, None, None)]
    rows[0]["current_offset"] = None
    table = sample_table(rows, INPUT_COLUMNS)
    assert group_consumer_status(table, FIXTURE_START.date(), FIXTURE_INTERVALS) == {}
