"""kafka-log-dirs.sh --describe (FORMATS 1.7): each replica's size on its broker's disk,
whose growth between captures is the bytes a partition took in (cross-zone traffic).

LogDirsCommand prints `Querying brokers for log directories information`, then
`Received log directory information from brokers 1,2,3`, then one JSON document:
{"version":1,"brokers":[{"broker":N,"logDirs":[{"logDir":...,"error":null|"<class>",
"partitions":[{"partition":"<topic>-<n>","size":B,"offsetLag":L,"isFuture":F}]}]}]}
(Java's HashMaps: the keys' order is not fixed). The document is the file's one unit:
an entry that is not Kafka's makes the whole line quarantined, never a part of the
cluster stored as if it were all of it. A log dir the broker reports with an error
(an offline disk) has no partitions; it is counted in the file's notes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.numbers import INT32, check_int, not_negative, parse_int
from fleet_rebalance.capture.result import PARTITION_SIZES, ParseResult
from fleet_rebalance.capture.text import BLANKS, SURROGATE, UNPRINTED

QUERYING = "Querying brokers for log directories information"
RECEIVED = re.compile(r"^Received log directory information from brokers [0-9,]*$")
VERSION = 1
VIEW = "kafka-log-dirs.sh --describe"
# A replica `topic-partition`: the topic may hold `-`, the partition is after the last.
REPLICA = re.compile(r"^(?P<topic>.+)-(?P<partition>[0-9]+)$")


def is_log_dirs_line(line: str) -> bool:
    return line.strip(BLANKS) == QUERYING


def parse_log_dirs(text_lines: list[str], result: ParseResult, context: ParseContext) -> None:
    for number, line in enumerate(text_lines, start=1):
        stripped = line.strip(BLANKS)
        if not stripped or stripped == QUERYING or RECEIVED.match(stripped):
            result.structural += 1
            continue
        if msg.is_log_noise(stripped):
            result.structural += 1
            continue
        if not stripped.startswith("{"):
            failure = msg.tool_error(stripped)
            trace = "stack trace" if msg.is_stack_trace(line) else None
            result.reject_foreign(number, line, failure or trace, VIEW)
            continue
        try:
            rows, failed_dirs = _replicas(json.loads(stripped))
        except (ValueError, TypeError, KeyError) as exc:
            why = f"no {exc} key" if isinstance(exc, KeyError) else str(exc)
            result.reject(number, line, f"malformed log-dirs document: {why}")
            continue
        if failed_dirs:
            result.notes["log dirs reported with an error (no sizes from them)"] += failed_dirs
        for row in rows:
            result.add(PARTITION_SIZES, {**row, **context["common"], "line_number": number})
        result.row_lines += 1


def _replicas(document: Any) -> tuple[list[dict[str, Any]], int]:
    """The document's replicas as rows, and how many log dirs reported an error."""
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise ValueError(f"not a version {VERSION} log-dirs document")
    rows: list[dict[str, Any]] = []
    failed = 0
    for broker_entry in _list(document["brokers"], "brokers"):
        broker = not_negative(check_int(broker_entry["broker"], "broker", INT32), "broker")
        for log_dir in _list(broker_entry["logDirs"], "logDirs"):
            path = _text(log_dir["logDir"], "logDir")
            if log_dir["error"] is not None:
                failed += 1
            for replica in _list(log_dir["partitions"], "partitions"):
                topic, partition = _replica(_text(replica["partition"], "partition"))
                rows.append(
                    {
                        "topic": topic,
                        "partition": partition,
                        "broker": broker,
                        "log_dir": path,
                        "size_bytes": not_negative(check_int(replica["size"], "size"), "size"),
                        "offset_lag": check_int(replica["offsetLag"], "offsetLag"),
                        "is_future": _bool(replica["isFuture"], "isFuture"),
                    }
                )
    return rows, failed


def _replica(text: str) -> tuple[str, int]:
    found = REPLICA.match(text)
    if found is None:
        raise ValueError(f"partition {text[:80]!r} is not <topic>-<partition>")
    partition = not_negative(parse_int(found["partition"], "partition", INT32), "partition")
    return found["topic"], partition


def _list(value: Any, key: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"{key} is not a list of objects")
    return value


def _text(value: Any, key: str) -> str:
    bad = not isinstance(value, str) or not value or UNPRINTED.search(value)
    if bad or SURROGATE.search(value):
        raise ValueError(f"{key} is not a name Kafka prints: {str(value)[:80]!r}")
    return value


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{key} is not true or false: {str(value)[:80]!r}")
    return value
