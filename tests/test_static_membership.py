"""A hand-built rolling-deploy history: its events, costs and what static membership saves.

Group `g` (3 members on hosts /10.0.0.1-3, every pod's client.id consumer-g-1, as a
Deployment's per-JVM counter gives), range declared, topic `t` of 12 partitions,
captures every 10 minutes, 3.x broker lines (GroupCoordinator.scala 3.6 text), logs for
the hours 10 to 12 only:
- 10:01-10:03 rolling deploy: each pod closes (LeaveGroup) and its replacement joins on
  the same host 20 s later: six generations between the 10:00 and 10:10 captures, six
  events (the last one the 10:10 capture shows);
- 11:01 one pod closes and its replacement joins 400 s later (11:07:40): two events;
- 12:05 a fourth member joins on a new host (scale out): one event;
- a pod replaced between 13:00 and 13:10, no log for that hour: one event at 13:10, from
  the captures.
Hand-computed, timeout 300 s: the six deploy generations are avoided (every member back
in 20 s); 11:01/11:07's member was away 400 s; 12:05 is no restart; 13:10 can only be
shown back within 600 s (its capture window). With 600 s: those and 11:01, 11:07, 13:10.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

import pytest

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.replay.assignor_runs import replay_events
from fleet_rebalance.replay.rebalance_events import Coverage, Settings, group_history
from fleet_rebalance.replay.snapshots import MemberSnapshot, Snapshot

DAY = dt.date(2026, 11, 20)
SUFFIX = "(kafka.coordinator.group.GroupCoordinator)"
PREFIX = "INFO [GroupCoordinator 3]:"


def at(hh: int, mm: int, ss: float = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, hh, mm, tzinfo=dt.UTC) + dt.timedelta(seconds=ss)


@dataclass(frozen=True)
class Pod:
    member_id: str
    host: str
    client_id: str = "consumer-g-1"


def pod(name: str, host: int) -> Pod:
    """A pod's consumer; its member id as the Java client builds it (client.id + UUID)."""
    return Pod(f"consumer-g-1-{name}000000-0000-4000-8000-00000000000{host}", f"/10.0.0.{host}")


A1, A2, A3 = pod("a1", 1), pod("a2", 2), pod("a3", 3)
B1, B2, B3 = pod("b1", 1), pod("b2", 2), pod("b3", 3)
C2, D4, E1 = pod("c2", 2), pod("d4", 4), pod("e1", 1)


def stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S,") + f"{when.microsecond // 1000:03d}"


def leave(when: dt.datetime, member: Pod, generation: int, size: int) -> list[str]:
    """A 3.x LeaveGroup rebalance: Preparing (with the client reason), the member line,
    Stabilized 3 s later."""
    return [
        f"[{stamp(when)}] {PREFIX} Preparing to rebalance group g in state PreparingRebalance "
        f"with old generation {generation - 1} (__consumer_offsets-44) (reason: Removing member "
        f"{member.member_id} on LeaveGroup; client reason: the consumer is being closed) {SUFFIX}",
        f"[{stamp(when)}] {PREFIX} Member MemberMetadata(memberId={member.member_id}, "
        f"groupInstanceId=None, clientId={member.client_id}, clientHost={member.host}, "
        "sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range)) has "
        "left group g through explicit `LeaveGroup`; client reason: the consumer is being "
        f"closed {SUFFIX}",
        f"[{stamp(when + dt.timedelta(seconds=3))}] {PREFIX} Stabilized group g generation "
        f"{generation} (__consumer_offsets-44) with {size} members {SUFFIX}",
    ]


def join(when: dt.datetime, member: Pod, generation: int, size: int) -> list[str]:
    """A 3.x KIP-394 join: the pending member, then its rebalance, Stabilized 3 s later."""
    again = dt.timedelta(milliseconds=3)
    return [
        f"[{stamp(when)}] {PREFIX} Dynamic member with unknown member id joins group g in Stable "
        f"state. Created a new member id {member.member_id} and request the member to rejoin "
        f"with this id. {SUFFIX}",
        f"[{stamp(when + again)}] {PREFIX} Preparing to rebalance group g in state "
        f"PreparingRebalance with old generation {generation - 1} (__consumer_offsets-44) "
        f"(reason: Adding new member {member.member_id} with group instance id None; client "
        f"reason: need to re-join with the given member-id: {member.member_id}) {SUFFIX}",
        f"[{stamp(when + again + dt.timedelta(seconds=3))}] {PREFIX} Stabilized group g "
        f"generation {generation} (__consumer_offsets-44) with {size} members {SUFFIX}",
    ]


LINES = [
    *leave(at(10, 1), A1, 2, 2),
    *join(at(10, 1, 20), B1, 3, 3),
    *leave(at(10, 2), A2, 4, 2),
    *join(at(10, 2, 20), B2, 5, 3),
    *leave(at(10, 3), A3, 6, 2),
    *join(at(10, 3, 20), B3, 7, 3),
    *leave(at(11, 1), B2, 8, 2),
    *join(at(11, 7, 40), C2, 9, 3),
    *join(at(12, 5), D4, 10, 4),
]
TWELVE = [TopicPartition("t", p) for p in range(12)]
CAPTURES = [
    (at(10, 0), (A1, A2, A3)),
    (at(10, 10), (B1, B2, B3)),
    (at(11, 0), (B1, B2, B3)),
    (at(11, 10), (B1, C2, B3)),
    (at(12, 0), (B1, C2, B3)),
    (at(12, 10), (B1, C2, B3, D4)),
    (at(13, 0), (B1, C2, B3, D4)),
    (at(13, 10), (E1, C2, B3, D4)),
]
LOGGED = Coverage(frozenset(at(h, 0).replace(tzinfo=None) for h in (10, 11, 12)))


def naive(when: dt.datetime) -> dt.datetime:
    return when.replace(tzinfo=None)  # the replay's instants, as Arrow hands them over


def snapshots() -> list[Snapshot]:
    """Each capture: its members with range's assignment of the 12 partitions (members
    in member-id order, as range orders dynamic members, each a contiguous range)."""
    out, before = [], None
    for when, pods in CAPTURES:
        ordered = sorted(pods, key=lambda p: p.member_id)
        size = len(TWELVE) // len(ordered)
        share = {p.member_id: TWELVE[i * size : (i + 1) * size] for i, p in enumerate(ordered)}
        members = tuple(
            MemberSnapshot(
                p.member_id, None, ("t",), tuple(sorted(share[p.member_id])), p.client_id, p.host
            )
            for p in pods
        )
        out.append(Snapshot(naive(when), members, "Stable", "range", {"t": 12}, follows=before))
        before = naive(when)
    return out


def log_rows() -> list[dict]:
    text = "\n".join(LINES) + "\n"
    rows = parse_capture("prod/logs/broker-3/server.log", text.encode()).rows[COORDINATOR_EVENTS]
    assert len(rows) == len(LINES)  # every line is a coordinator_events row
    return [{**r, "logged_at": naive(r["logged_at"])} for r in rows]


def history(timeout_s: int = 300):
    return list(
        group_history(
            snapshots(),
            log_rows(),
            LOGGED,
            DAY,
            replace(Settings.of(), static_timeout=dt.timedelta(seconds=timeout_s)),
        )
    )


def test_a_rolling_restart_is_six_events_with_their_members():
    """Given: the captures and lines above.
    Then: the 10:00 capture's initial event, each logged generation an event with the
    member set the log shows after it (the 10:10 capture confirming the sixth), and the
    13:10 replacement from the captures; every deploy generation a deploy_restart."""
    events = history()
    got = [
        (e.seq, e.at.strftime("%H:%M:%S"), e.source, e.generation, e.trigger, e.cause,
         tuple(sorted(m.member_id[13:15] for m in e.snapshot.members)), e.duration_ms)
        for e in events
    ]  # fmt: skip
    assert got == [
        (1, "10:00:00", "captures", None, "initial", None, ("a1", "a2", "a3"), None),
        (2, "10:01:00", "logs", 2, "member_left", "deploy_restart", ("a2", "a3"), 3000),
        (3, "10:01:20", "logs", 3, "member_joined", "deploy_restart", ("a2", "a3", "b1"), 3000),
        (4, "10:02:00", "logs", 4, "member_left", "deploy_restart", ("a3", "b1"), 3000),
        (5, "10:02:20", "logs", 5, "member_joined", "deploy_restart", ("a3", "b1", "b2"), 3000),
        (6, "10:03:00", "logs", 6, "member_left", "deploy_restart", ("b1", "b2"), 3000),
        (7, "10:03:20", "both", 7, "member_joined", "deploy_restart", ("b1", "b2", "b3"), 3000),
        (8, "11:01:00", "logs", 8, "member_left", "deploy_restart", ("b1", "b3"), 3000),
        (9, "11:07:40", "both", 9, "member_joined", "deploy_restart", ("b1", "b3", "c2"), 3000),
        (10, "12:05:00", "both", 10, "member_joined", "scale_out", ("b1", "b3", "c2", "d4"), 3000),
        (11, "13:10:00", "captures", None, "members_replaced", "deploy_restart",
         ("b3", "c2", "d4", "e1"), None),
    ]  # fmt: skip
    assert all(e.capture_difference is None for e in events)
    assert events[1].evidence.endswith(
        f"consumer-g-1 (host) left as {A1.member_id} and was back 20 s later as {B1.member_id}"
    )
    # Back at its first JoinGroup (KIP-394's pending join, 3 ms before the rebalance).
    assert [(e.departed, e.returned, e.away_ms) for e in events[1:3]] == [
        ("consumer-g-1", None, 20_000),
        (None, "consumer-g-1", 20_000),
    ]


def test_eager_range_pauses_every_partition_at_each_of_the_six():
    """Then: range (eager) pauses all 12 partitions at each deploy generation, priced
    with the generation's logged duration; observed has rows only where a capture shows
    the assignment (the 7th generation), and conforms there."""
    rows = list(replay_events(history(), ["range", "observed"]))
    metrics = [r.values for r in rows if r.table == "replay_metrics"]
    ranged = [(m["event_seq"], m["paused_partitions"], m["paused_partition_seconds"])
              for m in metrics if m["assignor"] == "range"]  # fmt: skip
    assert ranged[1:7] == [
        (2, 12, 36.0), (3, 12, 36.0), (4, 12, 36.0), (5, 12, 36.0), (6, 12, 36.0),
        (7, 12, 36.0),
    ]  # fmt: skip
    observed = [(m["event_seq"], m["conforms"]) for m in metrics if m["assignor"] == "observed"]
    assert observed == [(1, None), (7, True), (9, True), (10, True), (11, True)]


def test_static_membership_avoids_each_restart_back_within_its_timeout():
    """Then (module docstring): with 300 s the six deploy generations; with 600 s also
    the 400 s restart's two and the 13:10 replacement its capture window shows."""
    avoided = [e.seq for e in history(300) if e.static_avoidable]
    assert avoided == [2, 3, 4, 5, 6, 7]
    assert [e.seq for e in history(600) if e.static_avoidable] == [2, 3, 4, 5, 6, 7, 8, 9, 11]


@pytest.mark.spark
def test_static_membership_savings_per_group(spark):
    """Given: the history above as rebalance_events rows (300 s) with range's replay
    (12 paused partitions, 36.0 partition-seconds per timed event, 900 messages delayed
    each), and a group `h` declaring a plug-in that was not replayed (measured on
    `observed`) with one scale-out. Then: g saves the six deploy generations, 72 paused
    partitions, 216.0 partition-seconds and 5,400 messages delayed; h saves nothing."""
    from chispa import assert_df_equality

    from fleet_rebalance.metrics.static_what_if import static_what_if
    from fleet_rebalance.pipeline import silver

    events = history()
    rows = [("c", "g", DAY, e.seq, e.cause, e.static_avoidable) for e in events if e.cause] + [
        ("c", "h", DAY, 2, "scale_out", False)
    ]
    causes = spark.createDataFrame(
        rows,
        "cluster string, group_id string, date date, event_seq int, cause string, "
        "static_avoidable boolean",
    )
    replayed = [r.values for r in replay_events(events, ["range"]) if r.table == "replay_metrics"]
    metric_fields = silver.TABLES["replay_metrics"]
    metrics = [
        {**m, "cluster": "c", "group_id": "g", "event_date": DAY, "messages_delayed": 900}
        for m in replayed
    ] + [
        {"cluster": "c", "group_id": "h", "event_seq": 2, "assignor": "observed",
         "paused_partitions": 6, "paused_partition_seconds": None, "event_date": DAY}
    ]  # fmt: skip
    metrics_df = spark.createDataFrame(
        [tuple(r.get(f.name) for f in metric_fields.fields) for r in metrics], metric_fields
    )
    declared = spark.createDataFrame(
        [("c", "g", DAY, "range"), ("c", "h", DAY, "mine.module:Assignor")],
        "cluster string, group_id string, date date, declared_assignor string",
    )
    got = static_what_if(causes, metrics_df, declared)
    expected = spark.createDataFrame(
        [
            ("c", "g", DAY, "range", 10, 9, 6, 72, 216.0, 5400),
            ("c", "h", DAY, "observed", 1, 0, 0, 0, 0.0, 0),
        ],
        "cluster string, group_id string, date date, assignor string, events int, "
        "deploy_restarts int, rebalances_avoided int, paused_partitions_avoided long, "
        "paused_partition_seconds_avoided double, messages_delayed_avoided long",
    )
    assert_df_equality(got.orderBy("group_id"), expected, ignore_nullable=True)
