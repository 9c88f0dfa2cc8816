"""Every parser on exact snippets of each layout in shared/FORMATS.md, and bad input."""

from __future__ import annotations

import datetime as dt

import pytest

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.capture.paths import parse_timestamp
from fleet_rebalance.generate.partitioner import murmur2

CAPTURE = "prod-east/captures/2026-11-20T0910Z/consumer-groups.txt"
AT = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)


def parse(text: str, path: str = CAPTURE, **kwargs):
    result = parse_capture(path, text.encode("utf-8"), **kwargs)
    assert result.reconciles(), result.reconciliation()
    return result


def rows(result, table):
    return result.records(table)


OFFSETS_36 = """
GROUP                TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                                                          HOST            CLIENT-ID
clickstream-enricher clickstream     7          124249734       124259799       10065           consumer-clickstream-enricher-1-cda2677f-8ba4-4aa7-8d21-69019ea3ba3f /10.42.15.128   consumer-clickstream-enricher-1

Consumer group 'audit-archiver' has no active members.

GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
audit-archiver  orders          14         103254125       103915600       661475          -               -               -
"""


def test_offsets_3_6_two_blocks_and_an_empty_group():
    result = parse(OFFSETS_36)
    assert result.kind == "offsets" and result.status == "ok"
    first, second = rows(result, "offsets")
    assert first == {
        "group_id": "clickstream-enricher",
        "topic": "clickstream",
        "partition": 7,
        "current_offset": 124249734,
        "log_end_offset": 124259799,
        "lag": 10065,
        "consumer_id": "consumer-clickstream-enricher-1-cda2677f-8ba4-4aa7-8d21-69019ea3ba3f",
        "host": "/10.42.15.128",
        "client_id": "consumer-clickstream-enricher-1",
        "cluster": "prod-east",
        "captured_at": AT,
        "capture_date": AT.date(),
        "source_file": CAPTURE,
        "line_number": 3,
    }
    assert (second["group_id"], second["consumer_id"], second["lag"]) == (
        "audit-archiver",
        None,
        661475,
    )
    assert result.structural == 6  # 3 blank, 2 headers, 1 message


def test_offsets_3_8_no_blank_lines_and_no_final_newline():
    text = (
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  "
        "           CONSUMER-ID     HOST            CLIENT-ID"
        "\ng1              t               0          5               9               4    "
        "           c-1             /10.0.0.1       c"
        "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  "
        "           CONSUMER-ID     HOST            CLIENT-ID"
        "\ng2              t               1          -               9               -    "
        "           -               -               -"
    )
    result = parse(text)
    assert [(r["group_id"], r["current_offset"], r["lag"]) for r in rows(result, "offsets")] == [
        ("g1", 5, 4),
        ("g2", None, None),
    ]


def test_offsets_4x_verbose_leader_epoch_column():
    text = """
GROUP           TOPIC           PARTITION  LEADER-EPOCH    CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
g               t               3          12              100             130             30              c-1             /10.0.0.1       c
"""
    (row,) = rows(parse(text), "offsets")
    assert (row["partition"], row["current_offset"], row["lag"]) == (3, 100, 30)


def test_offsets_0_10_owner_and_0_9_comma_layouts():
    owner = """GROUP                          TOPIC                          PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             OWNER
g                              t                              0          5               7               2               client-0_/192.168.1.13
g                              t                              1          unknown         7               unknown         none
"""
    first, second = rows(parse(owner), "offsets")
    assert (first["client_id"], first["host"], first["lag"]) == ("client-0", "/192.168.1.13", 2)
    assert (second["current_offset"], second["consumer_id"]) == (None, None)
    comma = (
        "GROUP, TOPIC, PARTITION, CURRENT OFFSET, LOG END OFFSET, LAG, OWNER\n"
        "g, t, 0, 5, 7, 2, client-0_/10.0.0.9\n"
    )
    (row,) = rows(parse(comma), "offsets")
    assert (row["partition"], row["lag"], row["host"]) == (0, 2, "/10.0.0.9")


