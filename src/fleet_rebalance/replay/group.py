"""One group's replay as a pandas function: snapshot rows in, silver rows out.

Used by Spark's groupBy(cluster, group_id).applyInPandas and, for the oracle test and
the benchmark, directly with plain pandas. Input rows (one per usable capture, sorted
here since Spark promises no order): captured_at, members (structs consumer_id,
group_instance_id, subscription, assignment), state, assignment_strategy, lags (structs
topic, partition, lag). Topic partition counts come from `topic_history`
(captured_at -> {topic: count}, the nearest preceding topics capture), else from the
highest partition seen in the capture's offsets.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.replay.engine import replay_events
from fleet_rebalance.replay.events import derive_events
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

TopicHistory = list[tuple[dt.datetime, dict[str, int]]]


def replay_group(
    key: tuple,
    frame: pd.DataFrame,
    *,
    run_date: dt.date,
    assignors: list[str],
    topic_history: Mapping[str, TopicHistory],
    columns: list[str],
) -> pd.DataFrame:
    cluster, group = key
    common = {"cluster": cluster, "group_id": group, "event_date": run_date}
    rows: list[dict[str, Any]] = []
    try:
        snapshots = fill_unknown_subscriptions(
            _snapshot(r, topic_history.get(cluster, []))
            for r in frame.sort_values("captured_at").to_dict("records")
        )
        baseline = [s for s in snapshots if s.captured_at.date() < run_date]
        today = [s for s in snapshots if s.captured_at.date() == run_date]
        events = list(derive_events(today, baseline[-1] if baseline else None))
        for event in events:
            rows.append(
                {
                    "_table": "rebalance_events",
                    **common,
                    "event_seq": event.seq,
                    "event_at": event.at,
                    "trigger": event.trigger,
                    "members": sorted(m.member_id for m in event.snapshot.members),
                    "member_count": len(event.snapshot.members),
                    "partition_count": sum(event.snapshot.subscribed_counts().values()),
                }
            )
        by_seq = {e.seq: e for e in events}
        for row in replay_events(events, assignors):
            values = dict(row.values)
            event = by_seq[values["event_seq"]]
            if row.table == "replay_metrics":
                values.update(event_at=event.at, trigger=event.trigger)
            if row.table == "assignment_replay":
                values["partitions"] = [
                    {"topic": t, "partition": p} for t, p in values["partitions"]
                ]
            rows.append({"_table": row.table, **common, **values})
    except Exception as exc:
        rows = [
            {
                "_table": "replay_errors",
                **common,
                "event_seq": None,
                "assignor": None,
                "reason": f"{type(exc).__name__}: {exc}",
            }
        ]
    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    return frame.astype(object).where(frame.notna(), None)  # NaN is not a missing array


def _snapshot(row: Mapping[str, Any], history: TopicHistory) -> Snapshot:
    at = pd.Timestamp(row["captured_at"]).to_pydatetime()
    lags: dict[TopicPartition, int] = {}
    highest: dict[str, int] = {}
    for item in _items(row.get("lags")):
        tp = TopicPartition(item["topic"], int(item["partition"]))
        highest[tp.topic] = max(highest.get(tp.topic, 0), tp.partition + 1)
        if item["lag"] is not None and not pd.isna(item["lag"]):
            lags[tp] = int(item["lag"])
    counts = dict(highest)
    times = [t for t, _ in history]
    i = bisect.bisect_right(times, at)
    if i:
        counts.update(history[i - 1][1])
    members = tuple(
        MemberSnapshot(
            m["consumer_id"],
            _text(m["group_instance_id"]),
            None if m["subscription"] is None else tuple(m["subscription"]),
            (
                tuple(TopicPartition(a["topic"], int(a["partition"])) for a in m["assignment"])
                if m["assignment"] is not None
                else None
            ),
        )
        for m in _items(row.get("members"))
    )
    return Snapshot(
        at, members, _text(row.get("state")), _text(row.get("assignment_strategy")), counts, lags
    )


def fill_unknown_subscriptions(snapshots: Iterable[Snapshot]) -> list[Snapshot]:
    """A subscription unknown at a capture (null: its offsets capture failed) is the
    member's last known one, else the group's last known one (homogeneous groups)."""
    last_member: dict[str, tuple[str, ...]] = {}
    last_group: tuple[str, ...] = ()
    filled = []
    for snapshot in snapshots:
        members = []
        for m in snapshot.members:
            if m.subscription is None:
                m = MemberSnapshot(
                    m.member_id, m.instance_id, last_member.get(m.key, last_group), m.assignment
                )
            else:
                last_member[m.key] = last_group = m.subscription
            members.append(m)
        filled.append(
            Snapshot(
                snapshot.captured_at,
                tuple(members),
                snapshot.state,
                snapshot.strategy,
                snapshot.partition_counts,
                snapshot.lags,
            )
        )
    return filled


def _items(value: Any) -> list:
    """Arrow arrays reach pandas as numpy arrays (no truth value) or None."""
    return [] if value is None else list(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
