"""The static-membership what-if on a hand-built rolling-deploy history.

Group `g` (3 members on hosts /10.0.0.1-3, every pod's client.id consumer-g-1, as a
Deployment's per-JVM counter gives), range declared, 12 partitions, captures every 10
minutes, 3.x broker lines (GroupCoordinator.scala 3.6 text):
- 10:01-10:03 rolling deploy: each pod closes (LeaveGroup) and its replacement joins on
  the same host 20 s later: six generations, one event at 10:10 (members_replaced);
- 11:01 one pod closes and its replacement joins 400 s later (11:07:40): event 11:10;
- 12:05 a fourth member joins on a new host (scale out): event 12:10;
- a pod replaced between 13:00 and 13:10 with no log line covering it: event 13:10.
Hand-computed, timeout 300 s: only the 10:10 deploy is avoided (every member back in
20 s); 11:10's was away 400 s; 12:10 is no restart; 13:10 can only be shown back within
600 s (its capture window). With 600 s: 10:10, 11:10 and 13:10.
"""

from __future__ import annotations

import datetime as dt

import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.metrics.event_matching import Event, Member, match_events
from fleet_rebalance.metrics.generations import group_generations, member_times
from fleet_rebalance.metrics.static_savings import avoidable

DAY = dt.date(2026, 11, 20)
SUFFIX = "(kafka.coordinator.group.GroupCoordinator)"
PREFIX = "INFO [GroupCoordinator 3]:"


def at(hh: int, mm: int, ss: float = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, hh, mm, tzinfo=dt.UTC) + dt.timedelta(seconds=ss)


def pod(name: str, host: int) -> Member:
    return Member(f"consumer-g-1-{name}", f"/10.0.0.{host}", "consumer-g-1")


A1, A2, A3 = pod("a1", 1), pod("a2", 2), pod("a3", 3)
B1, B2, B3 = pod("b1", 1), pod("b2", 2), pod("b3", 3)
C2, D4, E1 = pod("c2", 2), pod("d4", 4), pod("e1", 1)


def stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S,") + f"{when.microsecond // 1000:03d}"


def leave(when: dt.datetime, member: Member, generation: int, size: int) -> list[str]:
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


def join(when: dt.datetime, member: Member, generation: int, size: int) -> list[str]:
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
EVENTS = [
    Event(2, at(10, 10), at(10, 0), "members_replaced", (A1, A2, A3), (B1, B2, B3)),
    Event(3, at(11, 10), at(11, 0), "members_replaced", (B1, B2, B3), (B1, C2, B3)),
    Event(4, at(12, 10), at(12, 0), "member_joined", (B1, C2, B3), (B1, C2, B3, D4)),
    Event(5, at(13, 10), at(13, 0), "members_replaced", (B1, C2, B3, D4), (E1, C2, B3, D4)),
]


def log_rows() -> list[dict]:
    text = "\n".join(LINES) + "\n"
    rows = parse_capture("prod/logs/broker-3/server.log", text.encode()).rows[COORDINATOR_EVENTS]
    assert len(rows) == len(LINES)  # every line is a coordinator_events row
    return rows


def test_rolling_deploy_causes_and_what_static_membership_avoids():
    """Then: the four causes, and which events group.instance.id with a 300 s and a
    600 s session timeout would have avoided (module docstring)."""
    rows = log_rows()
    causes = match_events(EVENTS, group_generations(rows))
    assert [(c.seq, c.cause, c.generation, c.duration_ms) for c in causes] == [
        (2, "deploy_restart", 7, 3000),  # the last of the six generations between captures
        (3, "deploy_restart", 9, 3000),
        (4, "scale_out", 10, 3000),
        (5, "deploy_restart", None, None),
    ]
    times = member_times(rows)
    assert times[B1.member_id][0] - times[A1.member_id][1] == dt.timedelta(seconds=20)
    five = dt.timedelta(seconds=300)
    ten = dt.timedelta(seconds=600)
    assert [avoidable(c, times, five) for c in causes] == [True, False, False, False]
    assert [avoidable(c, times, ten) for c in causes] == [True, True, False, True]


@pytest.mark.spark
def test_static_membership_savings_per_group(spark):
    """Given: the history above through the Spark glue (event_causes on its captures and
    log lines), range's replay pausing all 12 partitions at each event (priced with the
    matched generation's 3 s: 36.0; no log for 13:10: null), and a group `h` declaring a
    plug-in that was not replayed (measured on `observed`) with one scale-out.
    Then (hand-computed, 600 s): g saves 3 rebalances (10:10, 11:10, 13:10), 36 paused
    partitions and 72.0 partition-seconds (13:10 has no duration); h saves nothing."""
    from chispa import assert_df_equality

    from fleet_rebalance.metrics.rebalance_causes import EVENT_CAUSES, LOGS, event_causes
    from fleet_rebalance.metrics.static_membership import static_membership
    from fleet_rebalance.pipeline import silver

    naive = lambda t: t.replace(tzinfo=None)  # noqa: E731
    events = [
        ("c", "g", e.seq, naive(e.at), e.trigger, naive(e.previous_at), DAY) for e in EVENTS
    ] + [("c", "h", 2, naive(at(10, 10)), "member_joined", naive(at(10, 0)), DAY)]
    events_df = spark.createDataFrame(
        events,
        "cluster string, group_id string, event_seq int, event_at timestamp, trigger string, "
        "previous_capture_at timestamp, event_date date",
    )
    captured = {e.previous_at: e.before for e in EVENTS} | {e.at: e.after for e in EVENTS}
    members = [
        ("c", "g", naive(when), m.member_id, m.host, m.client_id, None)
        for when, group in captured.items()
        for m in group
    ] + [("c", "h", naive(at(10, 10)), "h-1", "/10.1.0.1", "h-client", None)]
    members_df = spark.createDataFrame(
        members,
        "cluster string, group_id string, captured_at timestamp, consumer_id string, "
        "host string, client_id string, group_instance_id string",
    )
    logs_df = spark.createDataFrame(
        [tuple({**r, "cluster": "c"}.get(f.name) for f in LOGS.fields) for r in log_rows()],
        LOGS,
    )
    metric_fields = silver.TABLES["replay_metrics"]
    metrics = [
        {"cluster": "c", "group_id": "g", "event_seq": seq, "assignor": assignor,
         "paused_partitions": paused, "paused_partition_seconds": seconds, "event_date": DAY}
        for seq, seconds in ((2, 36.0), (3, 36.0), (4, 36.0), (5, None))
        for assignor, paused in (("range", 12), ("cooperative-sticky", 4))
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
    expected_schema = (
        "cluster string, group_id string, date date, assignor string, events int, "
        "deploy_restarts int, rebalances_avoided int, paused_partitions_avoided long, "
        "paused_partition_seconds_avoided double"
    )
    found = event_causes(events_df, members_df, logs_df, DAY, 600).collect()
    got = static_membership(spark.createDataFrame(found, EVENT_CAUSES), metrics_df, declared)
    expected = spark.createDataFrame(
        [
            ("c", "g", DAY, "range", 4, 3, 3, 36, 72.0),
            ("c", "h", DAY, "observed", 1, 0, 0, 0, 0.0),
        ],
        expected_schema,
    )
    assert_df_equality(got.orderBy("group_id"), expected, ignore_nullable=True)
    no_log = [(r["cause"], r["duration_ms"]) for r in found if r["event_seq"] == 5]
    assert no_log == [("deploy_restart", None)]
