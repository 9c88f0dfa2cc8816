"""Share groups, streams groups and the group lists in ingest (issue 33 item 1).

The captures under tests/data/share_streams/ are printed with the tools' own printf
formats of the release in their name (docs/formats-share-streams.md): each parses with
no quarantined line, into the bronze tables with their group type. No Spark."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches
from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.capture.result import ParseResult
from fleet_rebalance.capture.schemas import TABLES
from fleet_rebalance.capture.share_streams import RowProblem, parse_tasks

DATA = Path(__file__).resolve().parent / "data" / "share_streams"
DAY = dt.date(2026, 11, 20)
CAPTURES = sorted(p.name for p in DATA.glob("*.txt"))  # *.json: the live lab's ground truth
KINDS = {"offsets": "offsets", "members": "members", "state": "group_states", "list": None}


def parse(name: str, text: str | None = None) -> ParseResult:
    data = (DATA / name).read_bytes() if text is None else text.encode()
    return parse_capture(f"lab/2026-11-20T0910Z/{name}", data)


def rows(name: str, table: str) -> list[dict]:
    """A table's rows of one capture, every bronze column (bulk rows lack the new ones)."""
    return [{c: r.get(c) for c in TABLES[table].names} for r in parse(name).records(table)]


def test_there_is_a_capture_of_every_view():
    """Given the fixture directory, Then it holds each view of both tools and the lists,
    each named with the Kafka release whose source printed it."""
    for view in (
        "share_offsets_4.1",
        "share_offsets_verbose_4.1",
        "share_offsets_4.2",
        "share_offsets_verbose_4.2",
        "share_members_4.2",
        "share_members_verbose_4.2",
        "share_state_4.2",
        "share_state_verbose_4.2",
        "streams_offsets_4.1",
        "streams_offsets_verbose_4.2",
        "streams_members_4.1",
        "streams_members_verbose_4.2",
        "streams_state_4.1",
        "streams_members_4.1-dev",
        "streams_members_verbose_4.1-dev",
        "streams_offsets_verbose_4.1-dev",
        "streams_state_verbose_4.3",
        "streams_state_4.4",
        "streams_state_verbose_4.4",
        "groups_list_4.2",
        "consumer_groups_list_type_4.2",
        "consumer_groups_list_type_state_4.2",
    ):
        assert f"{view}.txt" in CAPTURES


@pytest.mark.parametrize("name", CAPTURES)
def test_every_capture_parses_without_quarantine(name):
    """Given a capture of a new view, Then it is recognised by its header (not refused as
    unknown), every line is a row or structural, none quarantined, none a failure."""
    result = parse(name)
    view = name.split("_")[1] if name.startswith(("share", "streams")) else "state"
    view = "state" if view == "list" else view  # `--list --state`: one row per group
    assert result.kind == view
    assert result.status == "ok", result.quarantine
    assert result.quarantined_lines == 0, result.quarantine
    assert result.reconciles()
    assert result.row_count > 0


def test_share_offsets_keep_start_offset_apart_from_committed_offsets():
    """Given 4.2's share offsets (START-OFFSET, LAG), Then START-OFFSET goes to
    start_offset, current_offset and log_end_offset stay null, `-` is null, and the
    rows say share; 4.1's layout without LAG gives the same rows with lag null."""
    got = rows("share_offsets_verbose_4.2.txt", "offsets")
    assert [
        (r["group_id"], r["topic"], r["partition"], r["start_offset"], r["lag"]) for r in got
    ] == [
        ("inventory-share", "inventory", 0, 1200, 4),
        ("inventory-share", "inventory", 1, None, None),
        ("inventory-share", "inventory", 2, 998, 0),
        ("payments-workers", "payments.v2", 0, 55012, 120),
        ("payments-workers", "payments.v2", 1, 54998, 131),
    ]
    assert {(r["current_offset"], r["log_end_offset"], r["group_type"]) for r in got} == {
        (None, None, "share")
    }
    old = rows("share_offsets_4.1.txt", "offsets")
    assert [r["start_offset"] for r in old] == [r["start_offset"] for r in got]
    assert {r["lag"] for r in old} == {None}


