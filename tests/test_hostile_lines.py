"""Issue 36, hostile lines (pure, no Spark): trailing bytes on log lines, CR-only line
endings, ids holding `;`, `,` and `:`, values Kafka never prints (`generation 1.0`, a
GROUP of `-`, an epoch `five`) and NUL. Each case is parsed as written, or its line is
quarantined with a reason; never dropped without a word, never stored changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet_rebalance.capture.coordinator_log import NO_FACT, UNMATCHED_GROUP_LINE
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS, ParseResult
from fleet_rebalance.replay.generations import group_generations
from fleet_rebalance.replay.log_causes import reason_cause

SAMPLE = Path(__file__).resolve().parent / "data" / "fleet_v1"
EAST = "prod-east/captures/2026-11-20T0500Z/"
LAB = "lab/captures/2026-11-19T2200Z/"
SAMPLE_LOG = "prod-east/logs/broker-3/server.log.2026-11-20-02"
LOG = "prod-east/logs/broker-3/server.log"
OLD = "(kafka.coordinator.group.GroupCoordinator)"
STABILIZED = (
    "[2026-11-20 02:35:03,800] INFO [GroupCoordinator 3]: Stabilized group g generation 7 "
    "(__consumer_offsets-41) with 4 members " + OLD
)
MEMBERS_4X = (
    "GROUP            CONSUMER-ID            HOST            CLIENT-ID       #PARTITIONS     "
    "CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT"
)


def parse(relative: str, text: str | bytes) -> ParseResult:
    data = text.encode() if isinstance(text, str) else text
    result = parse_capture(relative, data)
    assert result.reconciles(), result.reconciliation()
    return result


def events(result: ParseResult) -> list[dict]:
    """The event rows without the stored line (which keeps the file's bytes)."""
    return [
        {k: v for k, v in row.items() if k != "line"}
        for row in result.rows.get(COORDINATOR_EVENTS, [])
    ]


def sample(relative: str) -> str:
    return (SAMPLE / relative).read_text()


def member_row(group: str = "g", client: str = "c-1", epoch: str = "5", target: str = "5") -> str:
    return (
        f"{group:<16} Q7K_qda8THGpKHzSy-UQ8A /10.0.0.1       {client:<15} 2               "
        f"{epoch:<15} orders:0,1           {target:<15} orders:0,1"
    )


# -- 1. trailing whitespace, trailing garbage, a cut-off last line -----------------------


@pytest.mark.parametrize(
    "tail", [" ", "\t", "   ", " \t "], ids=["space", "tab", "3 spaces", "mixed"]
)
def test_a_log_event_line_with_trailing_whitespace_is_parsed(tail):
    """Given the Stabilized line of issue 36 ending in blanks,
    Then it is parsed. Expected: the event, as from the line without them; the stored
    line is the line as in the file."""
    result = parse(LOG, STABILIZED + tail + "\n")
    [row] = result.rows[COORDINATOR_EVENTS]
    assert (row["event"], row["group_id"], row["generation"]) == ("stabilized", "g", 7)
    assert row["line"] == STABILIZED + tail
    assert result.quarantine == []


def test_a_server_log_whose_lines_end_in_a_space_gives_the_clean_events():
    """Given the sample's broker-3 log with one space after every line,
    Then it is parsed. Expected: the same events as the clean copy (21 and more)."""
    clean = sample(SAMPLE_LOG)
    spaced = "".join(line + " \n" for line in clean.splitlines())
    want = events(parse(SAMPLE_LOG, clean))
    assert len(want) >= 21
    assert events(parse(SAMPLE_LOG, spaced)) == want


@pytest.mark.parametrize(
    "line",
    [
        STABILIZED + "xyz",
        STABILIZED + " xyz",
        STABILIZED + " (x)",
        STABILIZED + ")",
        STABILIZED[:-1],  # cut in the logger
        STABILIZED[: STABILIZED.index(" with 4")],  # cut before the logger
        STABILIZED[: STABILIZED.index("generation 7") + 10],  # cut in the message
    ],
    ids=["garbage", "word", "second logger", "paren", "cut logger", "cut message", "cut word"],
)
def test_a_coordinator_line_with_trailing_garbage_or_cut_off_is_quarantined(line):
    """Given an event line with text after its logger, or cut off (the last line of a
    file being written, without its newline),
    Then it is parsed. Expected: the line quarantined with a reason that says so; never
    structural, never counted as a line without a fact."""
    result = parse(LOG, STABILIZED + "\n" + line)
    assert len(result.rows[COORDINATOR_EVENTS]) == 1
    [quarantined] = result.quarantine
    assert quarantined["line_number"] == 2 and quarantined["line"] == line
    assert quarantined["reason"].startswith("coordinator line that does not end with its (logger)")
    assert NO_FACT not in result.notes


def test_a_cut_off_line_of_another_logger_stays_structural():
    """Given a cut-off line of a logger other than the coordinator's,
    Then it is parsed. Expected: structural (it holds no membership fact)."""
    line = "[2026-11-20 02:35:04,000] INFO [KafkaServer id=3] started (kafka.server.Kaf"
    result = parse(LOG, STABILIZED + "\n" + line)
    assert result.quarantine == [] and result.structural == 1


# -- 3. CR-only and CRLF line endings in every text format ------------------------------

CAPTURES = {
    "offsets": EAST + "consumer-groups-offsets.txt",
    "members": EAST + "consumer-groups-members.txt",
    "members 4.x": LAB + "consumer-groups-members.txt",
    "state": EAST + "consumer-groups-state.txt",
    "topics": EAST + "topics.txt",
    "log": SAMPLE_LOG,
}


def _stored(result: ParseResult) -> dict[str, list[dict]]:
    tables = {*result.rows, *result.batches}
    return {table: result.records(table) for table in sorted(tables)}


@pytest.mark.parametrize("ending", ["\r", "\r\n"], ids=["CR only", "CRLF"])
@pytest.mark.parametrize("relative", CAPTURES.values(), ids=CAPTURES.keys())
def test_cr_only_and_crlf_line_endings_are_line_endings(relative, ending):
    """Given a capture of each text format written with CR-only (or CRLF) line endings,
    Then it is parsed. Expected: the same line count, rows, quarantine and structural
    lines as the `\\n` file."""
    text = sample(relative)
    want = parse(relative, text)
    got = parse(relative, text.replace("\n", ending))
    assert (got.kind, got.status, got.reconciliation()) == (
        want.kind,
        want.status,
        want.reconciliation(),
    )
    assert got.row_count == want.row_count > 0
    assert _stored(got) == _stored(want)
    assert got.quarantine == want.quarantine


def test_a_cr_only_topics_capture_keeps_every_row():
    """Given issue 36's topics capture with CR-only line endings,
    Then it is parsed. Expected: one row per partition line, not '1 lines = 0 parsed'."""
    text = sample(CAPTURES["topics"])
    result = parse(CAPTURES["topics"], text.replace("\n", "\r"))
    partitions = sum(1 for line in text.splitlines() if "Partition: " in line)
    assert result.lines == len(text.splitlines())
    assert len(result.rows["topic_partitions"]) == partitions > 0


def test_a_cr_only_jsonl_export_keeps_every_snapshot():
    """Given a jsonl export with CR-only line endings, Then every snapshot is read."""
    snapshot = {"group_id": "g", "captured_at": "2026-11-20T09:10:00Z", "members": []}
    text = "\r".join(json.dumps({**snapshot, "group_id": g}) for g in ("a", "b", "c")) + "\r"
    result = parse("prod-east/exports/2026-11-20T0910Z/groups.jsonl", text)
    assert [r["group_id"] for r in result.rows["group_states"]] == ["a", "b", "c"]


# -- 4. ids holding `;`, `,` and `:` keep their rebalance cause ---------------------------


@pytest.mark.parametrize(
    ("reason", "cause", "members"),
    [
        (
            "removing member consumer-a;b-7-946e on heartbeat expiration",
            "session_timeout",
            ("consumer-a;b-7-946e",),
        ),
        (
            "removing member c;1,2:3-946e on heartbeat expiration.",
            "session_timeout",
            ("c;1,2:3-946e",),
        ),
        (
            "Adding new member consumer-a;b-1-946e with group instance id None; client reason: "
            "not provided",
            "scale_out",
            ("consumer-a;b-1-946e",),
        ),
        (
            "Removing member a;b-2-946e on LeaveGroup; client reason: consumer poll timeout has "
            "expired.",
            "poll_timeout",
            ("a;b-2-946e",),
        ),
        ("Leader a;b:1-946e re-joining group during Stable", "leader_rejoin", ("a;b:1-946e",)),
        (
            "explicit `LeaveGroup` request for (a;b-1-946e, c,d-2-946e) members.",
            "scale_in",
            ("a;b-1-946e", "c,d-2-946e"),
        ),
    ],
)
def test_member_ids_with_separators_keep_their_cause(reason, cause, members):
    """Given a reason naming a member id that holds `;`, `,` or `:` (a client.id may:
    only blanks cannot be in an id),
    Then it is read. Expected: its cause and the whole member ids, split on `; client
    reason: ` only (KIP-800), never on a bare `;`."""
    reading = reason_cause(reason)
    assert (reading.cause, reading.members) == (cause, members)


def test_session_timeouts_of_a_group_named_with_a_semicolon():
    """Given a 3.x log of group `pay;ments` whose member's session expired,
    Then its generations are read. Expected: session_timeout, the member removed."""
    member = "consumer-pay;ments-1-0f2ab7c4-6d1e-4c55-9f0e-7f0c8d7c9a11"
    prefix = "INFO [GroupCoordinator 3]:"
    text = "".join(
        f"[2026-11-20 02:{mm},000] {prefix} {message} {OLD}\n"
        for mm, message in [
            ("40:00", f"Member {member} in group pay;ments has failed, removing it from the group"),
            (
                "40:00",
                "Preparing to rebalance group pay;ments in state PreparingRebalance with old "
                f"generation 4 (__consumer_offsets-3) (reason: removing member {member} on "
                "heartbeat expiration)",
            ),
            (
                "40:03",
                "Stabilized group pay;ments generation 5 (__consumer_offsets-3) with 1 members",
            ),
        ]
    )
    [generation] = group_generations(parse(LOG, text).rows[COORDINATOR_EVENTS])
    assert generation.cause()[0] == "session_timeout"
    assert generation.reading.members == (member,)
    assert generation.removed == {member}


# -- 5. values stored other than written --------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Assignment received from leader m-1 for group g for generation 1.0. The group has 1 "
        "members, 0 of which are static.",
        "Stabilized group g generation 1.0 (__consumer_offsets-41) with 4 members",
        "Group g with generation 1.0 is now empty (__consumer_offsets-41)",
        "Preparing to rebalance group g in state PreparingRebalance with old generation 1.0 "
        "(__consumer_offsets-41) (reason: removing member m-1 on heartbeat expiration)",
    ],
    ids=["assignment", "stabilized", "empty", "prepare"],
)
def test_a_generation_spelled_1_0_is_quarantined(message):
    """Given a coordinator line whose generation is `1.0`,
    Then it is parsed. Expected: quarantined as no integer, never stored as 1."""
    line = f"[2026-11-20 02:35:03,800] INFO [GroupCoordinator 3]: {message} {OLD}"
    result = parse(LOG, line + "\n")
    assert COORDINATOR_EVENTS not in result.rows
    assert [q["reason"] for q in result.quarantine] == ["generation is not a number: '1.0'"]


