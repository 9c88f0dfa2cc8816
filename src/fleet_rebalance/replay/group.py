"""One group's replay as a pandas function: capture rows and lag rows in, silver rows out.

Called once per (cluster, group_id) by the replay job's cogrouped Arrow UDF (through
replay/arrow_io.py) and, for the oracle test and the benchmarks, directly with plain
pandas. Both inputs are flat columns, so
Arrow converts them without building a Python object per nested value:
- captures: one row per member per usable capture (captured_at, state,
  assignment_strategy, consumer_id, group_instance_id, host, client_id, subscription,
  assigned_topics, assigned_partitions; assigned_* null when the assignment was not
  captured), one row with a null consumer_id for a capture of an Empty group, and one
  row per coordinator log line of the group (`_kind` "log": logged_at in captured_at,
  event, generation, member_id, reason, line);
- lags: one row per partition per capture (captured_at, topic, partition, lag,
  log_end_offset); rows of a time with no capture row are not read.
A topic's partition count is the larger of the nearest preceding topics capture's
(`topic_history`: captured_at -> {topic: count}) and the highest partition in the
capture's offsets plus one: partitions are only ever added, topics captures are often
hourly, and an added partition shows in the offsets view once it is assigned.

Memory bound: the worker holds the group's two Arrow-converted frames (about 40 bytes
per lag row and per member row plus its assigned partitions), the snapshots of the
previous and current capture, per assignor one assignment, and a lag dict only for the
event being replayed; nothing else grows with the number of captures or events.
Measured for 5,000 members x 50,000 partitions x 144 captures (7.2M lag rows) under
local[2] defaults (1g driver): 47 s, Python worker peak RSS 2.6 GiB, JVM 1.4 GiB
(benchmarks/replay_large_group_spark.py; benchmarks/replay_large_group.py measures the
pandas side alone: 1.4 GiB).
"""

from __future__ import annotations

import bisect
import collections
import datetime as dt
import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.replay.assignor_runs import replay_events
from fleet_rebalance.replay.client_library import ClientLibraries
from fleet_rebalance.replay.events import RebalanceEvent
from fleet_rebalance.replay.rebalance_events import Coverage, Settings, group_history
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot
from fleet_rebalance.vocabulary import GroupType

TopicHistory = list[tuple[dt.datetime, dict[str, int]]]
LOG = "log"  # captures-side `_kind` of a coordinator log line
OWN_ASSIGNMENT = (GroupType.SHARE, GroupType.STREAMS)  # group types no consumer assignor replays


def replay_group(
    key: tuple, captures: pd.DataFrame, lags: pd.DataFrame, *, columns: list[str], **replay: Any
) -> pd.DataFrame:
    """replay_rows (same keywords) as a frame of `columns`, the silver union's."""
    frame = pd.DataFrame(replay_rows(key, captures, lags, **replay), columns=columns, dtype=object)
    return frame.astype(object).where(frame.notna(), None)  # NaN is not a missing array


def replay_rows(
    key: tuple,
    captures: pd.DataFrame,
    lags: pd.DataFrame,
    *,
    run_date: dt.date,
    assignors: list[str],
    topic_history: Mapping[str, TopicHistory],
    coverage: Mapping[str, Coverage] | None = None,
    settings: Settings | None = None,
    topic_ids: Mapping[str, Mapping[str, str]] | None = None,
    libraries: ClientLibraries | None = None,
) -> list[dict[str, Any]]:
    """Every silver row of one (cluster, group_id), each a dict naming its `_table`;
    a failure anywhere is one replay_errors row instead. `coverage`: each cluster's
    logged hours (history.Coverage); a cluster without one has its captures only.
    `topic_ids`: each cluster's topic ids by name (the uniform assignor's ties);
    `libraries`: which clients are librdkafka's (client_library.py)."""
    cluster, group = key
    common = {"cluster": cluster, "group_id": group, "event_date": run_date}
    rows: list[dict[str, Any]] = []
    try:
        is_log = captures["_kind"] == LOG if "_kind" in captures else None
        logs = _log_rows(captures[is_log]) if is_log is not None else []
        members = captures[~is_log] if is_log is not None else captures
        if members.empty:  # offsets or logs without a usable members capture
            return rows
        # The lags of the group's captures only (the job hands over its other ones too).
        index = LagIndex(lags[lags["captured_at"].isin(members["captured_at"])])
        snapshots = fill_unknown_subscriptions(
            snapshots_from(members, index, topic_history.get(cluster, []))
        )
        known = (coverage or {}).get(cluster, Coverage())
        labels: dict[int, dict[str, Any]] = {}
        history = group_history(snapshots, logs, known, run_date, settings or Settings.of())
        events = _recorded(history, rows, common, labels, index)
        if _own_assignment(members):
            collections.deque(events, maxlen=0)  # records their rebalance_events rows only
            return rows
        ids = (topic_ids or {}).get(cluster)
        for row in replay_events(events, assignors, topic_ids=ids, libraries=libraries):
            values = dict(row.values)
            if row.table == "replay_metrics":
                values.update(labels[values["event_seq"]])
            if row.table == "assignment_replay":
                values["partitions"] = [
                    {"topic": t, "partition": p} for t, p in values["partitions"]
                ]
            rows.append({"_table": row.table, **common, **values})
    except Exception as exc:
        return [error_row(key, run_date, exc)]
    return rows


