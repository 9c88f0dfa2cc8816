"""replay_group on hand-built flat frames, as the replay job hands them over."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from fleet_rebalance.pipeline import silver
from fleet_rebalance.replay.group import replay_group
from fleet_rebalance.replay.rebalance_events import Coverage, group_history
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

DAY = dt.date(2026, 11, 20)
COLUMNS = silver.union_schema().fieldNames()


def at(day: int, minutes: int) -> pd.Timestamp:
    return pd.Timestamp(2026, 11, day) + pd.Timedelta(minutes=minutes)


def member_row(when, member, partitions, state="Stable", strategy="range"):
    return {
        "captured_at": when,
        "state": state,
        "assignment_strategy": strategy,
        "consumer_id": member,
        "group_instance_id": None,
        "host": None,
        "client_id": None,
        "subscription": np.array(["orders"], dtype=object),
        "assigned_topics": np.array(["orders"] * len(partitions), dtype=object),
        "assigned_partitions": np.array(partitions, dtype=np.int32),
    }


def lag_rows(when, lags):
    return [
        {"captured_at": when, "topic": "orders", "partition": p, "lag": lag}
        for p, lag in enumerate(lags)
    ]


def run(captures, lags):
    return replay_group(
        ("c", "g"),
        pd.DataFrame(captures),
        pd.DataFrame(lags, columns=["captured_at", "topic", "partition", "lag"]),
        run_date=DAY,
        assignors=["range", "roundrobin", "observed"],
        topic_history={},
        columns=COLUMNS,
    )


def test_member_left_against_previous_date_baseline_with_lags_at_the_event():
    baseline, same, left = at(19, 23 * 60 + 50), at(20, 0), at(20, 10)
    captures = [
        member_row(baseline, "c1", [0, 1]),
        member_row(baseline, "c2", [2, 3]),
        member_row(same, "c2", [2, 3]),  # rows arrive unordered, as from Spark
        member_row(same, "c1", [0, 1]),
        member_row(left, "c2", [0, 1, 2, 3]),
    ]
    lags = (
        lag_rows(left, [5, None, 7, 1]) + lag_rows(baseline, [1, 1, 1, 1]) + lag_rows(same, [0] * 4)
    )
    out = run(captures, lags)
    events = out[out["_table"] == "rebalance_events"]
    assert events[["event_seq", "trigger", "member_count", "partition_count"]].values.tolist() == [
        [1, "member_left", 1, 4]
    ]
    metrics = out[out["_table"] == "replay_metrics"].set_index("assignor")
    assert set(metrics.index) == {"range", "roundrobin", "observed"}
    assert (metrics["trigger"] == "member_left").all()
    assert (metrics["event_at"] == left).all()
    assert metrics.loc["observed", "lag_total"] == 13  # the null lag counts as unknown, 0
    assert metrics.loc["observed", "conforms"] is True
    # every assignor starts from the baseline: nothing is fresh, c2 keeps its two
    assert metrics["fresh"].tolist() == [0, 0, 0]
    assert metrics.loc["observed", "kept"] == 2
    assert metrics.loc["range", "kept"] == 2
    assert out[out["_table"] == "replay_errors"].empty


def test_lags_of_times_without_a_capture_row_are_not_read():
    """The job hands over a group's offsets from its first replayed capture on, those
    of its gaps too (pipeline/replay.py lag_rows): only its captures' rows count."""
    baseline, gap, left = at(19, 23 * 60 + 50), at(20, 5), at(20, 10)
    captures = [
        member_row(baseline, "c1", [0, 1]),
        member_row(baseline, "c2", [2, 3]),
        member_row(left, "c2", [0, 1, 2, 3]),
    ]
    lags = lag_rows(baseline, [1, 1, 1, 1]) + lag_rows(left, [5, 2, 7, 1])
    others = [{**row, "lag": 900} for row in lag_rows(gap, [0] * 8)]
    others += [{**row, "topic": "payments"} for row in lag_rows(gap, [3, 3])]
    assert run(captures, lags + others).equals(run(captures, lags))


def test_empty_group_row_and_missing_lags_side():
    captures = [
        member_row(at(20, 0), "c1", [0]),
        {**member_row(at(20, 10), None, []), "state": "Empty", "subscription": None},
    ]
    out = run(captures, [])
    events = out[out["_table"] == "rebalance_events"]
    assert events["trigger"].tolist() == ["initial", "member_left"]
    assert events["member_count"].tolist() == [1, 0]


def test_offsets_without_members_capture_give_no_rows():
    assert run([], lag_rows(at(20, 0), [1])).empty


def test_out_of_order_snapshots_are_refused():
    a = Snapshot(dt.datetime(2026, 11, 20, 0, 10), (MemberSnapshot("m", None, ("t",), ()),))
    b = Snapshot(dt.datetime(2026, 11, 20, 0, 0), (MemberSnapshot("m", None, ("t",), ()),))
    with pytest.raises(ValueError, match="out of capture order"):
        list(group_history([a, b], [], Coverage(), a.captured_at.date()))