def test_a_generation_with_the_new_coordinators_final_period_is_still_read():
    """Given the new coordinator's `Stabilized group g generation 7 with 4 members.`,
    Then it is parsed. Expected: generation 7 (the period ends the sentence)."""
    line = (
        "[2026-11-20 02:35:03,800] INFO [GroupCoordinator id=3 topic=__consumer_offsets "
        "partition=41] Stabilized group g generation 7. "
        "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
    )
    [row] = parse(LOG, line + "\n").rows[COORDINATOR_EVENTS]
    assert row["generation"] == 7


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk path", "per-line path"])
def test_a_members_row_whose_group_is_a_dash_is_quarantined(bulk):
    """Given a 4.x members --verbose row whose GROUP is `-` (the tool's no-value mark),
    on the bulk path (a plain row) and the per-line path (a row with a non-ASCII host),
    Then it is parsed. Expected: quarantined with a reason, never stored as group `-`."""
    row = member_row(group="-")
    if not bulk:
        row = row.replace("/10.0.0.1", "/10.0.0.é")
    result = parse(LAB + "consumer-groups-members.txt", f"\n{MEMBERS_4X}\n{member_row()}\n{row}\n")
    assert [r["group_id"] for r in result.records("members")] == ["g"]
    assert [(q["line_number"], q["reason"]) for q in result.quarantine] == [
        (4, "GROUP is '-', the tool's placeholder for no value: no group id")
    ]


