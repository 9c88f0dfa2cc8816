"""Real captures that arrive damaged: tabs expanded to spaces, tool messages among the
rows, truncated rows, old layouts without a GROUP column, empty files. Each case parses,
or is quarantined with a reason naming the real problem; every file reconciles."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches
from fleet_rebalance.capture.tool_messages import CONSUMER_GROUP_MESSAGES, tool_error, tool_message

CAPTURE = "prod-east/captures/2026-11-20T0910Z/consumer-groups.txt"
TOPICS_CAPTURE = "prod-east/captures/2026-11-20T0910Z/topics.txt"
AT = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
PATH_HINT = (
    "no GROUP column in this layout and no group in the capture path "
    "(set capture.path_pattern with a (?P<group>...) part)"
)
FROM_MESSAGE = "rows without GROUP column attributed to the group the tool's message names:"
NOT_FETCHED = "tool could not fetch a committed offset (its row shows none)"


def parse(text: str, path: str = CAPTURE):
    result = parse_capture(path, text.encode("utf-8"))
    assert result.reconciles(), result.reconciliation()
    return result


def reasons(result) -> list[tuple[int | None, str]]:
    return [(q["line_number"], q["reason"]) for q in result.quarantine]


def values(result, table: str, *columns: str) -> list[tuple]:
    return [tuple(r[c] for c in columns) for r in result.records(table)]


# ------------------------------------------------------ kafka-topics.sh, tabs as spaces

# Every layout of FORMATS 2: TopicId, Elr/LastKnownElr (empty and N/A), a reassignment,
# MarkedForDeletion after Configs (whose values hold ':'), the pre-2.4 header.
TOPICS = (
    "Topic: orders\tTopicId: kD2lJ1sPQx2XbH6dVLFo2w\tPartitionCount: 2\tReplicationFactor: 3\t"
    "Configs: segment.bytes=1073741824,leader.replication.throttled.replicas=0:1\t"
    "MarkedForDeletion: true\n"
    "\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 2,1,3\tIsr: 1,3,2\tElr: \t"
    "LastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 3,2,1\tIsr: \tAdding Replicas: 4\t"
    "Removing Replicas: 1\tElr: N/A\tLastKnownElr: N/A\n"
    "Topic:legacy\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n"
    "\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n"
)
TOPIC_ROWS = [
    ("orders", "kD2lJ1sPQx2XbH6dVLFo2w", 0, 2, [2, 1, 3], [1, 3, 2], 2),
    ("orders", "kD2lJ1sPQx2XbH6dVLFo2w", 1, None, [3, 2, 1], [], 3),
    ("legacy", None, 0, 1, [1], [1], 5),
]
TOPIC_COLUMNS = ("topic", "topic_id", "partition", "leader", "replicas", "isr", "line_number")


@pytest.mark.parametrize("tabsize", [8, 4, 1])
def test_topics_with_tabs_expanded_to_spaces_parse_as_with_tabs(tabsize):
    """Given kafka-topics.sh --describe output whose tabs a terminal expanded to spaces,
    Then every line is read by its `Key: value` names, as with tabs.
    Expected: the same rows as the tab-separated original; headers structural; a note."""
    with_tabs = parse(TOPICS, TOPICS_CAPTURE)
    expanded = parse(TOPICS.expandtabs(tabsize), TOPICS_CAPTURE)
    assert values(with_tabs, "topic_partitions", *TOPIC_COLUMNS) == TOPIC_ROWS
    assert values(expanded, "topic_partitions", *TOPIC_COLUMNS) == TOPIC_ROWS
    assert (expanded.quarantine, expanded.structural) == ([], 2)
    assert expanded.notes == {"topics lines with spaces for tabs (read by their Key: names)": 5}
    assert with_tabs.notes == {}


def test_topics_without_tabs_keep_strict_values():
    """Given expanded lines with a bad number, a field Kafka never prints, a missing
    field, and the pre-2.4 message for a topic gone while described,
    Then numbers stay strict and a value that swallowed text is refused.
    Expected: exact reasons; the message is structural."""
    text = (
        "        Topic: t       Partition: 0    Leader: x       Replicas: 1     Isr: 1\n"
        "        Topic: t       Partition: 1    Leader: 1       Replicas: 1     Isr: 1  Foo: bar\n"
        "        Topic: t       Partition: 2    Leader: 1       Isr: 1\n"
        "        Topic: t       Partition: 3    Leader: 1       Replicas: 1,0x2 Isr: 1\n"
        "Topic gone doesn't exist!\n"
    )
    result = parse(text, TOPICS_CAPTURE)
    assert reasons(result) == [
        (1, "malformed partition line: Leader is not a number: 'x'"),
        (
            2,
            "malformed partition line: Isr value '1  Foo: bar' holds a blank "
            "(text after it that is no field)",
        ),
        (3, "malformed partition line: no 'Replicas' field"),
        (4, "malformed partition line: Replicas broker id is not a number: '0x2'"),
    ]
    assert result.structural == 1


def test_topics_tool_error_of_every_release_is_a_failed_capture():
    """Given `Error while executing topic command : ...` (all releases),
    Expected: a failed capture with the tool's message as the reason."""
    text = "Error while executing topic command : Topic 'x' does not exist as expected\n"
    result = parse_capture(TOPICS_CAPTURE, ("Topic: t\tPartitionCount: 1\n" + text).encode())
    assert result.status == "failed_capture"
    assert reasons(result) == [(2, "tool error: Topic 'x' does not exist as expected")]