def test_offsets_without_group_column_take_the_group_from_the_path_or_are_quarantined():
    text = """TOPIC                          PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG        CONSUMER-ID                                       HOST                           CLIENT-ID
t                              0          5               7               2          consumer-1-0123456789abcdef0123456789abcdef01234567/10.0.0.1                     consumer-1
"""
    path = "prod/2019-03-01T1200Z/groups/payments.txt"
    with_group = parse(
        text, path=path, path_pattern=r"^(?P<cluster>[^/]+)/.*/groups/(?P<group>[^/.]+)\.txt$"
    )
    (row,) = rows(with_group, "offsets")
    assert row["group_id"] == "payments"
    assert (row["consumer_id"], row["host"]) == (
        "consumer-1-0123456789abcdef0123456789abcdef01234567",
        "/10.0.0.1",
    )  # 0.10.2 glue
    without = parse(text, path=path)
    assert "no GROUP column" in without.quarantine[0]["reason"]


MEMBERS_36 = """
GROUP           CONSUMER-ID                                         GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT
g1              pod-a-5f1c2d3e-aaaa-bbbb-cccc-000000000001           pod-a             /10.0.0.1       consumer-g1-pod-a 3               audit(2), orders(0,1)
g1              consumer-g1-1-5f1c2d3e-aaaa-bbbb-cccc-000000000002   -                 /10.0.0.2       consumer-g1-1   0               -

GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT
g2              c-1             /10.0.0.3       c               2               orders(0,10)
"""


def test_members_3_6_instance_id_column_in_one_block_only():
    first, second, third = rows(parse(MEMBERS_36), "members")
    assert first["group_instance_id"] == "pod-a"
    assert first["assignment"] == [
        {"topic": "audit", "partition": 2},
        {"topic": "orders", "partition": 0},
        {"topic": "orders", "partition": 1},
    ]
    assert (second["group_instance_id"], second["partition_count"], second["assignment"]) == (
        None,
        0,
        [],
    )
    assert (third["group_id"], third["assignment"][1]) == (
        "g2",
        {"topic": "orders", "partition": 10},
    )


def test_members_without_verbose_have_trailing_spaces_and_no_assignment():
    text = (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n"
        "g               c-1             /10.0.0.1       c               4               \n"
    )
    (row,) = rows(parse(text), "members")
    assert (row["partition_count"], row["assignment"]) == (4, None)


def test_members_3_8_topicless_assignment_and_bare_header_after_empty_group():
    """As 3.8/3.9 print it (tests/data/lab-3.9): an Empty group's message, then a bare
    header; every header opened by a blank line, every row ended by println()."""
    text = (
        "\nConsumer group 'idle' has no active members.\n"
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"
        "g               c-1             /10.0.0.1       c               4               (0,1,10), (2)\n"
    )
    result = parse(text)
    (row,) = rows(result, "members")
    assert (row["assignment"], row["assignment_groups"]) == (None, [[0, 1, 10], [2]])


def test_members_4x_kip1099_columns():
    text = """
GROUP           CONSUMER-ID            HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT
g               Q7K_qda8THGpKHzSy-UQ8A /10.0.0.1       c               4               12              audit:2;orders:0,1,10 13              audit:2;orders:0,1
"""
    (row,) = rows(parse(text), "members")
    assert row["consumer_id"] == "Q7K_qda8THGpKHzSy-UQ8A"
    assert [(a["topic"], a["partition"]) for a in row["assignment"]] == [
        ("audit", 2),
        ("orders", 0),
        ("orders", 1),
        ("orders", 10),
    ]


STATE_36 = """
GROUP                              COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS
audit-archiver                     kafka-e4.prod.example.net:9092 (4)                      Empty           0

GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS
orders                    kafka-1:9092 (1)          range                Stable          3
"""


def test_state_misaligned_coordinator_and_empty_strategy():
    first, second = rows(parse(STATE_36), "group_states")
    assert first == {
        **first,
        "group_id": "audit-archiver",
        "coordinator_id": 4,
        "coordinator_host": "kafka-e4.prod.example.net:9092",
        "assignment_strategy": None,
        "state": "Empty",
        "member_count": 0,
    }
    assert (second["assignment_strategy"], second["state"], second["member_count"]) == (
        "range",
        "Stable",
        3,
    )


