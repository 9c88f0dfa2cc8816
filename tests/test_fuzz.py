"""Fuzzing the capture parsers (issue 19): whatever bytes a capture file holds, the parse
task's code (bronze_batches.capture_batches) never raises, accounts for every physical
line, and stores only values its lines spell (fuzz_support.check_file).

The hypothesis tests are derandomized and bounded to a few dozen examples per capture
kind; benchmarks/fuzz.py runs the same mutations for minutes. The regression examples
below are the cases the issue lists, one capture each.
"""

from __future__ import annotations

import functools
import json

import pytest
from fuzz_support import (
    FORMATS_CAPTURE,
    JSONL,
    KINDS,
    LOG_MIXED,
    MEMBERS_38,
    OFFSETS_010,
    OFFSETS_09,
    OFFSETS_38,
    SEEDS,
    STATE_MIXED,
    TOPICS_MIXED,
    Problem,
    Seed,
    Variant,
    check_variant,
    describe_variant,
    run_capture,
    variants,
)
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],  # no slow explain
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ALL_SEEDS = [seed for kind in KINDS for seed in SEEDS[kind]]


def problems(files: dict[str, bytes]) -> list[Problem]:
    return check_variant(files, run_capture(files))


def report(found: list[Problem]) -> str:
    return "\n".join(str(p) for p in found)


def new_problems(files: dict[str, bytes], original: dict[str, bytes]) -> list[Problem]:
    """The problems of `files` that the unedited `original` does not have (those are
    test_seed_passes_every_check's to report)."""
    known = {p.check for p in problems(original)}
    return [p for p in problems(files) if p.check not in known]


@functools.cache
def seed_checks(name: str) -> frozenset[str]:
    """The checks the unmutated seed already fails (test_seed_passes_every_check
    reports them): a mutation is blamed only for new ones."""
    (seed,) = [s for s in ALL_SEEDS if s.name == name]
    return frozenset(p.check for p in problems(seed.files))


@pytest.mark.parametrize("seed", ALL_SEEDS, ids=lambda s: s.name)
def test_seed_passes_every_check(seed: Seed):
    """Given a seed capture as Kafka printed it (data/sample or shared/FORMATS.md),
    Then capture_batches parses it. Expected: no crash, every line accounted for, every
    stored value spelled by its line."""
    found = problems(seed.files)
    assert found == [], report(found)


@pytest.mark.parametrize("kind", KINDS)
@FUZZ
@given(data=st.data())
def test_mutated_capture_keeps_the_quality_bars(kind: str, data: st.DataObject):
    """Given a seed of each capture kind with one to four mutations of its file (bytes,
    numbers, lines, encodings, separators, long lines, trailing bytes, CR-only line
    endings, ids holding `;`/`,`/`:`, NUL inside a value; JSON types for jsonl),
    Then capture_batches runs on the capture. Expected: no problem the seed itself does
    not have."""
    variant: Variant = data.draw(variants(kind))
    note(describe_variant(variant))
    known = seed_checks(variant.seed.name)
    found = [p for p in problems(variant.files) if p.check not in known]
    assert found == [], report(found)


# ----------------------------------------------------------------- regression examples

OFFSETS = FORMATS_CAPTURE + "offsets-38.txt"
TOPICS = FORMATS_CAPTURE + "topics.txt"
STATE = FORMATS_CAPTURE + "state.txt"
LOG = "prod-east/logs/broker-1/server.log.2026-11-20-09"
JSON_PATH = "prod-east/exports/2026-11-20T0910Z/groups.jsonl"
MEMBERS = FORMATS_CAPTURE + "consumer-groups-members.txt"
JSONL_TEXT = "".join(json.dumps(s) + "\n" for s in JSONL)
OFFSETS_09_PATH = FORMATS_CAPTURE + "offsets-09.txt"
OFFSETS_010_PATH = FORMATS_CAPTURE + "offsets-010.txt"
MEMBERS_OFFSETS = FORMATS_CAPTURE + "consumer-groups-offsets.txt"
ORIGINALS = {
    OFFSETS: OFFSETS_38,
    OFFSETS_09_PATH: OFFSETS_09,
    OFFSETS_010_PATH: OFFSETS_010,
    TOPICS: TOPICS_MIXED,
    STATE: STATE_MIXED,
    LOG: LOG_MIXED,
    JSON_PATH: JSONL_TEXT,
    MEMBERS: MEMBERS_38,
    MEMBERS_OFFSETS: OFFSETS_38,
}


