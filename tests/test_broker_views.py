"""The optional broker views (FORMATS 1.7): kafka-configs.sh --describe --entity-type
brokers --all into `brokers`, kafka-log-dirs.sh --describe into `partition_sizes`.

tests/data/broker_views/<release>/ holds the tools' real output from the Kafka lab
(tests/kafka_lab.py: three brokers with broker.rack rack-1..3): 3.9.2's Scala
ConfigCommand and 4.4.0's, and LogDirsCommand of both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet_rebalance.capture.parse import parse_capture

DATA = Path(__file__).parent / "data" / "broker_views"
RELEASES = ("3.9.2", "4.4.0")
CAPTURE = "lab/captures/2026-11-29T212408Z"


def parsed(name: str, text: str):
    return parse_capture(f"{CAPTURE}/{name}", text.encode("utf-8"))


def accounted(result) -> bool:
    """Every line is a row's, a quarantined one or structural."""
    quarantined = len({q["line_number"] for q in result.quarantine if q["line_number"]})
    return result.row_lines + quarantined + result.structural + result.file_lines == result.lines


@pytest.mark.parametrize("release", RELEASES)
def test_the_tools_real_output_gives_each_brokers_rack(release):
    """Given kafka-configs.sh --all of three brokers (some 300 configs each), Then one row
    per broker from its broker.rack line; Expected: rack-1..3, nothing quarantined."""
    result = parsed("brokers.txt", (DATA / release / "brokers.txt").read_text())
    assert (result.kind, result.status, result.quarantine) == ("brokers", "ok", [])
    rows = result.records("brokers")
    assert [(r["broker"], r["rack"], r["cluster"]) for r in rows] == [
        (1, "rack-1", "lab"),
        (2, "rack-2", "lab"),
        (3, "rack-3", "lab"),
    ]
    assert accounted(result)


def test_an_unset_rack_is_null_and_a_block_without_one_gives_no_row():
    """Given broker 1 with broker.rack=null and broker 2's block without the line, Then
    broker 1 has no rack and broker 2's zone is unknown (no row, never a guess)."""
    text = (
        "All configs for broker 1 are:\n"
        "  broker.id=1 sensitive=false synonyms={STATIC_BROKER_CONFIG:node.id=1}\n"
        "  broker.rack=null sensitive=false synonyms={}\n"
        "All configs for broker 2 are:\n"
        "  broker.id=2 sensitive=false synonyms={STATIC_BROKER_CONFIG:node.id=2}\n"
        "Default configs for brokers in the cluster are:\n"
    )
    result = parsed("brokers.txt", text)
    assert [(r["broker"], r["rack"]) for r in result.records("brokers")] == [(1, None)]
    assert result.quarantine == [] and accounted(result)


def test_without_all_the_file_is_refused_whole():
    """Given a describe without --all (dynamic configs only, never broker.rack), Then the
    file is one quarantine row saying to capture with --all, not brokers without racks."""
    text = (
        "Dynamic configs for broker 1 are:\n"
        "  log.cleaner.threads=2 sensitive=false "
        "synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2}\n"
    )
    result = parsed("brokers.txt", text)
    assert result.rows.get("brokers", []) == []
    assert result.status == "failed_capture"
    (row,) = result.quarantine
    assert row["line_number"] is None and "--all" in row["reason"]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("All configs for broker -1 are:", "negative broker id"),
        ("All configs for broker 2147483648 are:", "does not fit a 32-bit"),
        ("  broker.rack=a\x01b sensitive=false synonyms={}", "control character"),
        ("  broker.rack=rack-9 sensitive=false synonyms={}", "a second broker.rack"),
        ("broker.rack=rack-1", "not a kafka-configs.sh --describe --all line"),
        (
            "Error while executing config command with args '--describe'",
            "tool error: with args",
        ),
    ],
)
def test_a_line_that_is_not_kafkas_is_quarantined_with_its_reason(line, reason):
    text = (
        "All configs for broker 1 are:\n"
        "  broker.rack=rack-1 sensitive=false synonyms={}\n"
        f"{line}\n"
        "All configs for broker 2 are:\n"
        "  broker.rack=rack-2 sensitive=false synonyms={}\n"
    )
    result = parsed("brokers.txt", text)
    (row,) = result.quarantine
    assert row["line_number"] == 3 and reason in row["reason"]
    assert accounted(result)