def test_a_capture_that_repeats_the_previous_one_is_not_a_new_snapshot():
    from fleet_rebalance.replay.group import LagIndex, snapshots_from

    first, repeat, grown, moved = at(20, 0), at(20, 10), at(20, 20), at(20, 30)
    again, last = at(20, 40), at(20, 50)
    captures = [
        member_row(first, "c1", [0, 1]),
        member_row(repeat, "c1", [0, 1]),
        member_row(grown, "c1", [0, 1]),  # same rows, but the topic has grown
        member_row(moved, "c1", [0, 1, 2]),
        member_row(again, "c1", [0, 1, 2]),
        member_row(last, "c1", [0, 1, 2]),  # a repeat, but the last: it closes the day
    ]
    lags = lag_rows(first, [0, 0]) + lag_rows(repeat, [3, 4]) + lag_rows(grown, [0, 0, 0])
    lags += lag_rows(moved, [0, 0, 0]) + lag_rows(again, [0, 0, 0]) + lag_rows(last, [0, 0, 0])
    frame = pd.DataFrame(lags, columns=["captured_at", "topic", "partition", "lag"])
    index = LagIndex(pa.Table.from_pandas(frame, preserve_index=False))
    rows = pa.Table.from_pandas(pd.DataFrame(captures), preserve_index=False)
    snapshots = list(snapshots_from(rows, index, []))
    assert [s.captured_at for s in snapshots] == [first, grown, moved, last]
    assert [s.follows for s in snapshots[1:]] == [repeat, grown, again]
    assert [s.partition_counts for s in snapshots] == [{"orders": 2}] + [{"orders": 3}] * 3
    # Lags differ between repeats, but an event's lags are looked up at its own capture.
    out = run(captures, lags)
    events = out[out["_table"] == "rebalance_events"]
    assert events["trigger"].tolist() == ["initial", "partitions_added"]


MAX64 = (1 << 63) - 1


def test_lags_at_int64s_edge_are_replayed_exactly_and_a_sum_past_it_is_null():
    """Given a group of one member owning two partitions whose lags are 2^63 - 1 and
    unknown at its first capture, then 2^63 - 1 and 1 at its second (lags handed over as
    Arrow gives them: nullable int64, which pandas would make float64), Then lag_total is
    2^63 - 1 exactly at the first (never 2^63 or -2^63) and null at the second, whose
    sum passes int64: a long column holds no more. Expected: MAX64, then None."""
    first, second = at(20, 0), at(20, 20)
    captures = [member_row(first, "c1", [0, 1]), member_row(second, "c2", [0, 1])]
    lags = pa.table(
        {
            "captured_at": pa.array([first, first, second, second], pa.timestamp("ns")),
            "topic": ["orders"] * 4,
            "partition": pa.array([0, 1, 0, 1], pa.int32()),
            "lag": pa.array([MAX64, None, MAX64, 1], pa.int64()),
        }
    )
    out = replay_group(
        ("c", "g"),
        pd.DataFrame(captures),
        lags,
        run_date=DAY,
        assignors=["observed"],
        topic_history={},
        columns=COLUMNS,
    )
    metrics = out[out["_table"] == "replay_metrics"].sort_values("event_seq")
    assert metrics["lag_total"].tolist() == [MAX64, None]
    assert metrics["lag_max_member"].tolist() == [MAX64, None]


def test_an_initial_capture_whose_offsets_view_has_nothing_takes_the_members_view():
    """Given the day's first capture, whose offsets view printed only the tool's
    `Warning: Consumer group 'g' is rebalancing.` (no rows: no lags, subscriptions
    unknown) while its members view, a second later, listed c1 and c2 with orders' six
    partitions; then c3 joins. Then the initial event has the 6 partitions the members
    view shows, and the next one is the member change, not `mixed`."""
    first, joined = at(20, 0), at(20, 10)
    captures = [
        {**member_row(first, "c1", [0, 1, 2]), "subscription": None},
        {**member_row(first, "c2", [3, 4, 5]), "subscription": None},
        member_row(joined, "c1", [0, 1]),
        member_row(joined, "c2", [2, 3]),
        member_row(joined, "c3", [4, 5]),
    ]
    out = run(captures, lag_rows(joined, [1] * 6))
    events = out[out["_table"] == "rebalance_events"]
    assert events[["event_seq", "trigger", "member_count", "partition_count"]].values.tolist() == [
        [1, "initial", 2, 6],
        [2, "member_joined", 3, 6],
    ]


def test_an_unresolved_initial_assignment_takes_the_next_captures_subscription():
    """Given a 3.9 capture whose topic-less members view the offsets view could not
    resolve (assignment and subscription unknown) and whose topics view counts orders'
    6 partitions, then one that knows both. Then the initial event subscribes to orders
    (6 partitions): the member's first known subscription."""
    first, later = at(20, 0), at(20, 10)
    unknown = {"subscription": None, "assigned_topics": None, "assigned_partitions": None}
    captures = [
        {**member_row(first, "c1", []), **unknown},
        member_row(later, "c1", [0, 1, 2, 3, 4, 5]),
    ]
    out = replay_group(
        ("c", "g"),
        pd.DataFrame(captures),
        pd.DataFrame(
            lag_rows(later, [0] * 6), columns=["captured_at", "topic", "partition", "lag"]
        ),
        run_date=DAY,
        assignors=["range", "observed"],
        topic_history={"c": [(at(19, 0).to_pydatetime(), {"orders": 6})]},
        columns=COLUMNS,
    )
    events = out[out["_table"] == "rebalance_events"]
    assert events[["event_seq", "trigger", "member_count", "partition_count"]].values.tolist() == [
        [1, "initial", 1, 6]
    ]