def test_an_offsets_row_whose_group_is_a_dash_is_quarantined():
    """Given an offsets row whose GROUP is `-`, Then it is quarantined, not stored."""
    header = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID"
    result = parse(
        EAST + "consumer-groups-offsets.txt",
        f"\n{header}\ng orders 0 5 9 4 c-1 /10.0.0.1 c\n- orders 1 5 9 4 c-1 /10.0.0.1 c\n",
    )
    assert [r["group_id"] for r in result.records("offsets")] == ["g"]
    assert [q["line_number"] for q in result.quarantine] == [4]


@pytest.mark.parametrize(
    ("epoch", "target", "reason"),
    [
        ("five", "5", "CURRENT-EPOCH is not a number: 'five'"),
        ("5", "five", "TARGET-EPOCH is not a number: 'five'"),
        ("-0", "5", "CURRENT-EPOCH is not a number: '-0'"),
        ("5", "2147483648", "TARGET-EPOCH '2147483648' does not fit a 32-bit integer column"),
    ],
)
def test_a_members_row_with_a_non_numeric_epoch_is_quarantined(epoch, target, reason):
    """Given a 4.x members --verbose row whose CURRENT-EPOCH or TARGET-EPOCH is no int,
    Then it is parsed. Expected: quarantined with the reason (as a bad #PARTITIONS is);
    `-` (a classic group's epochs) and numbers are read."""
    rows = [member_row(), member_row(epoch="-", target="-"), member_row(epoch=epoch, target=target)]
    result = parse(
        LAB + "consumer-groups-members.txt", "\n" + "\n".join([MEMBERS_4X, *rows]) + "\n"
    )
    assert len(result.records("members")) == 2
    assert [(q["line_number"], q["reason"]) for q in result.quarantine] == [(5, reason)]