@pytest.mark.parametrize("release", RELEASES)
def test_the_tools_real_log_dirs_give_every_replicas_size(release):
    """Given kafka-log-dirs.sh --describe of the lab, Then one row per replica the JSON
    lists, on its broker and log dir, with its size; the two text lines are structural."""
    text = (DATA / release / "log-dirs.txt").read_text()
    result = parsed("log-dirs.txt", text)
    assert (result.kind, result.status, result.quarantine) == ("log_dirs", "ok", [])
    rows = result.records("partition_sizes")
    document = json.loads(text.splitlines()[2])
    expected = {
        (b["broker"], d["logDir"], p["partition"], p["size"])
        for b in document["brokers"]
        for d in b["logDirs"]
        for p in d["partitions"]
    }
    assert {
        (r["broker"], r["log_dir"], f"{r['topic']}-{r['partition']}", r["size_bytes"]) for r in rows
    } == expected
    assert len(rows) == len(expected)
    assert {r["topic"] for r in rows} >= {"__consumer_offsets"}
    assert (result.row_lines, result.structural) == (1, 2)


def _log_dirs(*partitions: dict, error: str | None = None) -> str:
    document = {
        "brokers": [
            {
                "broker": 2,
                "logDirs": [{"partitions": list(partitions), "error": error, "logDir": "/d"}],
            }
        ],
        "version": 1,
    }
    return (
        "Querying brokers for log directories information\n"
        "Received log directory information from brokers 2\n"
        f"{json.dumps(document)}\n"
    )


def _replica(name: str, size: object = 10, lag: object = 0, future: object = False) -> dict:
    return {"partition": name, "size": size, "offsetLag": lag, "isFuture": future}


def test_a_topic_with_dashes_splits_at_the_last_one_and_future_replicas_are_marked():
    result = parsed(
        "log-dirs.txt",
        _log_dirs(_replica("orders-eu-west-12", 4096), _replica("a-0", 1, 0, True)),
    )
    rows = result.records("partition_sizes")
    assert [
        (r["topic"], r["partition"], r["broker"], r["size_bytes"], r["is_future"]) for r in rows
    ] == [
        ("orders-eu-west", 12, 2, 4096, False),
        ("a", 0, 2, 1, True),
    ]


def test_a_log_dir_with_an_error_is_counted_not_stored_as_empty():
    result = parsed("log-dirs.txt", _log_dirs(error="KafkaStorageException"))
    assert result.records("partition_sizes") == [] and result.quarantine == []
    assert result.notes["log dirs reported with an error (no sizes from them)"] == 1


@pytest.mark.parametrize(
    ("replica", "reason"),
    [
        (_replica("orders"), "is not <topic>-<partition>"),
        (_replica("orders-x"), "is not <topic>-<partition>"),
        (_replica("orders-2147483648"), "does not fit a 32-bit"),
        (_replica("orders-0", size=-1), "negative size"),
        (_replica("orders-0", size=1 << 63), "does not fit a 64-bit"),
        (_replica("orders-0", size=1.5), "size is not an integer"),
        (_replica("orders-0", future="false"), "isFuture is not true or false"),
        ({"partition": "orders-0", "size": 1, "isFuture": False}, "no 'offsetLag' key"),
    ],
)
def test_one_bad_replica_quarantines_the_whole_document(replica, reason):
    """Given a good replica and a bad one, Then the document's line is quarantined with
    the bad one's reason: part of a cluster never stands for all of it."""
    result = parsed("log-dirs.txt", _log_dirs(_replica("good-0"), replica))
    assert result.rows.get("partition_sizes", []) == []
    (row,) = result.quarantine
    assert row["line_number"] == 3 and reason in row["reason"], row["reason"]
    assert accounted(result)


def test_a_document_of_another_version_is_refused():
    text = _log_dirs(_replica("a-0")).replace('"version": 1', '"version": 2')
    (row,) = parsed("log-dirs.txt", text).quarantine
    assert "not a version 1 log-dirs document" in row["reason"]