def test_state_3_8_two_spaces_4x_dash_and_1_1_without_group():
    v38 = (
        "\nGROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS\n"
        "g                         kafka-2:9092  (2)         cooperative-sticky   Stable          2\n"
    )
    (row,) = rows(parse(v38), "group_states")
    assert (row["coordinator_host"], row["coordinator_id"]) == ("kafka-2:9092", 2)
    v4 = (
        "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n"
        "g               kafka-2:9092  (2)         -                    Empty                0\n"
    )
    assert rows(parse(v4), "group_states")[0]["assignment_strategy"] is None
    v11 = (
        "COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS\n"
        "kafka-2:9092 (2)          range                Stable          1\n"
    )
    result = parse(
        v11,
        path="p/2018-01-01T0000Z/orders.txt",
        path_pattern=r"^(?P<cluster>[^/]+)/.*/(?P<group>[^/.]+)\.txt$",
    )
    assert rows(result, "group_states")[0]["group_id"] == "orders"


TOPICS = (
    "Topic: orders\tTopicId: kD2lJ1sPQx2XbH6dVLFo2w\tPartitionCount: 2\tReplicationFactor: 3\t"
    "Configs: segment.bytes=1073741824\n"
    "\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 2,1,3\tIsr: 1,3,2\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 3,2,1\tIsr: \tAdding Replicas: 4\t"
    "Removing Replicas: 1\tElr: N/A\tLastKnownElr: N/A\n"
    "Topic:legacy\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n"
    "\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n"
)


def test_topics_describe_all_versions():
    result = parse(TOPICS, path="prod/captures/2026-11-20T0910Z/topics.txt")
    first, second, legacy = rows(result, "topic_partitions")
    assert (first["topic_id"], first["leader"], first["replicas"], first["isr"]) == (
        "kD2lJ1sPQx2XbH6dVLFo2w",
        2,
        [2, 1, 3],
        [1, 3, 2],
    )
    assert (second["leader"], second["isr"]) == (None, [])
    assert (legacy["topic"], legacy["topic_id"]) == ("legacy", None)


def test_a_field_read_without_the_key_search_is_what_the_key_search_reads():
    """_one_field answers for a tab's field only where _split_field (the search for every
    known key in it) gives the same one pair: every combination of spaces, key (known,
    unknown, damaged), separator and value (a word, empty, a list, one holding a key or a
    blank) below. The common shapes take the short path."""
    from itertools import product

    from fleet_rebalance.capture.topics import KEYS, _one_field, _split_field

    keys = [*KEYS, "Foo", "Topic Id", "Leader ", "\rLeader", "leader", "Configs ", ""]
    values = ["1", "2,1,3", "", "N/A", "none", "Isr:3", "Isr: 3", "a b", "x Leader: 2"]
    values += ["segment.bytes=1 cleanup.policy=delete", " ", "3 ", "Topic:", ":", "1:2"]
    short = 0
    for lead, key, sep, value in product(["", " ", "  "], keys, [":", ": ", ":  ", ""], values):
        part = lead + key + sep + value
        name, read = _one_field(part)
        if name is None:
            continue
        short += 1
        searched: dict[str, str] = {}
        _split_field(part, searched)
        assert searched == {name: read}, part
    assert _one_field("Partition: 0") == ("Partition", "0")
    assert _one_field("Replicas: 2,1,3") == ("Replicas", "2,1,3")
    assert _one_field("Configs: a=1 b=2") == ("Configs", "a=1 b=2")
    assert _one_field("Leader: 1 Isr: 2") == (None, "")  # spaces for tabs: the search's
    assert short > 1000


