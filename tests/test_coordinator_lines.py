"""Broker-log membership lines of every Kafka line family (capture/coordinator_log/).

tests/data/broker_logs holds one log per family, each line as log4j prints it and each
membership message in its exact text from that family's GroupCoordinator.scala (1.x,
2.3 .. 2.8, 3.x old coordinator) or GroupMetadataManager / ClassicGroup (new
coordinator, 3.7 .. 4.x: KIP-848, classic, share and streams groups), between lines of
other loggers and stack traces. Next to each log, `<log>.events.tsv` lists the event
every membership line must give (`-` for no value). A docker-compose and a grep view of
two of the logs must give the same events.
"""

from __future__ import annotations

import csv
import datetime as dt
import logging
import random
import re
from pathlib import Path

import pytest

from fleet_rebalance.capture import store
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches
from fleet_rebalance.capture.coordinator_log import (
    NO_FACT,
    UNKNOWN_LINE,
    UNMATCHED_GROUP_LINE,
    is_log_line,
)
from fleet_rebalance.capture.coordinator_log.log4j import (
    LOG_LINES,
    line_prefix,
)
from fleet_rebalance.capture.coordinator_log.messages import EVENTS
from fleet_rebalance.capture.coordinator_log.reader import log4j_time
from fleet_rebalance.capture.parse import detect_kind, parse_capture
from fleet_rebalance.capture.result import COORDINATOR_EVENTS, OK, ParseResult

LOGS = Path(__file__).resolve().parent / "data" / "broker_logs"
DAY = dt.date(2026, 11, 20)
FAMILIES = {
    "1.x": "kafka-1.x-server.log",
    "2.3-2.8": "kafka-2.3-2.8-server.log",
    "3.x": "kafka-3.x-old-coordinator-server.log",
    "4.x": "kafka-4.x-new-coordinator-server.log",
}
# Lines of the coordinator loggers known to carry no membership or generation fact,
# per family (FORMATS 3; coordinator_log/messages.py KNOWN_NO_FACT).
NO_FACT_LINES = {"1.x": 9, "2.3-2.8": 23, "3.x": 13, "4.x": 36}
# An independent net: the words of membership messages, and the lines that carry them
# without recording a change (the rebalance is skipped, offsets were removed, a timer is
# ignored, a join is refused for being in the wrong state).
MEMBERSHIP_WORDS = re.compile(
    r"join|left|leaving|has failed|fenced|removed|Preparing to rebalance|Stabilized|Bumped"
    r"|is now empty|Assignment received|target assignment|Adding new static member"
    r"|known static member"
)
NOT_EVENTS = {
    "1.x": set(),
    "2.3-2.8": {11, 25, 43, 50, 54, 55},
    "3.x": {18, 35, 37, 44},
    "4.x": {41, 45, 69, 82, 84, 85},
}
# What timeline.py and the rest read; event names are values of coordinator_events.event.
VOCABULARY = {
    "prepare_rebalance",
    "stabilized",
    "assignment_received",
    "group_empty",
    "member_pending",
    "member_joined",
    "member_left",
    "member_failed",
    "member_fenced",
    "static_member_joined",
    "static_member_rejoined",
    "epoch_bumped",
    "target_assignment",
}


def parse_log(text: str, relative: str = "lab/logs/broker-9/server.log") -> ParseResult:
    return parse_capture(relative, text.encode())


def events(result: ParseResult) -> list[tuple]:
    return [
        (e["line_number"], e["event"], e["group_id"], e["generation"], e["member_id"], e["reason"])
        for e in result.rows.get(COORDINATOR_EVENTS, [])
    ]


def expected_events(name: str) -> list[tuple]:
    with (LOGS / name.replace(".log", ".events.tsv")).open(newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))

    def value(text: str) -> str | None:
        return None if text == "-" else text

    return [
        (
            int(row["line"]),
            row["event"],
            value(row["group_id"]),
            None if row["generation"] == "-" else int(row["generation"]),
            value(row["member_id"]),
            value(row["reason"]),
        )
        for row in rows
    ]


def accounted(result: ParseResult) -> bool:
    return result.lines == result.row_lines + len(result.quarantine) + result.structural


