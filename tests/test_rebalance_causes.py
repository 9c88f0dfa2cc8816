"""Rebalance causes: reasons of each coordinator release, generations from exact log
lines, events matched to generations (pure, no Spark), then the Spark glue as an
oracle, and the table on data/sample (clean_nightly)."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import pyspark.sql.functions as F
import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS
from fleet_rebalance.pipeline import gold
from fleet_rebalance.replay.capture_causes import Event, Member, capture_cause, replacements
from fleet_rebalance.replay.generations import group_generations
from fleet_rebalance.replay.log_causes import member_cause, reason_cause
from fleet_rebalance.vocabulary import Cause

LOGS = Path(__file__).resolve().parent / "data" / "broker_logs"
DAY = dt.date(2026, 11, 20)
OLD = "(kafka.coordinator.group.GroupCoordinator)"
NEW = "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
NEW_PREFIX = "[GroupCoordinator id=1 topic=__consumer_offsets partition=12]"


def at(hh: int, mm: int, ss: float = 0) -> dt.datetime:
    return dt.datetime(2026, 11, 20, hh, mm, tzinfo=dt.UTC) + dt.timedelta(seconds=ss)


def log_rows(text: str) -> list[dict]:
    """coordinator_events rows of a broker log, as the ingest writes them."""
    result = parse_capture("lab/logs/broker-3/server.log", text.encode())
    return [r for r in result.rows.get(COORDINATOR_EVENTS, []) if r["group_id"]]


def causes_by_group(rows: list[dict]) -> dict[str, list[tuple]]:
    """group -> [(generation, cause, duration_ms)] in time order."""
    rows = sorted(rows, key=lambda r: r["group_id"])
    found = {
        group: [(g.generation, g.cause()[0], g.duration_ms) for g in group_generations(list(grp))]
        for group, grp in itertools.groupby(rows, key=lambda r: r["group_id"])
    }
    return {group: generations for group, generations in found.items() if generations}


# -- reasons: the strings prepareRebalance gets, per release ------------------------------


@pytest.mark.parametrize(
    ("reason", "cause", "members", "instance"),
    [
        # 2.0 .. 2.2 (GroupCoordinator.scala)
        ("Adding new member consumer-1-0aa1", "scale_out", ("consumer-1-0aa1",), None),
        ("removing member consumer-1-0aa1 on LeaveGroup", "scale_in", ("consumer-1-0aa1",), None),
        (
            "Updating metadata for member consumer-1-0aa1",
            "metadata_change",
            (),
            None,
        ),
        ("error when storing group assignment during SyncGroup (member: c-1)", "unknown", (), None),
        # 2.3 / 2.4: `instanceid`, no space
        ("Adding new member c-1 with group instanceid None", "scale_out", ("c-1",), None),
        # 2.5 .. 2.8
        (
            "Adding new member pod-a-4f5a with group instance id Some(pod-a)",
            "scale_out",
            ("pod-a-4f5a",),
            "pod-a",
        ),
        ("leader c-1 re-joining group during Stable", "leader_rejoin", ("c-1",), None),
        ("Member c-1 joining group during CompletingRebalance", "metadata_change", (), None),
        ("removing member c-1 on heartbeat expiration", "session_timeout", ("c-1",), None),
        # 3.x (KIP-800 client reasons from 3.2)
        (
            "Removing member c-1 on LeaveGroup; client reason: the consumer is being closed",
            "scale_in",
            ("c-1",),
            None,
        ),
        (
            "Removing member c-1 on LeaveGroup; client reason: consumer poll timeout has expired.",
            "poll_timeout",
            ("c-1",),
            None,
        ),
        (
            "Removing member c-1 on LeaveGroup; client reason: the consumer unsubscribed from all "
            "topics",
            "subscription_changed",
            ("c-1",),
            None,
        ),
        (
            "Leader c-1 re-joining group during Stable; client reason: cached metadata has changed",
            "partitions_added",
            ("c-1",),
            None,
        ),
        (
            "Leader c-1 re-joining group during Stable; client reason: rebalance failed due to "
            "UnknownMemberIdException",
            "leader_rejoin",
            ("c-1",),
            None,
        ),
        (
            "Updating metadata for member c-1 during Stable; client reason: subscription has "
            "changed",
            "subscription_changed",
            (),
            None,
        ),
        (
            "Adding new member c-2 with group instance id None; client reason: need to re-join "
            "with the given member-id: c-2",
            "scale_out",
            ("c-2",),
            None,
        ),
        (
            "Removing HashSet(c-1, c-2) on pending sync request expiration",
            "session_timeout",
            ("c-1", "c-2"),
            None,
        ),
        ("Removing Set(c-1) on pending sync request expiration", "session_timeout", ("c-1",), None),
        (
            "Error NOT_COORDINATOR when storing group assignment during SyncGroup (member: c-1)",
            "unknown",
            (),
            None,
        ),
        (
            "Updating metadata for static member pod-a-1 with instance id pod-a; client reason: "
            "not provided",
            "metadata_change",
            (),
            None,
        ),
        (
            "Group's selectedProtocol will change because static member pod-a-1 with instance id "
            "pod-a joined with change of protocol; client reason: not provided",
            "metadata_change",
            (),
            None,
        ),
        # 3.7 .. 4.x (GroupMetadataManager.java)
        (
            "Adding new member c-3 with group instance id null; client reason: not provided",
            "scale_out",
            ("c-3",),
            None,
        ),
        ("explicit `LeaveGroup` request for (c-1, c-2) members.", "scale_in", ("c-1", "c-2"), None),
        ("removing member c-1 on heartbeat expiration.", "session_timeout", ("c-1",), None),
        ("Removing [c-1] on pending sync request expiration.", "session_timeout", ("c-1",), None),
        (
            "Member c-1 is joining group during CompletingRebalance; client reason: not provided",
            "metadata_change",
            (),
            None,
        ),
        (
            "Error COORDINATOR_NOT_AVAILABLE when storing group assignmentduring SyncGroup "
            "(member: c-1).",
            "unknown",
            (),
            None,
        ),
        (
            "Freshly-loaded group g (size 12) is over capacity 10. Rebalancing in order to give a "
            "chance for consumers to commit offsets",
            "unknown",
            (),
            None,
        ),
        ("Downgrade group g from consumer to classic.", "metadata_change", (), None),
        (None, "unknown", (), None),
    ],
)
def test_each_release_reason_names_its_cause(reason, cause, members, instance):
    """Given: a reason string exactly as a release's coordinator builds it.
    Then: its cause, and the member ids (and static instance) it names."""
    reading = reason_cause(reason)
    assert (reading.cause, reading.members, reading.instance) == (cause, members, instance)
    assert reading.cause in set(Cause)


@pytest.mark.parametrize(
    ("event", "reason", "cause"),
    [
        ("member_joined", None, "scale_out"),
        ("member_left", None, "scale_in"),
        ("member_left", "the consumer is being closed", "scale_in"),
        ("member_left", "consumer poll timeout has expired.", "poll_timeout"),
        ("member_failed", None, "session_timeout"),
        ("member_failed", "remove dynamic members who haven't joined", "poll_timeout"),
        ("member_failed", "removed members who haven't sent their sync request", "session_timeout"),
        ("member_fenced", "the member session expired.", "session_timeout"),
        ("member_fenced", "its session expired", "session_timeout"),
        ("member_fenced", "it failed to revoke partitions within 300000ms", "poll_timeout"),
        ("member_fenced", "it failed to transition from epoch 19 within 300000ms", "poll_timeout"),
        (
            "member_fenced",
            "the classic member failed to join within the rebalance timeout",
            "poll_timeout",
        ),
        ("member_fenced", "the member failed to sync within timeout", "session_timeout"),
        ("member_fenced", "heartbeat", "unknown"),
        ("static_member_rejoined", None, "deploy_restart"),
    ],
)
def test_member_lines_name_their_cause(event, reason, cause):
    assert member_cause(event, reason) == cause


# -- generations from exact log lines of each release family ------------------------------


def test_generations_of_the_release_family_logs():
    """Given: tests/data/broker_logs, one real-form log per release family.
    Then: each group's generations with the cause and duration read from the log
    (expected: the reasons and member lines of each family, read by hand)."""
    expected = {
        "kafka-1.x-server.log": {
            # 1.x: no reason; the member lines before the start decide
            "orders-processor": [
                (12, "unknown", 3003),
                (13, "session_timeout", 3002),
                (14, "scale_in", 3002),  # the group went Empty: its end
            ]
        },
        "kafka-2.3-2.8-server.log": {
            "audit-archiver": [(9, "scale_out", 3002)],
            "billing-enricher": [
                (41, "scale_out", 3001),
                (42, "scale_in", 3003),
                (43, "session_timeout", 60004),
            ],
            "orders-archiver": [(6, "session_timeout", 3002)],
        },
        "kafka-3.x-old-coordinator-server.log": {
            "orders-processor": [
                (42, "scale_out", 3002),
                (43, "scale_in", 5003),
                (44, "session_timeout", 1),
            ],
            "payments-ledger": [(7, "scale_out", 3001), (8, "session_timeout", None)],
        },
        "kafka-4.x-new-coordinator-server.log": {
            # KIP-848 epochs: the member lines before each bump
            "fraud-enricher": [
                (17, "scale_out", 1),
                (18, "scale_out", 1),
                (19, "scale_in", 1),
                (20, "poll_timeout", None),  # fenced: failed to revoke within 300000ms
                (21, "scale_out", None),
            ],
            "search-archiver": [
                (10, "scale_out", 3001),
                (11, "scale_in", 3001),
                (12, "session_timeout", 66998),
            ],
            "share-billing": [(3, "scale_out", None)],
            "streams-app": [(2, "scale_out", None)],
        },
    }
    for name, groups in expected.items():
        assert causes_by_group(log_rows((LOGS / name).read_text())) == groups, name


def test_client_reasons_of_a_3x_coordinator():
    """Given: a 3.x broker's lines for three rebalances, exact GroupCoordinator.scala 3.6
    text, with the KIP-800 client reasons of a consumer whose poll loop stalled, a
    leader that saw partitions added, and a member that changed its subscription.
    Then: poll_timeout, partitions_added, subscription_changed, each with the line."""
    prepare = "Preparing to rebalance group orders in state PreparingRebalance with old generation"
    lines = [
        f"[2026-11-20 09:00:00,000] INFO [GroupCoordinator 3]: {prepare} 7 (__consumer_offsets-44)"
        " (reason: Removing member consumer-orders-1-aa on LeaveGroup; client reason: consumer"
        f" poll timeout has expired.) {OLD}",
        "[2026-11-20 09:00:00,001] INFO [GroupCoordinator 3]: Member MemberMetadata(memberId="
        "consumer-orders-1-aa, groupInstanceId=None, clientId=consumer-orders-1, clientHost=/10.0"
        ".0.1, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range))"
        " has left group orders through explicit `LeaveGroup`; client reason: consumer poll "
        f"timeout has expired. {OLD}",
        "[2026-11-20 09:00:03,000] INFO [GroupCoordinator 3]: Stabilized group orders generation 8"
        f" (__consumer_offsets-44) with 2 members {OLD}",
        f"[2026-11-20 09:10:00,000] INFO [GroupCoordinator 3]: {prepare} 8 (__consumer_offsets-44)"
        " (reason: Leader consumer-orders-2-bb re-joining group during Stable; client reason: "
        f"cached metadata has changed) {OLD}",
        "[2026-11-20 09:10:02,500] INFO [GroupCoordinator 3]: Stabilized group orders generation 9"
        f" (__consumer_offsets-44) with 2 members {OLD}",
        f"[2026-11-20 09:20:00,000] INFO [GroupCoordinator 3]: {prepare} 9 (__consumer_offsets-44)"
        " (reason: Updating metadata for member consumer-orders-3-cc during Stable; client "
        f"reason: subscription has changed) {OLD}",
        "[2026-11-20 09:20:01,000] INFO [GroupCoordinator 3]: Stabilized group orders generation 10"
        f" (__consumer_offsets-44) with 2 members {OLD}",
    ]
    rows = log_rows("\n".join(lines) + "\n")
    generations = group_generations(rows)
    assert [(g.generation, *g.cause(), g.duration_ms) for g in generations] == [
        (8, "poll_timeout", lines[0], 3000),
        (9, "partitions_added", lines[3], 2500),
        (10, "subscription_changed", lines[5], 1000),
    ]
    assert generations[0].removed == {"consumer-orders-1-aa"}
    assert generations[1].removed == generations[1].added == set()  # a rejoin moves no one


def test_a_leave_that_completes_the_join_is_logged_after_the_stabilized_line():
    """Given: the live 3.9.2 lab's lines when two of a cooperative group's four members
    left at once (GroupCoordinator.handleLeaveGroup logs `has left` after the removal,
    and the second removal completed the join: `Stabilized ... with 2 members` comes
    first), then a leave 0.4 s after a later generation's end that starts the next
    rebalance (new coordinator: the leave line before its Preparing line).
    Then: generation 4 let both go; the later leave belongs to the generation it started."""
    gone = ("lab-rdkafka-2-9e7e", "lab-rdkafka-1-a54c")

    def left(ms: str, member: str) -> str:
        return (
            f"[2026-11-20 22:52:29,{ms}] INFO [GroupCoordinator 1]: Member MemberMetadata("
            f"memberId={member}, groupInstanceId=None, clientId={member[:12]}, clientHost=/127."
            "0.0.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List("
            "cooperative-sticky)) has left group lab-rdkafka through explicit `LeaveGroup`; client "
            f"reason: not provided {OLD}"
        )

    lines = [
        "[2026-11-20 22:49:52,649] INFO [GroupCoordinator 1]: Stabilized group lab-rdkafka "
        f"generation 3 (__consumer_offsets-4) with 4 members {OLD}",
        "[2026-11-20 22:52:29,053] INFO [GroupCoordinator 1]: Preparing to rebalance group lab-"
        "rdkafka in state PreparingRebalance with old generation 3 (__consumer_offsets-4) (reason"
        f": Removing member {gone[0]} on LeaveGroup; client reason: not provided) {OLD}",
        left("054", gone[0]),
        "[2026-11-20 22:52:29,151] INFO [GroupCoordinator 1]: Stabilized group lab-rdkafka "
        f"generation 4 (__consumer_offsets-4) with 2 members {OLD}",
        left("153", gone[1]),
        "[2026-11-20 22:52:29,156] INFO [GroupCoordinator 1]: Assignment received from leader "
        "lab-rdkafka-4-772c for group lab-rdkafka for generation 4. The group has 2 members, 0"
        f" of which are static. {OLD}",
        f"[2026-11-20 22:52:29,550] INFO {NEW_PREFIX} [Group lab-rdkafka] Member lab-rdkafka-3-"
        f"77aa has left group through explicit `LeaveGroup` request; client reason: not "
        f"provided {NEW}",
        f"[2026-11-20 22:52:29,551] INFO {NEW_PREFIX} Preparing to rebalance group lab-rdkafka "
        "in state PreparingRebalance with old generation 4 (reason: explicit `LeaveGroup` "
        f"request for (lab-rdkafka-3-77aa) members.). {NEW}",
        f"[2026-11-20 22:52:30,000] INFO {NEW_PREFIX} Stabilized group lab-rdkafka generation 5"
        f" with 1 members. {NEW}",
    ]
    generations = group_generations(log_rows("\n".join(lines) + "\n"))
    assert [(g.generation, g.removed) for g in generations] == [
        (3, set()),
        (4, set(gone)),
        (5, {"lab-rdkafka-3-77aa"}),
    ]


def test_new_coordinator_leave_line_carries_the_client_reason():
    """Given: a 3.9/4.x classic group: the leave line (client reason) before the
    Preparing line, whose reason names the member but not why it left; then a KIP-848
    group whose member's session expired before an epoch bump.
    Then: poll_timeout decided by the leave line; session_timeout by the fence line."""
    member = "consumer-search-2-6b7c"
    lines = [
        f"[2026-11-20 09:01:20,000] INFO {NEW_PREFIX} [Group search] Member {member} has left"
        f" group through explicit `LeaveGroup` request; client reason: consumer poll timeout "
        f"has expired. {NEW}",
        f"[2026-11-20 09:01:20,001] INFO {NEW_PREFIX} Preparing to rebalance group search in "
        f"state PreparingRebalance with old generation 10 (reason: explicit `LeaveGroup` request"
        f" for ({member}) members.). {NEW}",
        f"[2026-11-20 09:01:23,002] INFO {NEW_PREFIX} Stabilized group search generation 11 with"
        f" 2 members. {NEW}",
        f"[2026-11-20 09:05:40,000] INFO {NEW_PREFIX} [GroupId fraud] Member cD2eF3gH4iJ5kL6mN7oP8q"
        f" fenced from the group because the member session expired.. {NEW}",
        f"[2026-11-20 09:05:40,000] INFO {NEW_PREFIX} [GroupId fraud] Bumped group epoch to 20. "
        f"{NEW}",
        f"[2026-11-20 09:05:40,003] INFO {NEW_PREFIX} [GroupId fraud] Computed a new target "
        f"assignment for epoch 20 with 'uniform' assignor in 3ms. {NEW}",
    ]
    rows = log_rows("\n".join(lines) + "\n")
    search = group_generations([r for r in rows if r["group_id"] == "search"])
    fraud = group_generations([r for r in rows if r["group_id"] == "fraud"])
    assert [(g.generation, *g.cause(), g.duration_ms) for g in search] == [
        (11, "poll_timeout", lines[0], 3001)
    ]
    assert [(g.generation, g.protocol, *g.cause(), g.duration_ms) for g in fraud] == [
        (20, "consumer", "session_timeout", lines[3], 3)
    ]
    assert fraud[0].removed == {"cD2eF3gH4iJ5kL6mN7oP8q"}


# -- matching events to generations ---------------------------------------------------------


def member(member_id: str, host: str | None = None, client: str | None = None, instance=None):
    return Member(member_id, host, client, instance)


A1 = member("consumer-g-1-aa", "/10.0.0.1", "consumer-g-1")
A2 = member("consumer-g-1-bb", "/10.0.0.2", "consumer-g-1")
B1 = member("consumer-g-1-cc", "/10.0.0.1", "consumer-g-1")  # A1's pod restarted
C9 = member("consumer-g-9-zz", "/10.0.0.9", "consumer-g-9")


def test_an_event_no_log_covers_takes_its_cause_from_the_captures():
    """Given: events of each kind and no coordinator line at all.
    Then: the capture cause, no generation or duration, and the capture fact."""
    events = [
        Event(2, at(3, 0), at(2, 40), "members_replaced", (A1, A2), (B1, A2)),
        Event(3, at(3, 20), at(3, 0), "member_joined", (B1, A2), (B1, A2, C9)),
        Event(4, at(3, 40), at(3, 20), "member_left", (B1, A2, C9), (B1, A2)),
        Event(5, at(4, 0), at(3, 40), "partitions_added", (B1, A2), (B1, A2)),
        Event(6, at(4, 20), at(4, 0), "subscription_changed", (B1, A2), (B1, A2)),
        Event(7, at(4, 40), at(4, 20), "members_replaced", (B1, A2), (C9, A2)),
    ]
    got = [(e.seq, *capture_cause(e, replacements(e)), None, None) for e in events]
    assert got == [
        (
            2,
            "deploy_restart",
            "members capture 2026-11-20T03:00Z: consumer-g-1-aa replaced by consumer-g-1-cc "
            "with host /10.0.0.1",
            None,
            None,
        ),
        (
            3,
            "scale_out",
            "members capture 2026-11-20T03:20Z: consumer-g-9-zz joined (2 -> 3 members)",
            None,
            None,
        ),
        (
            4,
            "scale_in",
            "members capture 2026-11-20T03:40Z: consumer-g-9-zz left (3 -> 2 members)",
            None,
            None,
        ),
        (
            5,
            "partitions_added",
            "members capture 2026-11-20T04:00Z: a subscribed topic has more partitions",
            None,
            None,
        ),
        (
            6,
            "subscription_changed",
            "members capture 2026-11-20T04:20Z: a member's subscription changed",
            None,
            None,
        ),
        (
            7,
            "unknown",
            "members capture 2026-11-20T04:40Z: consumer-g-1-cc left and consumer-g-9-zz joined "
            "(2 -> 2 members), no shared host, client id or instance id",
            None,
            None,
        ),
    ]


def test_capture_cause_of_a_mixed_event_without_member_change():
    event = Event(4, at(5, 0, 30), at(4, 40), "mixed", (A1,), (A1,))
    assert capture_cause(event) == (
        "subscription_changed",
        "members capture 2026-11-20T05:00:30Z: a member's subscription changed",
    )


# -- Spark glue ------------------------------------------------------------------------------


# -- on data/sample ------------------------------------------------------------------------


@pytest.mark.spark
def test_rebalance_causes_on_the_sample(spark, clean_nightly):
    """The sample's causes table: one row per non-initial event, every cause known,
    every logged event's generation a timeline generation, its duration the
    generation's (to the end of its cooperative follow-up round, where it had one), and
    the replay's paused partition-seconds priced with that duration."""
    from fleet_rebalance.storage import read_table

    def table(name):
        return read_table(spark, str(clean_nightly / name))

    causes = table("rebalance_causes").where(F.col("date") == F.lit(DAY))
    assert [(f.name, f.dataType) for f in causes.schema.fields] == [
        (f.name, f.dataType) for f in gold.TABLES["rebalance_causes"].fields
    ]
    events = table("rebalance_events").where(F.col("trigger") != "initial")
    assert causes.count() == events.count() > 0
    assert causes.join(events, ["cluster", "group_id", "event_seq"], "left_anti").isEmpty()
    # The generator's profiles show these (generate/fleet.py, PROFILES); a leader's
    # rejoin or a metadata update that changed the topics is named for the change.
    found = {r[0] for r in causes.select("cause").distinct().collect()}
    assert found == {
        "deploy_restart", "session_timeout", "poll_timeout", "scale_out", "scale_in",
        "subscription_changed", "partitions_added",
    }  # fmt: skip
    assert found <= set(Cause)
    assert causes.where(F.col("evidence").isNull() | (F.col("evidence") == "")).isEmpty()
    logged = causes.where(F.col("source") != "captures")
    assert logged.where(F.col("generation").isNull()).isEmpty()
    timeline = table("rebalance_timeline").select(
        "cluster", "group_id", "generation", "started_at", "stabilized_at", "follow_up"
    )
    # One matching: the replay folds a follow-up round into the generation before it.
    follow_ups = timeline.where(F.col("follow_up")).select(
        "cluster",
        "group_id",
        (F.col("generation") - 1).alias("generation"),
        F.col("stabilized_at").alias("round_ended"),
    )
    spans = timeline.join(follow_ups, ["cluster", "group_id", "generation"], "left").select(
        "cluster",
        "group_id",
        "generation",
        (
            F.unix_millis(F.coalesce("round_ended", "stabilized_at")) - F.unix_millis("started_at")
        ).alias("logged_ms"),
    )
    joined = logged.join(spans, ["cluster", "group_id", "generation"], "inner")
    assert joined.count() == logged.count()
    assert joined.where(~F.col("duration_ms").eqNullSafe(F.col("logged_ms"))).isEmpty()
    assert causes.where(
        (F.col("source") == "captures") & F.col("duration_ms").isNotNull()
    ).isEmpty()
    priced = table("replay_metrics").join(
        causes.select("cluster", "group_id", "event_seq", "duration_ms"),
        ["cluster", "group_id", "event_seq"],
        "left",
    )
    expected = F.col("paused_partitions") * F.col("duration_ms") / 1000.0
    assert priced.where(~F.col("paused_partition_seconds").eqNullSafe(expected)).isEmpty()
    assert not priced.where(F.col("paused_partition_seconds").isNotNull()).isEmpty()