# ------------------------------------------------------------------ tool messages

OWNER_HEADER = (
    "GROUP                          TOPIC                          PARTITION  CURRENT-OFFSET  "
    "LOG-END-OFFSET  LAG             OWNER"
)


def test_0_10_zookeeper_offset_message_between_rows_is_structural():
    """Given a 0.10.1 --zookeeper describe where the tool printed `Could not fetch offset
    from zookeeper ...` between the header and the rows (it still prints the row, with
    `unknown`), and `No broker for partition` where it left a row out,
    Then the first is structural with a note, the second quarantined as a tool message.
    Expected: no `PARTITION is not a number: 'fetch'`."""
    text = (
        f"{OWNER_HEADER}\n"
        "Could not fetch offset from zookeeper for group g1 partition [t,0] due to missing "
        "offset data in zookeeper.\n"
        "g1                             t                              0          unknown         "
        "9               unknown         none\n"
        "No broker for partition t-1\n"
        "g1                             t                              2          5               "
        "9               4               c_/10.0.0.1\n"
    )
    result = parse(text)
    assert values(result, "offsets", "group_id", "partition", "current_offset", "lag") == [
        ("g1", 0, None, None),
        ("g1", 2, 5, 4),
    ]
    assert reasons(result) == [
        (
            4,
            "tool message: No broker for partition t-1 (the tool printed no row for that "
            "partition)",
        )
    ]
    assert result.status == "ok"
    assert result.notes == {NOT_FETCHED: 1}


def test_0_10_2_zookeeper_errors_per_partition_are_not_a_failed_capture():
    """Given 0.10.2-1.1 --zookeeper output: the Note, `Error: Could not fetch offset ...`
    (printError, so `Error: `) before the table, then the table without GROUP column,
    Then the messages are structural, the capture is not failed, and the group the
    message names is the rows' group (the path names none).
    Expected: one row of g1; a note for each."""
    text = (
        "Note: This will only show information about consumers that use ZooKeeper (not "
        "those using the Java consumer API).\n"
        "\n"
        "Error: Could not fetch offset from zookeeper for group 'g1' partition '[t,0]' due "
        "to missing offset data in zookeeper.\n"
        "\n"
        "TOPIC                          PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG        "
        "CONSUMER-ID\n"
        "t                              0          -               9               -          "
        "g1_host-1-1\n"
    )
    result = parse(text)
    assert result.status == "ok" and result.quarantine == []
    assert values(result, "offsets", "group_id", "partition", "consumer_id") == [
        ("g1", 0, "g1_host-1-1")
    ]
    assert result.notes == {NOT_FETCHED: 1, f"{FROM_MESSAGE} 'g1'": 1}