def test_a_broker_list_read_at_once_is_what_each_ids_check_reads():
    """BROKER_LIST takes only lists whose every id _broker accepts, with the same value;
    the rest (a 10-digit id, a leading zero, a sign, an empty id, other digits) go
    through _broker's checks and their reasons."""
    from fleet_rebalance.capture.numbers import NumberError
    from fleet_rebalance.capture.topics import BROKER_LIST, _broker, _brokers

    taken = ["0", "1", "1,2,3", "999999999", "3,0,999999999"]
    refused = ["2147483647", "01", "+1", "-1", "1,,2", "1,2,", "1 ", "\u0661", "1,2a", ","]
    for text in taken:
        assert BROKER_LIST.match(text), text
        assert _brokers({"Isr": text}, "Isr") == [_broker(b, "id") for b in text.split(",")]
    for text in refused:
        assert not BROKER_LIST.match(text), text
    assert _brokers({"Isr": "2147483647"}, "Isr") == [2147483647]
    with pytest.raises(NumberError, match="Isr broker id is not a number"):
        _brokers({"Isr": "1,,2"}, "Isr")


LOG = """[2024-11-18 09:40:05,171] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance with old generation 41 (__consumer_offsets-44) (reason: Removing member c-1 on LeaveGroup; client reason: the consumer is being closed) (kafka.coordinator.group.GroupCoordinator)
[2024-11-18 09:40:05,172] INFO [GroupCoordinator 1]: Member MemberMetadata(memberId=c-1, groupInstanceId=None, clientId=c, clientHost=/10.0.0.1, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range, cooperative-sticky)) has left group orders through explicit `LeaveGroup`; client reason: the consumer is being closed (kafka.coordinator.group.GroupCoordinator)
[2024-11-18 09:40:08,002] INFO [GroupCoordinator 1]: Stabilized group orders generation 42 (__consumer_offsets-44) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2024-11-18 09:40:08,010] INFO [GroupCoordinator 1]: Assignment received from leader c-2 for group orders for generation 42. The group has 2 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)
[2024-11-18 09:41:00,000] INFO [GroupCoordinator 1]: Member c-3 in group orders has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)
[2024-11-18 09:42:00,000] INFO [GroupCoordinator 1]: Static member with groupInstanceId=pod-a and unknown member id joins group orders in Stable state. Replacing previously mapped member pod-a-old with this groupInstanceId. (kafka.coordinator.group.GroupCoordinator)
[2024-11-18 09:43:00,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=7] Preparing to rebalance group pay in state PreparingRebalance with old generation 3 (reason: removing member m-1 on heartbeat expiration.). (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-11-18 09:43:01,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=7] [GroupId kip] Bumped group epoch to 18. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-11-18 09:43:02,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=7] [GroupId kip] Member Q7K_qda8THGpKHzSy-UQ8A fenced from the group because the member session expired.. (org.apache.kafka.coordinator.group.GroupMetadataManager)
[2024-11-18 09:43:03,000] INFO [Controller id=1] Something unrelated (kafka.controller.KafkaController)
\tat some.stack.Frame(Frame.java:1)
"""


def test_coordinator_log_lines_of_both_coordinators():
    result = parse(LOG, path="prod/logs/broker-1/server.log.2024-11-18-09")
    events = rows(result, "coordinator_events")
    assert [
        (e["event"], e["group_id"], e["generation"], e["member_id"], e["broker"]) for e in events
    ] == [
        ("prepare_rebalance", "orders", 41, None, 1),
        ("member_left", "orders", None, "c-1", 1),
        ("stabilized", "orders", 42, None, 1),
        ("assignment_received", "orders", 42, "c-2", 1),
        ("member_failed", "orders", None, "c-3", 1),
        ("static_member_rejoined", "orders", None, "pod-a-old", 1),
        ("prepare_rebalance", "pay", 3, None, 2),
        ("epoch_bumped", "kip", 18, None, 2),
        ("member_fenced", "kip", None, "Q7K_qda8THGpKHzSy-UQ8A", 2),
    ]
    assert events[0]["reason"].startswith("Removing member c-1 on LeaveGroup")
    assert events[0]["logged_at"] == dt.datetime(2024, 11, 18, 9, 40, 5, 171000, tzinfo=dt.UTC)
    assert result.structural == 2  # an unrelated logger, a stack frame