def assert_clean(files: dict[str, bytes]) -> None:
    """No problem that the same capture unedited does not have."""
    found = new_problems(files, {path: ORIGINALS[path].encode() for path in files})
    assert found == [], report(found)


def edited(text: str, old: bytes, new: bytes) -> bytes:
    data = text.encode()
    assert old in data, old
    return data.replace(old, new, 1)


def offsets_with(old: bytes, new: bytes) -> dict[str, bytes]:
    return {OFFSETS: edited(OFFSETS_38, old, new)}


def jsonl_with(edit) -> dict[str, bytes]:
    snapshot = json.loads(json.dumps(JSONL[0]))
    edit(snapshot)
    return {JSON_PATH: (json.dumps(snapshot) + "\n" + json.dumps(JSONL[1]) + "\n").encode()}


def utf16(text: str, codec: str) -> bytes:
    return "\ufeff".encode(codec) + text.encode(codec)


NUMBERS = {
    "underscore 1_0": offsets_with(b"orders          0  ", b"orders          1_0"),
    "plus +7": offsets_with(b"0          5    ", b"0          +7   "),
    "fullwidth digit": offsets_with(b"orders          0 ", "orders          \uff11 ".encode()),
    "arabic-indic digit": offsets_with(b"orders          0 ", "orders          \u0661 ".encode()),
    "decimal 3.7": offsets_with(b"orders          0  ", b"orders          3.7"),
    "partition 2^31": offsets_with(b"orders          0         ", b"orders          2147483648"),
    "offset 2^63": offsets_with(
        b"5               9               4   ",
        b"9223372036854775808 9 -9223372036854775799",
    ),
    "offset 10^30": offsets_with(b"103254125 ", str(10**30).encode() + b" "),
    "lag --4": offsets_with(b"9               4    ", b"9               --4  "),
    "topics replica fullwidth": {
        TOPICS: edited(TOPICS_MIXED, b"Replicas: 2,1,3", "Replicas: \uff12,1,3".encode())
    },
    "topics replica +7": {TOPICS: edited(TOPICS_MIXED, b"Replicas: 2,1,3", b"Replicas: +7,1,3")},
    "topics isr 1_0": {TOPICS: edited(TOPICS_MIXED, b"Isr: 1,3,2", b"Isr: 1_0,3,2")},
    "topics partition 2^31": {
        TOPICS: edited(TOPICS_MIXED, b"Partition: 0", b"Partition: 2147483648")
    },
    "state member count 2^31": {
        STATE: edited(STATE_MIXED, b"Stable          2", b"Stable          2147483648")
    },
    "log generation 2^31": {LOG: edited(LOG_MIXED, b"generation 42 ", b"generation 2147483648 ")},
    "members topic-less partition 1_0": {
        MEMBERS: edited(MEMBERS_38, b"2               (0,10)", b"2               (0,1_0)"),
        MEMBERS_OFFSETS: OFFSETS_38.encode(),
    },
}


@pytest.mark.parametrize("files", NUMBERS.values(), ids=NUMBERS.keys())
def test_numbers_kafka_never_prints_are_quarantined_or_kept_verbatim(files):
    """Given one number spelled as Kafka never prints it (1_0, +7, fullwidth or
    Arabic-Indic digits, 3.7, past its column's type, a double minus),
    Then the capture is parsed. Expected: its line quarantined, never stored as
    another number, and no crash."""
    assert_clean(files)


SEPARATORS = {
    "vertical tab": "\v",
    "form feed": "\f",
    "file separator \\x1c": "\x1c",
    "group separator \\x1d": "\x1d",
    "record separator \\x1e": "\x1e",
    "next line \\x85": "\x85",
    "line separator U+2028": "\u2028",
    "paragraph separator U+2029": "\u2029",
    "tab": "\t",
}