def test_share_members_verbose_say_share_and_keep_an_empty_member():
    """Given --members --verbose of share groups, Then rows carry the KIP-1099
    assignment and group_type share, a member with no partitions (ASSIGNMENT printed
    empty) is a row with an empty assignment, and the Dead/Empty messages are
    structural. The plain layout is the consumer tool's too: group_type stays null."""
    got = rows("share_members_verbose_4.2.txt", "members")
    assert {r["group_type"] for r in got} == {"share"}
    assert got[2]["assignment"] == [
        {"topic": "audit", "partition": 0},
        {"topic": "inventory", "partition": 2},
    ]
    assert (got[-1]["consumer_id"], got[-1]["partition_count"], got[-1]["assignment"]) == (
        "k2m9Xr1YQPe0S3q4T5u6vw",
        0,
        [],
    )
    plain = rows("share_members_4.2.txt", "members")
    assert [r["assignment"] for r in plain] == [r["assignment"] for r in got[:3]]
    assert {r["group_type"] for r in plain} == {None}


def test_share_and_streams_state_rows_say_their_type():
    """Given the share and streams --state views, Then the share tool's rows (two
    spaces before `(id)`, or ASSIGNMENT-EPOCH) say share, the streams tool's say
    streams, 4.4's ASSIGNOR is the strategy, and its empty ASSIGNOR is null."""
    for name in ("share_state_4.2.txt", "share_state_verbose_4.2.txt"):
        got = rows(name, "group_states")
        assert [(r["group_id"], r["state"], r["member_count"], r["group_type"]) for r in got] == [
            ("idle-share", "Empty", 0, "share"),
            ("inventory-share", "Stable", 3, "share"),
        ]
        assert got[1]["coordinator_host"] == "kafka-2.lab.internal:9092"
        assert got[1]["coordinator_id"] == 2
    for name in ("streams_state_4.2.txt", "streams_state_verbose_4.3.txt"):
        got = rows(name, "group_states")
        assert [(r["state"], r["group_type"]) for r in got] == [
            ("Stable", "streams"),
            ("Empty", "streams"),
            ("NotReady", "streams"),
        ]
    got = rows("streams_state_verbose_4.4.txt", "group_states")
    assert [r["assignment_strategy"] for r in got] == ["sticky", None, "sticky"]
    assert [r["member_count"] for r in got] == [3, 0, 2]


def test_streams_offsets_lag_and_commits():
    """Given streams offsets, Then OFFSET-LAG is the lag; --verbose adds the commit and
    the log end, and a partition without a commit keeps current_offset null."""
    plain = rows("streams_offsets_4.1.txt", "offsets")
    assert [(r["topic"], r["partition"], r["lag"]) for r in plain][:3] == [
        ("orders", 0, 8),
        ("orders", 1, 0),
        ("orders", 2, 77),
    ]
    verbose = rows("streams_offsets_verbose_4.2.txt", "offsets")
    assert [(r["current_offset"], r["log_end_offset"], r["lag"]) for r in verbose] == [
        (10452, 10460, 8),
        (9981, 9981, 0),
        (None, 77, 77),
        (5120, 5133, 13),
    ]
    assert {r["group_type"] for r in plain + verbose} == {"streams"}


def test_streams_members_keep_their_tasks():
    """Given streams --members (4.1 +) and --verbose, Then each member's tasks are
    (kind, subtopology, partition) rows, target tasks only in --verbose, a member with
    no task has none, and no topic partition is invented for them."""
    plain = rows("streams_members_4.1.txt", "members")
    first = plain[0]
    assert first["consumer_id"] == "JZ7cV4vPRB2Xlq0bY9ABCw"
    assert [(t["kind"], t["subtopology"], t["partition"]) for t in first["tasks"]] == [
        ("active", "0", 0),
        ("active", "0", 1),
        ("active", "1", 0),
        ("standby", "0", 2),
    ]
    assert plain[2]["tasks"] == []
    assert {(r["assignment"], r["partition_count"], r["group_type"]) for r in plain} == {
        (None, None, "streams")
    }
    verbose = rows("streams_members_verbose_4.2.txt", "members")
    assert [t["kind"] for t in verbose[2]["tasks"]] == ["target-active"]
    assert {t["kind"] for t in verbose[1]["tasks"]} == {
        "active",
        "warmup",
        "target-active",
        "target-standby",
    }