def test_coordinator_log_in_a_broker_local_zone():
    (event, *_) = rows(
        parse(LOG, path="p/logs/broker-1/server.log", log_timezone="Europe/Berlin"),
        "coordinator_events",
    )
    assert event["logged_at"] == dt.datetime(2024, 11, 18, 8, 40, 5, 171000, tzinfo=dt.UTC)


def test_jsonl_snapshot_feeds_three_tables():
    line = (
        '{"group_id": "g", "state": "Stable", "assignment_strategy": "range", "coordinator": '
        '{"host": "k:9092", "id": 3}, "members": [{"member_id": "m1", "client_id": "c", '
        '"host": "/10.0.0.1", "rack": "az1", "generation": 4, "subscription": ["t"], '
        '"assignment": [["t", 0], ["t", 1]]}], "offsets": [{"topic": "t", "partition": 0, '
        '"current_offset": 5, "log_end_offset": 8, "consumer_id": "m1"}]}\n'
        "not json\n"
    )
    result = parse(line, path="prod/exports/2026-11-20T09:10:00Z/groups.jsonl")
    (state,), (member,), (offset,) = (
        rows(result, t) for t in ("group_states", "members", "offsets")
    )
    assert (state["coordinator_id"], member["subscription_inferred"], offset["lag"]) == (
        3,
        False,
        3,
    )
    assert member["assignment"] == [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]
    assert (member["rack"], member["generation"]) == ("az1", 4)
    assert result.quarantine[0]["reason"].startswith("invalid snapshot")


HEADER = (
    "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG          "
    "   CONSUMER-ID     HOST            CLIENT-ID"
)


def test_malformed_lines_are_quarantined_and_good_lines_survive():
    text = (
        "\r\n".join(
            [
                "",
                HEADER,
                "g  t  0  5  9  4  c-1  /10.0.0.1  c",  # good
                "g  t  1  5  9",  # truncated: missing columns
                "g  t  2  five  9  4  c-1  /10.0.0.1  c",  # non-numeric offset
                "g  t  3  9  5  -4  c-1  /10.0.0.1  c",  # negative lag (truncated log)
                "g  t  4  5  9  7  c-1  /10.0.0.1  c",  # lag disagrees with offsets
                HEADER,  # duplicated header
                "g  t  5  1  2  1  c-1  /10.0.0.1  c",  # good
                "\x00\x01garbage\x02",  # binary garbage
                "[2026-11-20 09:10:01,000] WARN [AdminClient clientId=adminclient-1] Connection to node "
                "-1 could not be established. (org.apache.kafka.clients.NetworkClient)",
            ]
        )
        + "\n"
    )
    result = parse(text)
    assert [r["partition"] for r in rows(result, "offsets")] == [0, 5]
    reasons = [q["reason"] for q in result.quarantine]
    assert reasons[0].startswith("missing column: 5 values for 9 columns")
    assert reasons[1] == "CURRENT-OFFSET is not a number: 'five'"
    assert reasons[2].startswith("negative lag -4")
    assert reasons[3] == "LAG 7 disagrees with LOG-END-OFFSET - CURRENT-OFFSET = 4"
    assert reasons[4].startswith("missing column")
    assert [q["line_number"] for q in result.quarantine] == [4, 5, 6, 7, 10]
    assert result.status == "ok"


def test_non_ascii_digits_are_quarantined_not_crashing_the_file():
    text = HEADER + "\ng  t  0  \u0665  9  4  c-1  /10.0.0.1  c\ng  t  1  5  9  4  c-1  /h  c\n"
    result = parse(text)
    assert [r["partition"] for r in rows(result, "offsets")] == [1]
    assert result.quarantine[0]["reason"].startswith("CURRENT-OFFSET is not a number")


def test_unknown_extra_column_is_kept_by_name_and_reported_once():
    text = (
        "\nGROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  "
        "CLIENT-ID  SHINY-NEW\ng  t  0  1  3  2  c  /h  c  x\ng  t  1  1  3  2  c  /h  c  y\n"
    )
    result = parse(text)
    assert len(rows(result, "offsets")) == 2
    assert result.notes == {"unknown offsets column SHINY-NEW (kept by name)": 1}