def test_old_tool_failure_is_a_failed_capture():
    """Given 0.9-0.10.1's `Error while executing consumer group command <msg>` and the
    stack trace after it,
    Expected: a failed capture with the tool's message; the trace quarantined with it."""
    text = (
        f"{OWNER_HEADER}\n"
        "Error while executing consumer group command Timed out\n"
        "java.lang.RuntimeException: Timed out\n"
        "\tat kafka.admin.ConsumerGroupCommand$.main(ConsumerGroupCommand.scala:71)\n"
    )
    result = parse(text)
    assert result.status == "failed_capture"
    assert reasons(result) == [
        (2, "tool error: Timed out"),
        (3, "tool error stack trace"),
        (4, "tool error stack trace"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "Error: Consumer group 'g' does not exist.",
        "Error: The consumer group 'g' does not exist.",
        "Consumer group 'g' has no active members.",
        "Warning: Consumer group 'g' is rebalancing.",
        "Consumer group `g` does not exist or is rebalancing.",
        "Consumer group `g` is rebalancing.",
        "Note: This will not show information about old Zookeeper-based consumers.",
        "Note: This will only show information about consumers that use the Java consumer API "
        "(non-ZooKeeper-based consumers).",
        "The --new-consumer option is deprecated and will be removed in a future major release."
        "The new consumer is used by default if the --bootstrap-server option is provided.",
        "No topic available for consumer group provided",
        "Could not fetch offset from kafka for group g partition [t,0] due to "
        "kafka.common.NotCoordinatorForConsumerException.",
        "Error: Could not fetch offset from kafka for group 'g' partition '[t,0]' due to This "
        "is not the correct coordinator.",
        "Error: No broker for partition 't-0'",
    ],
)
def test_every_tool_message_is_a_message_not_a_tool_failure(line):
    """Given each message kafka-consumer-groups.sh prints among its tables (tool_messages.py
    lists the releases),
    Expected: recognised as a tool message, never as a failure of the tool."""
    assert tool_message(line) is not None
    assert tool_error(line) is None


def test_each_message_states_its_releases_and_what_it_means_for_rows():
    """Expected: one message only quarantines (it replaces a row); the others are
    structural, and each names the releases that print it."""
    assert all(m.releases for m in CONSUMER_GROUP_MESSAGES)
    assert [m.lost_row for m in CONSUMER_GROUP_MESSAGES if m.lost_row] == [
        "the tool printed no row for that partition"
    ]


@pytest.mark.parametrize(
    ("text", "structural"),
    [
        ("\nError: Consumer group 'gone' does not exist.\n", 2),
        ("Consumer group 'idle' has no active members.\n", 1),
        ("Topic gone doesn't exist!\n", 1),
    ],
)
def test_a_file_of_tool_messages_only_is_structural(text, structural):
    """Given a describe of a group the tool has no table for (no such group; Empty with
    no committed offsets), or of a topic deleted meanwhile (--zookeeper),
    Expected: status ok, every line structural, a note; not `unrecognised content`."""
    result = parse(text)
    assert (result.status, result.quarantine, result.structural) == ("ok", [], structural)
    assert result.notes == {"no table: only the tool's messages": 1}


# ---------------------------------------------------------------- truncated rows

STATE_HEADER = (
    "GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           "
    "#MEMBERS"
)


