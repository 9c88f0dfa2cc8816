"""kafka-topics.sh --describe (FORMATS 2): a header line per topic, a line per partition."""

from __future__ import annotations

from typing import Any

from fleet_rebalance.capture import lines as msg
from fleet_rebalance.capture.numbers import INT32, NumberError, parse_int
from fleet_rebalance.capture.result import FAILED_CAPTURE, TOPIC_PARTITIONS, ParseResult
from fleet_rebalance.capture.text import BLANKS


def is_topics_line(line: str) -> bool:
    return line.lstrip("\t ").startswith("Topic:")


def _fields(line: str) -> dict[str, str]:
    """'Key: value' (or 'Key:value' before 2.4) pairs separated by tabs."""
    fields = {}
    for part in line.split("\t"):
        key, sep, value = part.partition(":")
        if sep:
            fields[key.strip(BLANKS)] = value.strip(BLANKS)
    return fields


def _brokers(text: str | None, column: str) -> list[int]:
    if text is None:
        raise ValueError(f"missing {column}")
    if text in ("", "N/A"):
        return []
    return [parse_int(b, f"{column} broker id", INT32) for b in text.split(",")]


def parse_topics(text_lines: list[str], result: ParseResult, context: dict[str, Any]) -> None:
    topic_ids: dict[str, str | None] = {}
    for number, raw in enumerate(text_lines, start=1):
        line = raw
        if not line.strip(BLANKS):
            result.structural += 1
            continue
        if not is_topics_line(line):
            failure = msg.tool_error(line.strip()) or (
                line.split(" : ", 1)[1] if line.startswith("Error while executing") else None
            )
            if failure is not None or msg.is_stack_trace(line):
                result.reject(
                    number, line, f"tool error: {failure}" if failure else "tool error stack trace"
                )
                result.status = FAILED_CAPTURE
            elif msg.is_log_noise(line.strip()):
                result.structural += 1
            else:
                result.reject(number, line, "not a kafka-topics.sh --describe line")
            continue
        fields = _fields(line)
        if "PartitionCount" in fields:
            topic_id = fields.get("TopicId") or None
            if topic_id is not None and "\ufffd" in topic_id:  # undecodable bytes: unknown
                result.notes["TopicId with undecodable bytes (stored as null)"] += 1
                topic_id = None
            topic_ids[fields.get("Topic", "")] = topic_id
            result.structural += 1
            continue
        try:
            topic = fields["Topic"]
            partition = parse_int(fields["Partition"], "Partition", INT32)
            if partition < 0:
                raise NumberError(f"negative Partition {partition}")
            leader_text = fields["Leader"]
            leader = (
                None if leader_text in ("none", "-1") else parse_int(leader_text, "Leader", INT32)
            )
            replicas = _brokers(fields.get("Replicas"), "Replicas")
            isr = _brokers(fields.get("Isr"), "Isr")
        except KeyError as exc:
            result.reject(number, line, f"malformed partition line: no {exc} field")
            continue
        except ValueError as exc:
            result.reject(number, line, f"malformed partition line: {exc}")
            continue
        result.add(
            TOPIC_PARTITIONS,
            {
                "topic": topic,
                "topic_id": topic_ids.get(topic),
                "partition": partition,
                "leader": leader,
                "replicas": replicas,
                "isr": isr,
                **context["common"],
                "line_number": number,
            },
        )
        result.row_lines += 1