def test_tool_error_with_stack_trace_makes_a_failed_capture_keeping_good_lines():
    text = "\n".join(
        [
            "",
            HEADER,
            "g  t  0  5  9  4  c-1  /10.0.0.1  c",
            "",
            "Error: Executing consumer group command failed due to org.apache.kafka.common.errors."
            "TimeoutException: Timed out waiting for a node assignment.",
            "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException"
            ": Timed out waiting for a node assignment.",
            "\tat java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396)",
            "\t... 5 more",
            "",
        ]
    )
    result = parse(text)
    assert len(rows(result, "offsets")) == 1
    assert result.status == "failed_capture"
    assert [q["reason"].split(":")[0] for q in result.quarantine] == [
        "tool error",
        "tool error stack trace",
        "tool error stack trace",
        "tool error stack trace",
    ]


@pytest.mark.parametrize("data", [b"", b"   \n\n"])
def test_empty_file_is_a_failed_capture(data):
    result = parse_capture(CAPTURE, data)
    assert (result.status, result.quarantine[0]["line_number"]) == ("failed_capture", None)


def test_binary_file_is_rejected_whole():
    result = parse_capture(CAPTURE, bytes(range(256)) * 50)
    assert result.status == "rejected"
    assert result.quarantine[0]["reason"].startswith("not a text capture")


def test_capture_without_a_time_in_its_path_is_rejected():
    result = parse_capture("prod/offsets.txt", OFFSETS_36.encode())
    assert result.status == "rejected"
    assert "no capture time in the path" in result.quarantine[0]["reason"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("prod/2026-11-20T0910Z/x", dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)),
        ("prod/2026-11-20T091005Z/x", dt.datetime(2026, 11, 20, 9, 10, 5, tzinfo=dt.UTC)),
        ("prod/20261120T091005Z/x", dt.datetime(2026, 11, 20, 9, 10, 5, tzinfo=dt.UTC)),
        ("prod/2026-11-20T09:10:00Z/x", dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)),
        ("prod/2026-11-20T09:10:00+02:00/x", dt.datetime(2026, 11, 20, 7, 10, tzinfo=dt.UTC)),
        (
            "prod/logs/broker-3/server.log.2026-11-20-09",
            dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC),
        ),
        ("prod/logs/server.log", None),
    ],
)
def test_capture_time_from_the_path(text, expected):
    assert parse_timestamp(text) == expected


def test_murmur2_matches_kafkas_test_vectors():
    # clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java
    assert murmur2(b"21") == -973932308
    assert murmur2(b"foobar") == -790332482
    assert murmur2(b"a-little-bit-long-string") == -985981536
    assert murmur2(b"a-little-bit-longer-string") == -1486304829
    assert murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971
    assert murmur2(b"abc") == 479470107


OFFSETS_39 = OFFSETS_36.replace("\n\nConsumer group 'audit-archiver' has no active members.\n", "")


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        (  # a CLIENT-ID, shortened
            "\nGROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID"
            "\ng t 0 10 12 2 c-1 /h client-one\n",
            4,
        ),
        ("\nGROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS\ng k:9092 (1) range Stable 12\n", 1),
        ("Topic: t\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"
         "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n", 2),
        ("\nGROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS\ng c-1 /h client-one 12\n", 1),
    ],
    ids=["offsets", "state", "topics", "members"],
)  # fmt: skip
def test_a_last_line_cut_inside_its_last_value_is_quarantined(text, cut):
    """Given a view cut inside its last value (`#MEMBERS 12` read as 1, `Isr: 1,2` as
    1), with no line end, Then that line's rows are quarantined, not stored shortened;
    the same text with its line end is read whole. Expected: one quarantined line, the
    reason naming the missing line end."""
    whole = parse(text)
    cut_text = text[: -1 - cut]
    result = parse(cut_text)
    last = len(cut_text.split("\n"))
    assert [q["line_number"] for q in result.quarantine] == [last]
    assert result.quarantine[0]["reason"].startswith("last line without its line end")
    assert result.row_count == whole.row_count - 1