def test_truncated_state_row_names_the_missing_column_not_a_number():
    """Given a state row cut after STATE (`... range Stable`), one value short like an
    Empty group's row with its empty strategy,
    Then it is not read as an empty strategy (Stable groups have one): no shift.
    Expected: `missing column`, not `#MEMBERS is not a number: 'Stable'`; the Empty
    group's row with an empty strategy still parses."""
    text = (
        f"\n{STATE_HEADER}\n"
        "g1                        kafka-1:9092 (1)          range                Stable\n"
        "g2                        kafka-1:9092 (1)                               Empty"
        "           0\n"
        "g3                        kafka-1:9092 (1)          range\n"
    )
    result = parse(text)
    columns = "(GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS)"
    assert reasons(result) == [
        (3, f"missing column: 4 values for 5 columns {columns}"),
        (5, f"missing column: 3 values for 5 columns {columns}"),
    ]
    assert values(result, "group_states", "group_id", "assignment_strategy", "state") == [
        ("g2", None, "Empty")
    ]


def test_truncated_members_row_names_the_missing_column():
    text = (
        "\nGROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     \n"
        "g1              c-1             /10.0.0.1\n"
    )
    result = parse(text)
    assert reasons(result) == [
        (3, "missing column: 3 values for 5 columns (GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS)")
    ]


# ------------------------------------------- layouts without GROUP column (0.10.2-2.2)

OFFSETS_22_HEADER = (
    "TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     "
    "HOST            CLIENT-ID"
)
OFFSETS_22_ROW = (
    "orders          {p}          5               9               4               -               "
    "-               -"
)


def test_group_from_the_tools_message_when_the_file_names_one():
    """Given 1.1-2.2 offsets, members and state views of one group each, printed after
    `Consumer group 'x' has no active members.` / `Warning: ... is rebalancing.`, with
    no group in the path,
    Then the rows take the group the message names, in bulk and per line alike.
    Expected: every row of that group, nothing quarantined, a note."""
    offsets = (
        "Consumer group 'audit' has no active members.\n\n"
        f"{OFFSETS_22_HEADER}\n{OFFSETS_22_ROW.format(p=0)}\n"
        "orders          1          x               9               -               -        "
        "       -               -\n"
    )
    result = parse(offsets)
    assert values(result, "offsets", "group_id", "partition") == [("audit", 0)]
    assert reasons(result) == [(5, "CURRENT-OFFSET is not a number: 'x'")]
    assert result.notes == {f"{FROM_MESSAGE} 'audit'": 1}

    members = (
        "Warning: Consumer group 'pay' is rebalancing.\n\n"
        "CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT\n"
        "c-1             /10.0.0.1       c               2               orders(0,1)\n"
    )
    result = parse(members)
    assert values(result, "members", "group_id", "consumer_id", "partition_count") == [
        ("pay", "c-1", 2)
    ]
    state = (
        "Consumer group 'idle' has no active members.\n\n"
        "COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n"
        "kafka-1:9092 (1)                               Empty                0\n"
    )
    result = parse(state)
    assert values(result, "group_states", "group_id", "state", "member_count") == [
        ("idle", "Empty", 0)
    ]


def test_no_group_from_text_when_the_file_names_several_or_none():
    """Given a file naming two groups, a file naming none, and a file where the one
    group named is not the table's (a Stable group's table, then an Empty group's),
    Then only a block right below the message naming the file's one group takes it.
    Expected: the path hint for the others, exactly as before."""
    two = "".join(
        f"Consumer group '{g}' has no active members.\n\n{OFFSETS_22_HEADER}\n"
        f"{OFFSETS_22_ROW.format(p=0)}\n"
        for g in ("a", "b")
    )
    assert reasons(parse(two)) == [(4, PATH_HINT), (8, PATH_HINT)]
    none = f"\n{OFFSETS_22_HEADER}\n{OFFSETS_22_ROW.format(p=0)}\n"
    assert reasons(parse(none)) == [(3, PATH_HINT)]
    concatenated = (
        f"\n{OFFSETS_22_HEADER}\n{OFFSETS_22_ROW.format(p=0)}\n"
        f"Consumer group 'b' has no active members.\n\n{OFFSETS_22_HEADER}\n"
        f"{OFFSETS_22_ROW.format(p=1)}\n"
    )
    result = parse(concatenated)
    assert reasons(result) == [(3, PATH_HINT)]
    assert values(result, "offsets", "group_id", "partition") == [("b", 1)]