def _own_assignment(members: pd.DataFrame) -> bool:
    """A share group (its members share partitions) or a streams group (the streams
    assignor hands out tasks): its rebalances and their causes are replayed like a
    consumer group's, but no consumer assignor's replay of it means anything."""
    if "group_type" not in members:
        return False
    return bool(members["group_type"].isin(OWN_ASSIGNMENT).any())


def error_row(key: tuple, run_date: dt.date, exc: BaseException) -> dict[str, Any]:
    cluster, group = key
    return {
        "_table": "replay_errors",
        "cluster": cluster,
        "group_id": group,
        "event_date": run_date,
        "event_seq": None,
        "assignor": None,
        "reason": f"{type(exc).__name__}: {exc}",
    }


class LagIndex:
    """A group's lag rows sorted by capture: the highest partition per topic for every
    capture (small), and a capture's lags (or log-end offsets) built only when an event
    needs them."""

    def __init__(self, lags: pd.DataFrame) -> None:
        times = lags["captured_at"].to_numpy(dtype="datetime64[ns]")
        topic_codes, topic_names = pd.factorize(lags["topic"])
        partitions = lags["partition"].to_numpy(dtype=np.int64)
        order = np.lexsort((partitions, topic_codes, times))  # by capture, topic, partition
        self._times = times[order]
        self._topics = topic_names.to_numpy(dtype=object)[topic_codes[order]]
        self._partitions = partitions[order]
        self._lags = _exact(lags["lag"], order)
        self._ends = _exact(lags["log_end_offset"], order) if "log_end_offset" in lags else None
        self.topics = set(topic_names)
        self.highest: dict[np.datetime64, dict[str, int]] = {}
        if len(order):
            # The last row of each (capture, topic) run holds its highest partition.
            codes = topic_codes[order]
            last = np.r_[(self._times[1:] != self._times[:-1]) | (codes[1:] != codes[:-1]), True]
            for at, topic, partition in zip(
                self._times[last], self._topics[last], self._partitions[last], strict=True
            ):
                self.highest.setdefault(at, {})[topic] = int(partition) + 1

    def lags_at(self, at: dt.datetime) -> dict[TopicPartition, int]:
        return self._at(*self._lags, at)

    def rates(self, opens: dt.datetime, closes: dt.datetime) -> dict[TopicPartition, float]:
        """Messages per second produced into each partition between two captures: its
        log-end offset's slope (partitions whose log end went back are left out)."""
        seconds = (closes - opens).total_seconds()
        if seconds <= 0 or self._ends is None:
            return {}
        before, after = self._at(*self._ends, opens), self._at(*self._ends, closes)
        return {
            tp: (end - before[tp]) / seconds
            for tp, end in after.items()
            if tp in before and end >= before[tp]
        }

    def _at(
        self, values: np.ndarray, known: np.ndarray, at: dt.datetime
    ) -> dict[TopicPartition, int]:
        when = np.datetime64(at, "ns")
        lo = int(np.searchsorted(self._times, when, side="left"))
        hi = int(np.searchsorted(self._times, when, side="right"))
        known = known[lo:hi]
        topics, partitions = self._topics[lo:hi][known], self._partitions[lo:hi][known]
        keys = map(TopicPartition, topics.tolist(), partitions.tolist())
        return dict(zip(keys, values[lo:hi][known].tolist(), strict=True))