@pytest.mark.parametrize("family", FAMILIES)
def test_every_membership_line_of_a_family_is_its_event(family: str):
    """Given a family's broker log, Then each membership line gives the event its
    events.tsv names (type, group, generation or epoch, member, reason), every line is
    parsed or structural, and no coordinator line is left unmatched."""
    name = FAMILIES[family]
    result = parse_log((LOGS / name).read_text(), f"prod/logs/broker-9/{name}")
    assert events(result) == expected_events(name)
    assert result.status == OK and not result.quarantine and accounted(result)
    assert result.row_lines == len({line for line, *_ in expected_events(name)})
    assert dict(result.notes) == {NO_FACT: NO_FACT_LINES[family]}


@pytest.mark.parametrize("family", FAMILIES)
def test_no_membership_line_is_missed(family: str):
    """Given a family's log, Then every line with a membership word gives an event,
    except the few listed that record no change; checked apart from the patterns."""
    name = FAMILIES[family]
    lines = (LOGS / name).read_text().splitlines()
    worded = {n for n, line in enumerate(lines, start=1) if MEMBERSHIP_WORDS.search(line)}
    parsed = {line for line, *_ in events(parse_log("\n".join(lines)))}
    assert worded - NOT_EVENTS[family] == parsed


def test_event_names_are_the_coordinator_events_vocabulary():
    assert {name for name, _ in EVENTS} == VOCABULARY


LEAVE_2X = (
    "[2026-11-20 09:00:30,000] INFO [GroupCoordinator 2]: Member[group.instance.id None, "
    "member.id consumer-billing-1-5e6f] in group billing has left, removing it from the "
    "group (kafka.coordinator.group.GroupCoordinator)"
)
JOIN_2X = (
    "[2026-11-20 09:00:20,500] INFO [GroupCoordinator 2]: Dynamic Member with unknown member"
    " id joins group billing in Stable state. Created a new member id rdkafka-6f70 for this "
    "member and add to the group. (kafka.coordinator.group.GroupCoordinator)"
)
BUMP_4X = (
    "[2026-11-20 09:00:30,401] INFO [GroupCoordinator id=1 topic=__consumer_offsets "
    "partition=12] [GroupId g] Bumped group epoch to 2 with metadata hash "
    "2421248355301747518. (org.apache.kafka.coordinator.group.GroupMetadataManager)"
)


def test_the_issue_lines():
    """Given the lines the issue quotes from real 2.3-2.8 and 4.x logs, Then each is an
    event, not a structural line."""
    result = parse_log("\n".join([LEAVE_2X, JOIN_2X, BUMP_4X]))
    assert events(result) == [
        (1, "member_left", "billing", None, "consumer-billing-1-5e6f", None),
        (2, "member_joined", "billing", None, "rdkafka-6f70", None),
        (3, "epoch_bumped", "g", 2, None, None),
    ]
    assert result.structural == 0


def test_a_group_line_matching_no_pattern_is_counted_in_reason_and_run_log(caplog):
    """Given a coordinator line naming a group in a form no pattern knows (a future
    Kafka's message), Then it stays structural but is counted per file, and the count
    shows in ingested_files.reason and in the run's log."""
    unknown = (
        "[2026-11-20 09:01:00,000] INFO [GroupCoordinator 2]: Member m-1 in group billing "
        "teleported to another dimension (kafka.coordinator.group.GroupCoordinator)"
    )
    no_group = (
        "[2026-11-20 09:01:01,000] INFO [GroupCoordinator 2]: Something new happened. "
        "(kafka.coordinator.group.GroupCoordinator)"
    )
    text = "\n".join([LEAVE_2X, unknown, no_group]) + "\n"
    result = parse_log(text)
    assert [e[1] for e in events(result)] == ["member_left"]
    assert result.structural == 2 and accounted(result)
    assert dict(result.notes) == {UNMATCHED_GROUP_LINE: 1, UNKNOWN_LINE: 1}

    relative = "lab/logs/broker-2/server.log"
    file = {"relative": relative, "cluster": "lab", "captured_at": None, "group": None}
    reports = capture_batches([file], lambda f: (parse_log(text, f["relative"]), None), DAY)
    (summary,) = [out for table, out in reports if table == FILE_REPORT]
    assert f"{UNMATCHED_GROUP_LINE}: 1" in summary["reason"]
    assert f"{UNKNOWN_LINE}: 1" in summary["reason"]

    from fleet_rebalance.pipeline.ingest import reconcile

    with caplog.at_level(logging.INFO, logger="fleet_rebalance.ingest"):
        reconcile.check_reconciliation([summary])
    assert f'"{UNMATCHED_GROUP_LINE}": 1' in caplog.text