def test_the_pre_release_task_lines_give_the_same_tasks():
    """Given the pre-release layout (a header per member, then one `KIND-TASKS::` line
    per kind, target kinds in --verbose), Then each member gets the tasks the released
    ASSIGNMENTS column gives; its verbose offsets' empty LEADER-EPOCH is read as such."""
    for old, new in (
        ("streams_members_4.1-dev.txt", "streams_members_4.1.txt"),
        ("streams_members_verbose_4.1-dev.txt", "streams_members_verbose_4.2.txt"),
    ):
        got = [(r["consumer_id"], r["tasks"]) for r in rows(old, "members")]
        assert got == [(r["consumer_id"], r["tasks"]) for r in rows(new, "members")]
    lags = [r["lag"] for r in rows("streams_offsets_verbose_4.1-dev.txt", "offsets")]
    assert lags == [r["lag"] for r in rows("streams_offsets_4.1.txt", "offsets")]


def test_task_lines_that_fit_no_member_are_quarantined_and_cut_ones_noted():
    """Given a task line under the released layout, one out of order, and a member
    whose task lines were cut, Then the first two are quarantined with the reason and
    the cut member keeps its tasks with a note in the file's reason."""
    lines = (DATA / "streams_members_4.1-dev.txt").read_text().splitlines()
    cut = "\n".join([*lines[:3], *lines[6:], ""])  # first member: ACTIVE only
    result = parse("streams_members_4.1-dev.txt", cut)
    assert result.quarantined_lines == 0
    assert list(result.notes.values()) == [1]
    assert [t["kind"] for t in result.records("members")[0]["tasks"]] == ["active"] * 3
    swapped = "\n".join([*lines[:2], lines[3], lines[2], ""])
    result = parse("streams_members_4.1-dev.txt", swapped)
    assert [q["reason"] for q in result.quarantine] == [
        "STANDBY-TASKS line out of the tool's order (or repeated)"
    ]
    assert list(result.notes.values()) == [1]  # its STANDBY and WARMUP lines are missing
    released = (DATA / "streams_members_4.1.txt").read_text() + "ACTIVE-TASKS:: 0: [[1]] \n"
    result = parse("streams_members_4.1.txt", released)
    assert [q["reason"] for q in result.quarantine] == [
        "task line without a streams member row above it in its block"
    ]


def test_group_lists_give_the_type_of_every_group():
    """Given kafka-groups.sh --list and kafka-consumer-groups.sh --list --type --state,
    Then each group is a group_states row with its type (an empty or Unknown TYPE is
    null) and, where listed, its state."""
    got = rows("groups_list_4.2.txt", "group_states")
    assert [(r["group_id"], r["group_type"]) for r in got] == [
        ("orders-processor", "consumer"),
        ("billing-legacy", "classic"),
        ("inventory-share", "share"),
        ("orders-enricher", "streams"),
        ("connect-s3-sink", "classic"),
        ("old-broker-group", None),
    ]
    assert {(r["state"], r["coordinator_id"]) for r in got} == {(None, None)}
    listed = rows("consumer_groups_list_type_state_4.2.txt", "group_states")
    assert [(r["group_id"], r["group_type"], r["state"]) for r in listed] == [
        ("orders-processor", "consumer", "Stable"),
        ("billing-legacy", "classic", "Stable"),
        ("old-broker-group", None, "Empty"),
    ]


def test_damaged_rows_are_quarantined_with_a_reason():
    """Given damaged rows of the new views, Then each is quarantined with its reason:
    a task list out of the tool's order, a share LAG that is not a number, an unknown
    TYPE, and a streams lag that disagrees with its offsets."""
    cases = {
        "share_offsets_4.2.txt": (
            "GROUP           TOPIC           PARTITION  START-OFFSET  LAG\n"
            "g               t               0          10            x1\n",
            "LAG is not a number",
        ),
        "streams_members_4.1.txt": (
            "GROUP           MEMBER          PROCESS         CLIENT-ID       ASSIGNMENTS\n"
            "g               m1              p1              c1              "
            "STANDBY: 0:[1]; ACTIVE: 0:[0]; \n",
            "out of the tool's order",
        ),
        "groups_list_4.2.txt": (
            "GROUP                TYPE                 PROTOCOL            \n"
            "g1                   Fancy                consumer             \n",
            "unknown group TYPE",
        ),
        "streams_offsets_verbose_4.2.txt": (
            "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LEADER-EPOCH    "
            "LOG-END-OFFSET  OFFSET-LAG     \n"
            "g               t               0          10              -               15"
            "              4              \n",
            "disagrees",
        ),
    }
    for name, (text, reason) in cases.items():
        result = parse(name, text)
        assert result.quarantined_lines == 1, (name, result.quarantine)
        assert reason in result.quarantine[0]["reason"], result.quarantine