def _exact(column: pd.Series, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An offsets column as int64 values and where they are known, in `order`: never
    through float64, which holds integers exactly only up to 2^53 (a lag of 2^63 - 1
    would come back as -2^63)."""
    known = column.notna().to_numpy(dtype=bool)
    return column.fillna(0).to_numpy(dtype=np.int64)[order], known[order]


SNAPSHOT_COLUMNS = (
    "captured_at",
    "state",
    "assignment_strategy",
    "consumer_id",
    "group_instance_id",
    "host",
    "client_id",
    "subscription",
    "assigned_topics",
    "assigned_partitions",
)
ARRAYS = SNAPSHOT_COLUMNS.index("subscription")  # the array cells' first column
FROZEN = len(SNAPSHOT_COLUMNS)  # where snapshots_from puts their frozen copies


def snapshots_from(
    captures: pd.DataFrame, index: LagIndex, history: TopicHistory
) -> Iterator[Snapshot]:
    """Snapshots in capture order, one at a time. A capture that repeats the previous
    one exactly (state, strategy, partition counts, every member row) is not yielded:
    it would be the same snapshot at a later time, in which derive_events finds no
    change, and most of a day's captures are such repeats. The last capture is yielded
    even so: it closes the period of the generations logged after the last change the
    captures show (a rebalance that changed nothing they show, or whose change an
    earlier capture caught as its views were taken, would fall in no period)."""
    times = [t for t, _ in history]
    # Members in the capture's order: the coordinator's member map order, which the
    # leader's JoinGroup response had too (java.py: it decides HashMap bucket ties).
    order = ["captured_at", "line_number", "consumer_id"]
    ordered = captures.sort_values([c for c in order if c in captures], kind="stable")
    # Capture times as codes: iterating a datetime column builds a Timestamp per row.
    codes, stamps = pd.factorize(ordered["captured_at"])
    instants = pd.DatetimeIndex(stamps).to_pydatetime()
    columns = [codes.tolist(), *(ordered[c].tolist() for c in SNAPSHOT_COLUMNS[1:])]
    # The array cells (subscription, assignment) as values that compare by content,
    # for telling a repeat: a column at a time, after the columns _snapshot reads.
    columns += [[_frozen(cell) for cell in column] for column in columns[ARRAYS:]]
    # Captures whose members view the tool warned was taken mid-rebalance.
    warned = (
        set(codes[ordered["rebalancing"].eq(True).to_numpy()].tolist())  # null: no warning
        if "rebalancing" in ordered
        else set()
    )
    # A topics capture counts every topic of the cluster; the group needs its own.
    topics = index.topics | {t for cell in columns[ARRAYS] if cell is not None for t in cell}
    known: dict[int, dict[str, int]] = {}
    previous: tuple | None = None
    last: dt.datetime | None = None
    repeat: tuple | None = None  # the last capture, when it repeats the one before
    for code, group in itertools.groupby(zip(*columns, strict=True), key=lambda r: r[0]):
        members = list(group)
        at, before = instants[code], last
        last = at
        counts = dict(index.highest.get(np.datetime64(at, "ns"), {}))
        if not counts:  # nothing of the group in its offsets view: its members view's
            counts = _assigned_counts(members)
        i = bisect.bisect_right(times, at)
        if i:
            if i not in known:
                counts_then = history[i - 1][1]
                known[i] = {t: counts_then[t] for t in topics if t in counts_then}
            # A partition count only grows: the topics capture (every partition, but
            # hourly) or the offsets (as new as the capture, but only the group's).
            for topic, count in known[i].items():
                counts[topic] = max(count, counts.get(topic, 0))
        _, state, strategy = members[0][:3]
        signature = (
            state,
            strategy,
            code in warned,
            counts,
            [r[3:ARRAYS] + r[FROZEN:] for r in members],
        )
        if signature == previous:
            repeat = (at, members, counts, before, code in warned)
            continue
        previous, repeat = signature, None
        yield _snapshot(at, members, counts, before, code in warned)
    if repeat is not None:
        yield _snapshot(*repeat)


def _snapshot(
    at: dt.datetime,
    members: list[tuple],
    counts: dict[str, int],
    follows: dt.datetime | None,
    warned: bool,
) -> Snapshot:
    _, state, strategy = members[0][:3]
    return Snapshot(
        at,
        tuple(_member(*r[3:FROZEN]) for r in members if _text(r[3])),
        _text(state),
        _text(strategy),
        counts,
        follows=follows,
        warned=warned,
    )


def _assigned_counts(members: list[tuple]) -> dict[str, int]:
    """Partitions per topic as a capture's members view shows them assigned (highest + 1):
    a topic has at least those."""
    counts: dict[str, int] = {}
    for row in members:
        topics, partitions = row[ARRAYS + 1], row[ARRAYS + 2]
        if topics is not None and partitions is not None:
            for topic, partition in zip(topics, partitions, strict=True):
                counts[topic] = max(counts.get(topic, 0), int(partition) + 1)
    return counts


def _frozen(value: Any) -> Any:
    """A cell as a value that compares by content (arrays compare element-wise)."""
    if isinstance(value, np.ndarray):
        return value.tobytes() if value.dtype != object else tuple(value)
    return value


def _member(
    consumer_id: str,
    instance_id: Any,
    host: Any,
    client_id: Any,
    subscription: Any,
    topics: Any,
    partitions: Any,
) -> MemberSnapshot:
    assignment = (
        None
        if topics is None or partitions is None
        else tuple(TopicPartition(t, int(p)) for t, p in zip(topics, partitions, strict=True))
    )
    return MemberSnapshot(
        consumer_id,
        _text(instance_id),
        # Null (its offsets capture failed) until fill_unknown_subscriptions fills it in.
        None if subscription is None else tuple(subscription),
        assignment,
        _text(client_id),
        _text(host),
    )


def fill_unknown_subscriptions(snapshots: Iterable[Snapshot]) -> Iterator[Snapshot]:
    """A subscription unknown at a capture (null: its offsets view had nothing of the
    group: it failed, or showed the group rebalancing, or was taken before the group had
    joined) is the member's last known one, else the group's last known one
    (homogeneous groups). Before any is known, the captures wait for the first one that
    knows one: the member's first known one, else the group's; where none ever is, the
    topics the members view shows the group assigned."""
    last_member: dict[str, tuple[str, ...]] = {}
    last_group: tuple[str, ...] | None = None
    held: list[Snapshot] = []
    for snapshot in snapshots:
        known = {m.key: m.subscription for m in snapshot.members if m.subscription is not None}
        if last_group is None and not known:
            held.append(snapshot)
            continue
        for early in held:
            yield _filled(early, known, list(known.values())[-1])
        held = []
        last_member.update(known)
        last_group = list(known.values())[-1] if known else last_group
        yield _filled(snapshot, last_member, last_group or ())
    for early in held:  # no capture of the day knows a subscription
        yield _filled(early, {}, _assigned_topics(early))


def _filled(
    snapshot: Snapshot, by_key: Mapping[str, tuple[str, ...]], group: tuple[str, ...]
) -> Snapshot:
    """The snapshot with each unknown subscription the member's in `by_key`, else `group`."""
    if all(m.subscription is not None for m in snapshot.members):
        return snapshot
    members = tuple(
        m if m.subscription is not None else replace(m, subscription=by_key.get(m.key, group))
        for m in snapshot.members
    )
    return replace(snapshot, members=members)


def _assigned_topics(snapshot: Snapshot) -> tuple[str, ...]:
    return tuple(sorted({tp.topic for m in snapshot.members for tp in m.assignment or ()}))


def _recorded(
    events: Iterable[RebalanceEvent],
    rows: list[dict[str, Any]],
    common: dict[str, Any],
    labels: dict[int, dict[str, Any]],
    index: LagIndex,
) -> Iterator[RebalanceEvent]:
    """Each event as a rebalance_events row (and its time and trigger in `labels`, for
    the metrics rows), then to the replay with its capture's lags and, for its cost,
    the produce rates of its capture window."""
    for event in events:
        snapshot = event.snapshot
        rows.append(
            {
                "_table": "rebalance_events",
                **common,
                "event_seq": event.seq,
                "event_at": event.at,
                "trigger": event.trigger,
                "members": sorted(m.member_id for m in snapshot.members),
                "member_count": len(snapshot.members),
                "partition_count": sum(snapshot.subscribed_counts().values()),
                "previous_capture_at": event.previous_at if event.previous else None,
                "generation": event.generation,
                "source": event.source,
                "cause": event.cause,
                "evidence": event.evidence,
                "duration_ms": event.duration_ms,
                "static_avoidable": event.static_avoidable if event.cause else None,
                "capture_difference": event.capture_difference,
                "departed": event.departed,
                "returned": event.returned,
                "away_ms": event.away_ms,
                "session_timeout_ms": event.session_timeout_ms,
                "session_timeout_assumed": event.session_timeout_assumed,
            }
        )
        labels[event.seq] = {"event_at": event.at, "trigger": event.trigger}
        lags = index.lags_at(event.lags_at or event.at)
        rates = index.rates(*event.window) if event.window and event.duration_ms else {}
        yield replace(event, snapshot=replace(snapshot, lags=lags), rates=rates)


def _log_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The group's coordinator log lines as generations.group_generations reads them."""
    ordered = frame.sort_values("captured_at", kind="stable")
    times = [t.to_pydatetime() for t in ordered["captured_at"]]
    generations = ordered["generation"].tolist()
    return [
        {
            "logged_at": at,
            "event": event,
            "generation": None if g is None or g != g else int(g),
            "member_id": _text(member),
            "reason": _text(reason),
            "line": line or "",
        }
        for at, event, g, member, reason, line in zip(
            times,
            ordered["event"].tolist(),
            generations,
            ordered["member_id"].tolist(),
            ordered["reason"].tolist(),
            ordered["line"].tolist(),
            strict=True,
        )
    ]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