@pytest.mark.parametrize("char", SEPARATORS.values(), ids=SEPARATORS.keys())
@pytest.mark.parametrize(
    ("path", "text", "old"),
    [
        (OFFSETS, OFFSETS_38, b"consumer-g1-1\ng1"),
        (TOPICS, TOPICS_MIXED, b"\tIsr: 1,3,2"),
        (STATE, STATE_MIXED, b"cooperative-sticky   Stable"),
        (LOG, LOG_MIXED, b"generation 42 (__consumer"),
        (JSON_PATH, JSONL_TEXT, b'"state": "Stable"'),
    ],
    ids=["offsets", "topics", "state", "log", "jsonl"],
)
def test_odd_separators_inside_a_line_split_no_line(path, text, old, char):
    """Given a character str.splitlines() breaks on (or a tab) inside one line,
    Then the file is parsed. Expected: lines split on \\n only, so the line count is the
    file's; the line is stored as it is or quarantined, values as spelled."""
    middle = len(old) // 2
    assert_clean({path: edited(text, old, old[:middle] + char.encode() + old[middle:])})


def test_crlf_line_endings_are_one_line_ending():
    """Given an offsets capture written with \\r\\n line endings,
    Then it is parsed. Expected: the same lines and rows as with \\n."""
    assert_clean({OFFSETS: OFFSETS_38.replace("\n", "\r\n").encode()})


@pytest.mark.parametrize("path", [OFFSETS, TOPICS, STATE, LOG, JSON_PATH])
def test_cr_only_line_endings_are_line_endings(path):
    """Given a capture written with CR-only line endings (issue 36),
    Then it is parsed. Expected: a lone \\r ends a line like \\n: every line accounted
    for, values as spelled."""
    assert_clean({path: ORIGINALS[path].replace("\n", "\r").encode()})


@pytest.mark.parametrize(
    ("tail", "char"),
    [(" ", None), ("xyz", None), (" (x)", None), ("", "\x00")],
    ids=["space", "garbage", "second logger", "NUL inside"],
)
def test_log_lines_with_trailing_bytes_or_a_nul_are_read_or_quarantined(tail, char):
    """Given the mixed log with one event line ending in a space or garbage, or holding a
    NUL (issue 36),
    Then it is parsed. Expected: every line accounted for, no value holding a NUL."""
    old = b"with 2 members (kafka.coordinator.group.GroupCoordinator)"
    new = old + tail.encode() if char is None else old.replace(b"with", b"wi\x00th")
    assert_clean({LOG: edited(LOG_MIXED, old, new)})


@pytest.mark.parametrize("separator", [";", ",", ":"])
def test_ids_holding_separators_are_stored_as_printed(separator):
    """Given a member and client id holding `;`, `,` or `:` in the offsets view and the
    log (a client.id may hold any of them),
    Then they are parsed. Expected: the ids stored as printed, or the line quarantined."""
    assert_clean(offsets_with(b"consumer-g1-1", f"consumer-g1{separator}1".encode()))
    assert_clean({LOG: edited(LOG_MIXED, b"Member c-3 ", f"Member c{separator}3 ".encode())})


ENCODED = {
    "utf-16-le with BOM": utf16(OFFSETS_38, "utf-16-le"),
    "utf-16-be with BOM": utf16(OFFSETS_38, "utf-16-be"),
    "utf-8 BOM": b"\xef\xbb\xbf" + OFFSETS_38.encode(),
    "latin-1 client id": edited(OFFSETS_38, b"consumer-g2-1", "consumer-g2-é".encode("latin-1")),
    "utf-16-le cut mid-character": utf16(OFFSETS_38, "utf-16-le")[:-1],
    "utf-16-be cut mid-character": utf16(OFFSETS_38, "utf-16-be")[:-1],
}


@pytest.mark.parametrize("data", ENCODED.values(), ids=ENCODED.keys())
def test_other_encodings_are_decoded_or_refused_whole(data):
    """Given an offsets capture in UTF-16 (PowerShell), with a UTF-8 BOM, with a
    latin-1 byte, or UTF-16 cut mid-character,
    Then it is parsed. Expected: decoded by its byte-order mark or refused as a whole
    file; undecodable lines quarantined, never stored with U+FFFD; no crash."""
    assert_clean({OFFSETS: data})


LONG = 70_000  # past parse_capture's 64 KiB sniffing window