def test_a_docker_compose_view_gives_the_same_events():
    """Given `docker-compose logs` of the 2.3-2.8 broker (every line behind its service
    column, ZooKeeper lines interleaved), Then its events are the plain log's."""
    plain = parse_log((LOGS / FAMILIES["2.3-2.8"]).read_text())
    text = (LOGS / "kafka-2.3-2.8-docker-compose.log").read_text()
    composed = parse_log(text)
    assert detect_kind(text.splitlines()) == "coordinator_log"
    assert without_lines(composed) == without_lines(plain)
    assert accounted(composed) and composed.structural == plain.structural + 4
    assert composed.notes["log lines read past a docker-compose prefix"] == 64
    row = composed.rows[COORDINATOR_EVENTS][0]
    assert row["line"].startswith("kafka_1      | [2026-11-20 09:00:04,100] INFO ")


def test_a_grep_view_gives_the_same_events():
    """Given `grep coordinator.group server.log.*` over the 3.x broker's log (each line
    behind its file name), Then its events are the plain log's."""
    plain = parse_log((LOGS / FAMILIES["3.x"]).read_text())
    grepped = parse_log((LOGS / "kafka-3.x-grep.log").read_text())
    assert without_lines(grepped) == without_lines(plain)
    assert accounted(grepped) and grepped.notes["log lines read past a grep prefix"] == 44


def without_lines(result: ParseResult) -> list[dict]:
    return [
        {k: v for k, v in row.items() if k not in ("line", "line_number")}
        for row in result.rows[COORDINATOR_EVENTS]
    ]


STABILIZED = (
    "[2026-11-20 09:00:08,004] INFO [GroupCoordinator 1]: Stabilized group g generation 12 "
    "(__consumer_offsets-44) (kafka.coordinator.group.GroupCoordinator)"
)


@pytest.mark.parametrize(
    ("prefix", "style"),
    [
        ("", None),
        ("kafka_1  | ", "docker-compose"),
        ("kafka-broker-1  | ", "docker-compose"),
        ("server.log.2026-11-20-09:", "grep"),
        ("logs/broker-1/server.log:", "grep"),
    ],
)
def test_prefixed_logs_are_known_by_their_head(prefix: str, style: str | None):
    line = prefix + STABILIZED
    assert line_prefix([line]) == style
    assert store.is_log_head((line + "\n").encode(), complete=True)
    assert events(parse_log(line)) == [(1, "stabilized", "g", 12, None, None)]


@pytest.mark.parametrize(
    "prefix",
    [
        "kafka_1 |",  # no space after the bar
        "kafka_1| ",  # no space before it
        "| ",
        "[kafka_1] | ",
        "2026-11-20 server.log:",  # a path with a blank
        "server.log: ",  # a blank after grep's colon
        "a:b:",  # grep -n (file:line:) or a path with a colon
    ],
)
def test_other_prefixes_are_not_read_past(prefix: str):
    """Only docker-compose's `name  | ` and grep's `path:` are prefixes; a line behind
    anything else is no log line, and a file of them is not a log."""
    line = prefix + STABILIZED
    assert not store.is_log_head((line + "\n").encode(), complete=True)
    result = parse_capture("lab/logs/broker-1/server.log", line.encode())
    assert result.kind == "unknown" and not result.rows