def test_share_and_streams_messages_are_structural_not_failures():
    """Given only the tools' Dead/Empty messages above a table, Then they are
    structural lines and the capture is ok (`Error: Streams group ...` is a message
    of printError, not a tool failure)."""
    text = (
        "\nError: Streams group 'clickstream-sessions' has no active members.\n"
        "GROUP                COORDINATOR (ID)              STATE                     #MEMBERS\n"
        "clickstream-sessions kafka-1.lab.internal:9092 (1) Empty                     0\n"
        "\nError: Share group 'gone' does not exist.\n"
    )
    result = parse("streams_state_4.2.txt", text)
    assert result.status == "ok" and result.quarantined_lines == 0
    assert (result.row_lines, result.structural) == (1, 5)


def test_parse_tasks_reads_the_tools_text():
    assert parse_tasks("") == []
    assert parse_tasks("ACTIVE: a:b:[3]; ") == [
        {"kind": "active", "subtopology": "a:b", "partition": 3}
    ]
    for text in ("ACTIVE: ", "0:[1]; ", "ACTIVE: 0:[]; ", "ACTIVE: 0:[01]; "):
        with pytest.raises(RowProblem):
            parse_tasks(text)


def test_bronze_batches_carry_the_new_columns():
    """Given one capture unit of share and streams files, Then the parse task's batches
    have the bronze schemas (group_type, start_offset, tasks last) and the summaries
    count the rows."""
    names = [
        "share_offsets_verbose_4.2.txt",
        "share_members_verbose_4.2.txt",
        "streams_members_verbose_4.2.txt",
        "streams_state_4.4.txt",
    ]
    at = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
    files = [
        {
            "relative": f"lab/2026-11-20T0910Z/{n}",
            "cluster": "lab",
            "captured_at": at,
            "group": None,
        }
        for n in names
    ]
    batches: dict[str, list[pa.RecordBatch]] = {}
    summaries = []
    for table, out in capture_batches(
        files, lambda f: (parse(f["relative"].rsplit("/", 1)[1]), None), DAY
    ):
        if table == FILE_REPORT:
            summaries.append(out)
        else:
            batches.setdefault(table, []).append(out)
    for table, parts in batches.items():
        for batch in parts:
            assert batch.schema.remove_metadata().equals(TABLES[table]), table
    assert TABLES["offsets"].names[-2:] == ["group_type", "start_offset"]
    assert TABLES["members"].names[-8:-5] == ["rebalancing", "group_type", "tasks"]
    assert TABLES["group_states"].names[-3] == "group_type"
    members = pa.Table.from_batches(batches["members"]).to_pylist()
    assert sorted({m["group_type"] for m in members}) == ["share", "streams"]
    assert all(s["reconciles"] and s["status"] == "ok" for s in summaries)


def test_jsonl_type_fills_group_type_in_every_table():
    """Given fleet-capture's jsonl with `type`, Then its group_states, members and
    offsets rows carry it; `unknown` or no type is null; an unknown word quarantines
    the snapshot with the reason."""
    snapshot = {
        "group_id": "orders",
        "type": "consumer",
        "state": "Stable",
        "members": [{"member_id": "m1", "assignment": [["orders", 0]]}],
        "offsets": [{"topic": "orders", "partition": 0, "current_offset": 1, "log_end_offset": 3}],
    }
    lines = [
        json.dumps(snapshot),
        json.dumps({**snapshot, "group_id": "old", "type": None}),
        json.dumps({**snapshot, "group_id": "bad", "type": "fancy"}),
    ]
    result = parse_capture("lab/2026-11-20T0910Z/groups.jsonl", "\n".join(lines).encode())
    for table in ("group_states", "members", "offsets"):
        assert [(r["group_id"], r["group_type"]) for r in result.records(table)] == [
            ("orders", "consumer"),
            ("old", None),
        ]
    assert len(result.quarantine) == 1
    assert "unknown group type 'fancy'" in result.quarantine[0]["reason"]
