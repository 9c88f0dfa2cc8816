"""kafka-topics.sh --describe (FORMATS 2): a header line per topic, a line per partition."""

from __future__ import annotations

from typing import Any

from fleet_rebalance.capture import lines as msg
from fleet_rebalance.capture.result import FAILED_CAPTURE, TOPIC_PARTITIONS, ParseResult


def is_topics_line(line: str) -> bool:
    return line.lstrip("\t ").startswith("Topic:")


def _fields(line: str) -> dict[str, str]:
    """'Key: value' (or 'Key:value' before 2.4) pairs separated by tabs."""
    fields = {}
    for part in line.strip("\r\n").split("\t"):
        key, sep, value = part.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _brokers(text: str | None, column: str) -> list[int]:
    if text is None:
        raise ValueError(f"missing {column}")
    if text in ("", "N/A"):
        return []
    try:
        return [int(b) for b in text.split(",")]
    except ValueError:
        raise ValueError(f"{column} is not a broker list: {text!r}") from None


def parse_topics(text_lines: list[str], result: ParseResult, context: dict[str, Any]) -> None:
    topic_ids: dict[str, str | None] = {}
    for number, raw in enumerate(text_lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
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
            topic_ids[fields.get("Topic", "")] = fields.get("TopicId") or None
            result.structural += 1
            continue
        try:
            topic = fields["Topic"]
            partition = int(fields["Partition"])
            leader_text = fields["Leader"]
            leader = None if leader_text in ("none", "-1") else int(leader_text)
            replicas = _brokers(fields.get("Replicas"), "Replicas")
            isr = _brokers(fields.get("Isr"), "Isr")
        except (KeyError, ValueError) as exc:
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
            },
        )
        result.row_lines += 1