def test_the_first_log_line_decides_the_prefix_of_every_line():
    """Given a plain log with one line behind a docker-compose column, Then that line is
    not read: a file's lines are read past one prefix style only. It names a coordinator
    logger, so it is quarantined with the reason (issue 36: never dropped silently)."""
    result = parse_log(STABILIZED + "\nkafka_1  | " + STABILIZED)
    assert [e[0] for e in events(result)] == [1]
    assert [q["line_number"] for q in result.quarantine] == [2]
    assert result.quarantine[0]["reason"].startswith("coordinator line that is not a whole log4j")
    assert result.structural == 0 and not result.notes


def test_a_prefixed_line_keeps_strict_numbers():
    """Given a docker-compose line whose generation is `1_0`, Then it is quarantined
    with the reason, never read as generation 10."""
    bad = "kafka_1  | " + STABILIZED.replace("generation 12", "generation 1_0")
    result = parse_log("kafka_1  | " + STABILIZED + "\n" + bad)
    assert [e[0] for e in events(result)] == [1]
    assert [(q["line_number"], q["reason"]) for q in result.quarantine] == [
        (2, "generation is not a number: '1_0'")
    ]
    assert result.quarantine[0]["line"] == bad and accounted(result)


def test_a_log_timestamp_is_read_as_strptime_reads_it():
    """log4j_time reads the stamp by position: the same instant as strptime's
    `%Y-%m-%d %H:%M:%S,%f`, or a ValueError where strptime raises one, on the calendar's
    edges and on 20,000 stamps of random digits (days, hours and seconds out of range)."""
    rng = random.Random(54)
    stamps = [
        "2024-02-29 23:59:59,999",
        "2026-02-29 00:00:00,000",
        "2026-12-31 23:59:59,001",
        "0000-01-01 00:00:00,000",
        "9999-12-31 23:59:59,999",
        "2026-13-01 00:00:00,000",
        "2026-00-10 00:00:00,000",
        "2026-11-20 24:00:00,000",
        "2026-11-20 23:60:00,000",
        "2026-11-20 23:59:60,000",
        "2026-11-20 23:59:61,000",
    ] + [
        f"{rng.randrange(1, 10000):04d}-{rng.randrange(100):02d}-{rng.randrange(100):02d} "
        f"{rng.randrange(100):02d}:{rng.randrange(100):02d}:{rng.randrange(100):02d},"
        f"{rng.randrange(1000):03d}"
        for _ in range(20_000)
    ]
    for stamp in stamps:
        try:
            expected: dt.datetime | None = dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")
        except ValueError:
            expected = None
        try:
            read: dt.datetime | None = log4j_time(stamp)
        except ValueError:
            read = None
        assert read == expected, stamp


def test_a_line_is_a_log_line_exactly_when_the_whole_line_pattern_reads_it():
    """is_log_line and line_prefix test a line's start only; the whole-line patterns
    the reader matches (message, optional logger, end) take the same lines: every line
    of the brokers' logs, and cut, trailing, prefixed and damaged variants of one."""
    lines = [line for path in sorted(LOGS.glob("*.log")) for line in path.read_text().splitlines()]
    variants = [STABILIZED[:cut] for cut in range(0, len(STABILIZED), 7)] + [
        STABILIZED + " and more",
        STABILIZED.replace("INFO", "info"),
        STABILIZED.replace(",004]", ".004]"),
        STABILIZED.replace("] INFO", "]  INFO"),
        STABILIZED.replace("Stabilized", "Stabilized\x00"),
        " " + STABILIZED,
        "kafka_1  | " + STABILIZED[:40],
        "server.log:" + STABILIZED + "\r",
    ]
    for line in lines + variants:
        whole = [p.match(line) for p in LOG_LINES.values()]
        assert is_log_line(line) == any(whole), line
        style = next((s for s, p in LOG_LINES.items() if p.match(line)), None)
        assert line_prefix([line]) == style, line


def test_a_log_line_naming_a_views_columns_is_still_a_log_line():
    """Given a broker log whose message holds the offsets view's column names, Then the
    file is a broker log (a log4j line names no other kind); a describe header after
    the log lines still names the file's kind, as before."""
    columns = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST"
    line = STABILIZED.replace("Stabilized group g", f"Stabilized group g {columns}")
    assert detect_kind([line, STABILIZED]) == "coordinator_log"
    assert detect_kind([STABILIZED, columns]) == "offsets"