def test_the_3_9_offsets_view_keeps_its_last_row_when_the_file_shows_the_layout():
    """Given 3.8/3.9's offsets view (every row printed as "\\n" + row: a block's header
    right after the previous row, no final newline), Then its last row is read; one
    block alone cannot be told from a cut file and its last row is quarantined, the
    reason saying why. Expected: 2 rows; 1 row and 1 quarantined line."""
    blocks = OFFSETS_39.rstrip("\n")
    assert "\n\nGROUP" not in blocks.lstrip("\n")
    assert [r["group_id"] for r in rows(parse(blocks), "offsets")] == [
        "clickstream-enricher",
        "audit-archiver",
    ]
    one = blocks[: blocks.index("\nGROUP  ", 1)]
    alone = parse(one)
    assert rows(alone, "offsets") == []
    assert "a 3.8/3.9 offsets view of one group ends so too" in alone.quarantine[0]["reason"]


# Kafka 3.9.2's `--describe --offsets --all-groups` on the live lab, cut to three groups:
# the groups rebalancing print only their warning, and a block's last row is followed by
# the next group's warning, not by a header (the blocks never touch).
OFFSETS_392_REBALANCING = (
    "\nWarning: Consumer group 'lab-coop' is rebalancing.\n"
    "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  "
    "           CONSUMER-ID                                        HOST            CLIENT-ID"
    "\nlab-rdkafka     clicks          2          42              46              4    "
    "           rdkafka-1c0a                                        /127.0.0.1      lab-rdkafka-1"
    "\nWarning: Consumer group 'lab-roundrobin' is rebalancing.\n"
    "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  "
    "           CONSUMER-ID                                        HOST            CLIENT-ID"
    "\nlab-stopped     audit           2          76              82              6    "
    "           lab-stopped-1-0784                                  /127.0.0.1      lab-stopped-1"
)


def test_the_3_9_offsets_view_shows_its_layout_by_a_warning_after_a_row():
    """Given 3.9.2's offsets view where every block is followed by a rebalancing group's
    warning (live lab), Then the warning right after a row shows the "\\n" + row layout
    and the last row, ending without a newline as printed, is read. Expected: both
    rows, nothing quarantined."""
    result = parse(OFFSETS_392_REBALANCING)
    assert result.quarantine == []
    assert [r["client_id"] for r in rows(result, "offsets")] == ["lab-rdkafka-1", "lab-stopped-1"]


def test_a_json_line_whole_without_its_line_end_is_read():
    """A JSON line ends with its closing brace (JSON Lines allows a last line without
    a line end); one cut short is not JSON and is quarantined as such."""
    line = '{"group_id": "g", "state": "Empty", "members": []}'
    path = "c/exports/2026-11-20T0910Z/g.jsonl"
    assert len(rows(parse(line, path), "group_states")) == 1
    cut = parse(line[:-3], path)
    assert [q["reason"][:31] for q in cut.quarantine] == ["invalid snapshot: not JSON: Exp"]


def test_a_lone_surrogate_in_a_snapshot_quarantines_it_whole():
    """Given a snapshot whose second member's client_id holds the JSON escape \\udc80
    (no Unicode text holds a lone surrogate), Then no row of the snapshot is stored:
    neither its state, its other member nor its offsets. Expected: one quarantined
    line naming the escape and the key."""
    text = (
        '{"group_id": "g", "state": "Stable", "members": [{"member_id": "m1", "client_id":'
        ' "c-1"}, {"member_id": "m2", "client_id": "c-2\\udc80"}], "offsets": [{"topic":'
        ' "t", "partition": 0, "current_offset": 1, "log_end_offset": 2}]}\n'
    )
    result = parse(text, "c/exports/2026-11-20T0910Z/g.jsonl")
    assert result.row_count == 0
    [quarantined] = result.quarantine
    assert quarantined["reason"] == "invalid snapshot: client_id holds a lone surrogate \\udc80"
