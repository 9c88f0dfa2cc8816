"""One group's replay: capture rows and lag rows in (Arrow), silver rows out.

Called once per (cluster, group_id) by the replay job's cogrouped Arrow UDF (through
replay/arrow_io.py) and, for the oracle test and the benchmarks, through replay_group
with plain pandas. Both inputs are flat columns, read a column at a time (no pandas
frame per group):
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

Memory bound: the worker holds the group's Arrow inputs, its member rows as Python
values and its lags as numpy columns (about 40 bytes per lag row and per member row
plus its assigned partitions), the snapshots of the
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
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.arrow_values import python_values
from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.replay.assignor_runs import replay_events
from fleet_rebalance.replay.client_library import ClientLibraries
from fleet_rebalance.replay.events import RebalanceEvent
from fleet_rebalance.replay.rebalance_events import Coverage, Settings, group_history
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot
from fleet_rebalance.vocabulary import GroupType

TopicHistory = list[tuple[dt.datetime, dict[str, int]]]
LOG = "log"  # captures-side `_kind` of a coordinator log line
TABLE = "_table"  # the key naming a silver row's table: pipeline/tagged.py's TABLE, which this
# pure module cannot import (it imports Spark)
OWN_ASSIGNMENT = (GroupType.SHARE, GroupType.STREAMS)  # group types no consumer assignor replays


def replay_group(
    key: tuple,
    captures: pd.DataFrame | pa.Table,
    lags: pd.DataFrame | pa.Table,
    *,
    columns: list[str],
    **replay: Any,
) -> pd.DataFrame:
    """replay_rows (same keywords) as a frame of `columns`, the silver union's; the
    inputs as pandas too (NaN or None: unknown)."""
    captures, lags = (
        pa.Table.from_pandas(t, preserve_index=False) if isinstance(t, pd.DataFrame) else t
        for t in (captures, lags)
    )
    frame = pd.DataFrame(replay_rows(key, captures, lags, **replay), columns=columns, dtype=object)
    return frame.astype(object).where(frame.notna(), None)  # NaN is not a missing array


def replay_rows(
    key: tuple,
    captures: pa.Table,
    lags: pa.Table,
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
        logs: list[dict[str, Any]] = []
        members = captures
        if "_kind" in captures.column_names:
            is_log = pc.fill_null(pc.equal(captures.column("_kind"), LOG), False)
            logs = _log_rows(captures.filter(is_log))
            members = captures.filter(pc.invert(is_log))
        if not members.num_rows:  # offsets or logs without a usable members capture
            return rows
        # The lags of the group's captures only (the job hands over its other ones too).
        index = LagIndex(lags, instants(members.column("captured_at")))
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
            rows.append({TABLE: row.table, **common, **values})
    except Exception as exc:
        return [error_row(key, run_date, exc)]
    return rows


def _own_assignment(members: pa.Table) -> bool:
    """A share group (its members share partitions) or a streams group (the streams
    assignor hands out tasks): its rebalances and their causes are replayed like a
    consumer group's, but no consumer assignor's replay of it means anything."""
    if "group_type" not in members.column_names:
        return False
    kinds = members.column("group_type").cast(pa.string())
    return bool(pc.any(pc.is_in(kinds, pa.array(OWN_ASSIGNMENT, pa.string()))).as_py())


def error_row(key: tuple, run_date: dt.date, exc: BaseException) -> dict[str, Any]:
    cluster, group = key
    return {
        TABLE: "replay_errors",
        "cluster": cluster,
        "group_id": group,
        "event_date": run_date,
        "event_seq": None,
        "assignor": None,
        "reason": f"{type(exc).__name__}: {exc}",
    }


class LagIndex:
    """A group's lag rows (Arrow) sorted by capture: the highest partition per topic for
    every capture (small), and a capture's lags (or log-end offsets) built only when an
    event needs them. `captures`: the capture times (datetime64[ns]) whose rows count;
    a row without its topic or partition names no partition."""

    def __init__(self, lags: pa.Table, captures: np.ndarray | None = None) -> None:
        times = instants(lags.column("captured_at"))
        keep = lags.column("topic").is_valid().to_numpy(zero_copy_only=False)
        keep &= lags.column("partition").is_valid().to_numpy(zero_copy_only=False)
        if captures is not None:
            keep &= np.isin(times, captures)
        lags = lags.filter(pa.array(keep))
        times = times[keep]
        topics = pc.dictionary_encode(lags.column("topic").cast(pa.string())).combine_chunks()
        topic_codes = topics.indices.to_numpy(zero_copy_only=False)
        partitions = lags.column("partition").cast(pa.int64()).to_numpy()
        order = np.lexsort((partitions, topic_codes, times))  # by capture, topic, partition
        names = topics.dictionary.to_numpy(zero_copy_only=False)
        self._times = times[order]
        self._topics = names[topic_codes[order]]
        self._partitions = partitions[order]
        self._lags = _exact(lags.column("lag"), order)
        ends = "log_end_offset" in lags.column_names
        self._ends = _exact(lags.column("log_end_offset"), order) if ends else None
        self.topics = set(names.tolist())
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


def instants(column: pa.ChunkedArray) -> np.ndarray:
    """Instants as naive UTC datetime64[ns], whatever their unit and zone (a column of
    nulls only, as pandas hands over an empty frame's, has no unit)."""
    if not pa.types.is_timestamp(column.type):
        column = column.cast(pa.timestamp("ns"))
    elif column.type.tz is not None:
        column = column.cast(pa.timestamp(column.type.unit))
    return column.to_numpy().astype("datetime64[ns]")


def _exact(column: pa.ChunkedArray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An offsets column as int64 values and where they are known, in `order`: never
    through float64, which holds integers exactly only up to 2^53 (a lag of 2^63 - 1
    would come back as -2^63)."""
    column = column.cast(pa.int64())
    known = column.is_valid().to_numpy(zero_copy_only=False)
    return pc.fill_null(column, 0).to_numpy()[order], known[order]


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


def snapshots_from(
    captures: pa.Table, index: LagIndex, history: TopicHistory
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
    ordered = captures.sort_by([(c, "ascending") for c in order if c in captures.column_names])
    # Capture times as codes (the rows are in time order), each time once as a datetime.
    stamps, codes = np.unique(instants(ordered.column("captured_at")), return_inverse=True)
    at_code = stamps.astype("datetime64[us]").tolist()
    columns = [codes.tolist(), *(python_values(ordered.column(c)) for c in SNAPSHOT_COLUMNS[1:])]
    # Captures whose members view the tool warned was taken mid-rebalance.
    warned = (
        set(codes[_true(ordered.column("rebalancing"))].tolist())  # null: no warning
        if "rebalancing" in ordered.column_names
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
        at, before = at_code[code], last
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
            [r[3:] for r in members],
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
        tuple(_member(*r[3:]) for r in members if _text(r[3])),
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


def _true(column: pa.ChunkedArray) -> np.ndarray:
    """Where a boolean column is true (null: not)."""
    flags = pc.fill_null(column.cast(pa.bool_()), False)
    return flags.to_numpy(zero_copy_only=False).astype(bool)


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
                TABLE: "rebalance_events",
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


def _log_rows(lines: pa.Table) -> list[dict[str, Any]]:
    """The group's coordinator log lines as generations.group_generations reads them."""
    ordered = lines.sort_by("captured_at")
    times = instants(ordered.column("captured_at")).astype("datetime64[us]").tolist()

    def column(name: str) -> list[Any]:
        return python_values(ordered.column(name))

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
            column("event"),
            column("generation"),
            column("member_id"),
            column("reason"),
            column("line"),
            strict=True,
        )
    ]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