# -- 7. NUL -------------------------------------------------------------------------------


def test_a_nul_in_a_members_client_id_is_quarantined():
    """Given a members row whose CLIENT-ID holds a NUL,
    Then it is parsed. Expected: quarantined with the reason, never stored verbatim."""
    row = member_row(client="c\x00-1")
    result = parse(LAB + "consumer-groups-members.txt", f"\n{MEMBERS_4X}\n{member_row()}\n{row}\n")
    assert [r["client_id"] for r in result.records("members")] == ["c-1"]
    assert [(q["line_number"], q["reason"]) for q in result.quarantine] == [
        (4, "control character '\\x00' in a row (Kafka prints none)")
    ]


def test_a_nul_in_an_offsets_client_id_is_quarantined():
    """Given an offsets row whose CLIENT-ID (the free-text last column) holds a NUL,
    Then it is quarantined, not stored."""
    header = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID"
    result = parse(
        EAST + "consumer-groups-offsets.txt",
        f"\n{header}\ng orders 0 5 9 4 c-1 /10.0.0.1 c\x00x\n",
    )
    assert result.records("offsets") == []
    assert "control character" in result.quarantine[0]["reason"]


def test_a_nul_in_a_jsonl_client_id_is_quarantined():
    """Given a jsonl snapshot whose client_id is `c\\u0000x` (valid JSON),
    Then the snapshot is quarantined with the reason."""
    snapshot = {
        "group_id": "g",
        "captured_at": "2026-11-20T09:10:00Z",
        "members": [{"member_id": "m-1", "client_id": "c\x00x"}],
    }
    result = parse("prod-east/exports/2026-11-20T0910Z/groups.jsonl", json.dumps(snapshot) + "\n")
    assert result.rows == {}
    assert result.quarantine[0]["reason"] == (
        "invalid snapshot: client_id holds control character '\\x00'"
    )


@pytest.mark.parametrize(
    "line",
    [
        STABILIZED.replace("group g ", "group g\x00 "),
        STABILIZED.replace("Stabilized group", "Stabilized\x00group"),
        STABILIZED.replace("GroupCoordinator)", "Group\x00Coordinator)"),
    ],
    ids=["in the group", "between words", "in the logger"],
)
def test_a_nul_in_a_log_line_is_quarantined(line):
    """Given a coordinator event line holding a NUL,
    Then it is parsed. Expected: the line quarantined with the reason; never an event
    with the NUL in its group, never a 'matches no pattern' count."""
    result = parse(LOG, STABILIZED + "\n" + line + "\n")
    assert len(result.rows[COORDINATOR_EVENTS]) == 1
    assert [(q["line_number"], q["reason"]) for q in result.quarantine] == [
        (2, "control character '\\x00' in a coordinator log line")
    ]
    assert UNMATCHED_GROUP_LINE not in result.notes


# -- found by benchmarks/fuzz.py: a state header with a damaged column -------------------

STATE_HEADER = (
    "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS"
)
STATE_ROW = "h               kafka-3:9092  (3)         -                    Empty           0"


def test_a_state_header_with_a_damaged_column_says_no_group_type():
    """Given: a consumer tool's state view whose ASSIGNMENT-STRATEGY lost a byte (fuzz
    flip_byte) and a 3.8 row with two spaces before `(3)`. Then: the row is kept by its
    columns but its group is not called a share group (the layout no longer says)."""
    damaged = STATE_HEADER.replace("STRATEGY", "ST\u00d2ATEGY")
    result = parse(EAST + "consumer-groups-state.txt", f"\n{damaged}\n{STATE_ROW}\n")
    assert [(r["group_id"], r["group_type"]) for r in result.rows["group_states"]] == [("h", None)]
    clean = parse(EAST + "consumer-groups-state.txt", f"\n{STATE_HEADER}\n{STATE_ROW}\n")
    assert [r["group_type"] for r in clean.rows["group_states"]] == [None]


def test_the_share_tools_plain_state_view_is_still_a_share_group():
    header = "GROUP           COORDINATOR (ID)          STATE           #MEMBERS"
    row = "s               kafka-3:9092  (3)         Stable          2"
    result = parse(EAST + "consumer-groups-state.txt", f"\n{header}\n{row}\n")
    assert [r["group_type"] for r in result.rows["group_states"]] == ["share"]