def test_a_very_long_line_is_parsed_or_quarantined():
    """Given an offsets row whose CLIENT-ID (the free-text last column) is 70 000 chars,
    Then the file is parsed. Expected: the row stored with the whole client id, or
    quarantined; every line accounted for."""
    assert_clean(offsets_with(b"consumer-g2-1", b"consumer-g2-" + b"x" * LONG))


def _member(key, value):
    def edit(snapshot):
        snapshot["members"][0][key] = value

    return edit


def _offset(key, value):
    def edit(snapshot):
        snapshot["offsets"][0][key] = value

    return edit


def _top(key, value):
    def edit(snapshot):
        snapshot[key] = value

    return edit


JSON_CONFUSIONS = {
    '"members": "abc"': _top("members", "abc"),
    '"subscription": "orders"': _member("subscription", "orders"),
    '"partition": 3.7': _offset("partition", 3.7),
    '"partition": true': _offset("partition", True),
    '"current_offset": "3"': _offset("current_offset", "3"),
    '"member_id": null': _member("member_id", None),
    '"member_id": 5': _member("member_id", 5),
    '"assignment": [["orders", 3.7]]': _member("assignment", [["orders", 3.7]]),
    '"assignment": "orders"': _member("assignment", "orders"),
    '"coordinator": {"id": {"nested": 1}}': _top("coordinator", {"id": {"nested": 1}}),
    '"coordinator": "kafka-3"': _top("coordinator", "kafka-3"),
    '"cluster": 5': _top("cluster", 5),
    '"captured_at": 1763629800': _top("captured_at", 1763629800),
    '"group_id": {"nested": "g"}': _top("group_id", {"nested": "g"}),
    '"offsets": [7]': _top("offsets", [7]),
    '"partition": 2^31': _offset("partition", 2**31),
    '"log_end_offset": 2^63': _offset("log_end_offset", 2**63),
}


@pytest.mark.parametrize("edit", JSON_CONFUSIONS.values(), ids=JSON_CONFUSIONS.keys())
def test_jsonl_values_of_the_wrong_type_are_never_coerced(edit):
    """Given a jsonl snapshot with one value of the wrong JSON type (a string for a
    list, 3.7 or true for an integer, null for an id, an object for a number),
    Then the snapshot is parsed. Expected: the line quarantined whole, or stored with
    exactly the JSON's values and types ("orders" never ['o', 'r', ...], 3.7 never 3)."""
    assert_clean(jsonl_with(edit))


def test_a_state_row_with_an_extra_token_before_the_coordinator_is_not_glued():
    """Given a state row with a stray NUL token between GROUP and COORDINATOR,
    Then it is parsed. Expected: quarantined (a column too many), or its coordinator
    host stored as the line spells it, not as tokens re-joined with one space."""
    row = b"g                         kafka-2"
    assert_clean({STATE: edited(STATE_MIXED, row, b"g \x00" + row[3:])})


def test_an_owner_whose_host_holds_an_underscore_keeps_its_host():
    """Given a 0.9 OWNER `client-0_/10.1_0.0.9` (Kafka: clientId + "_" + clientHost, the
    host starting with "/"),
    Then it is parsed. Expected: host "/10.1_0.0.9" (the split is at "_/"), or the line
    quarantined; never host "0.0.9" and client "client-0_/10.1"."""
    assert_clean({OFFSETS_09_PATH: edited(OFFSETS_09, b"_/10.0.0.9", b"_/10.1_0.0.9")})


def test_an_owner_row_of_0_10_is_split_into_client_and_host():
    """Given the 0.10 OWNER layout, Then it is parsed. Expected: every value spelled by
    its line (client and host are the two sides of `_/`)."""
    assert problems({OFFSETS_010_PATH: OFFSETS_010.encode()}) == []


def test_a_0_9_owner_holding_a_comma_is_kept_verbatim():
    """Given a 0.9 comma-separated row whose OWNER (the free-text last column) holds a
    comma, `client,0_/10.0.0.9` (client.id is any string),
    Then it is parsed. Expected: client `client,0` as printed, or the line quarantined;
    never the words re-joined as `client, 0`."""
    assert_clean(
        {OFFSETS_09_PATH: edited(OFFSETS_09, b"client-0_/10.0.0.9", b"client,0_/10.0.0.9")}
    )