def test_no_group_from_text_under_an_unknown_column_nor_over_the_paths_group():
    """Given a header with a column Kafka never printed (a damaged one, or a layout
    this parser does not know: its rows may carry their group), and a path that names
    its group,
    Expected: that block keeps the hint; the path's group wins over the text."""
    unknown = (
        "Consumer group 'a' has no active members.\n\n"
        f"{OFFSETS_22_HEADER} GR0UP\n{OFFSETS_22_ROW.format(p=0)} a\n"
    )
    assert reasons(parse(unknown)) == [(4, PATH_HINT)]
    text = f"Consumer group 'a' has no active members.\n\n{OFFSETS_22_HEADER}\n" + (
        OFFSETS_22_ROW.format(p=0) + "\n"
    )
    result = parse_capture(
        "prod-east/captures/2026-11-20T0910Z/from-path.txt",
        text.encode(),
        path_pattern=r"^(?P<cluster>[^/]+)/.*/(?P<group>from-path)\.txt$",
    )
    assert values(result, "offsets", "group_id") == [("from-path",)]


# ------------------------------------------------------------------- line accounting


def summary_of(relative: str, data: bytes) -> dict:
    def parse_file(file: dict) -> tuple:
        return parse_capture(file["relative"], data), None

    files = [{"relative": relative, "cluster": "prod-east", "captured_at": AT, "group": None}]
    [summary] = [
        out for table, out in capture_batches(files, parse_file, AT.date()) if table == FILE_REPORT
    ]
    return summary


@pytest.mark.parametrize(
    ("data", "printed"),
    [
        (b"", "0 lines = 0 parsed + 0 quarantined + 0 structural"),
        (b"  \n\n", "2 lines = 0 parsed + 0 quarantined + 2 structural"),
    ],
)
def test_an_empty_file_reconciles_in_what_is_printed(data, printed):
    """Given an empty (or blank) capture file,
    Then it is a failed capture with one whole-file quarantine row that stands for no
    line: its blank lines are structural.
    Expected: the printed identity holds; the row is counted as a row, not as a line."""
    result = parse_capture(CAPTURE, data)
    assert (result.status, result.reconciliation(), result.reconciles()) == (
        "failed_capture",
        printed,
        True,
    )
    summary = summary_of(CAPTURE, data)
    assert summary["reconciles"]
    assert (summary["quarantined"], summary["quarantined_lines"]) == (1, 0)
    assert summary["file_quarantine"] == (
        "empty capture file (failed capture: a gap, not 'no groups')"
    )


def test_a_file_refused_whole_counts_all_its_lines_quarantined():
    """Given a capture refused whole (unrecognised content, 3 lines),
    Expected: `3 lines = 0 parsed + 3 quarantined + 0 structural`, one quarantine row."""
    result = parse_capture(CAPTURE, b"hello\nworld\n!\n")
    assert result.status == "rejected"
    assert result.reconciliation() == "3 lines = 0 parsed + 3 quarantined + 0 structural"
    assert len(result.quarantine) == 1 and result.reconciles()


def test_the_run_log_prints_the_identity_in_lines(caplog):
    """Given the summary of an empty file, Then ingest's accounting line holds as printed
    and names the whole-file row's reason."""
    from fleet_rebalance.pipeline.ingest import reconcile  # imports pyspark; runs no Spark

    summary = {**summary_of(CAPTURE, b""), "source_file": CAPTURE}
    with caplog.at_level(logging.INFO, logger=reconcile.log.name):
        reconcile.check_reconciliation([summary])
    assert (
        f"{CAPTURE} [unknown, failed_capture]: 0 lines = 0 parsed + 0 quarantined + 0 structural;"
        " 0 rows; whole file quarantined: empty capture file (failed capture: a gap, not "
        "'no groups')"
    ) in caplog.messages
