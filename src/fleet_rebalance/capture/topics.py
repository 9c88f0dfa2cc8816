"""kafka-topics.sh --describe (FORMATS 2): a header line per topic, a line per partition.

Fields are `Key: value` (`Key:value` in headers before 2.4) separated by tabs. Copies
often have the tabs expanded to spaces; the fields are then told apart by Kafka's own
key names, which no value spells after a blank: topic names, ids, numbers and broker
lists hold no blanks. Only `Configs:` is free text, and only `MarkedForDeletion` follows
it; headers are structural, so it is never split. A field of an unknown key between
tabs is skipped as before (a newer Kafka's); without tabs it stays in the value before
it, whose check then quarantines the line.
"""

from __future__ import annotations

import re

from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.numbers import INT32, not_negative, parse_int
from fleet_rebalance.capture.result import FAILED_CAPTURE, TOPIC_PARTITIONS, ParseResult
from fleet_rebalance.capture.text import BLANKS, UNPRINTED

KEYS = (
    "Topic",
    "TopicId",
    "PartitionCount",
    "ReplicationFactor",
    "Configs",
    "MarkedForDeletion",
    "Partition",
    "Leader",
    "Replicas",
    "Isr",
    "Adding Replicas",
    "Removing Replicas",
    "Elr",
    "LastKnownElr",
)
# A known key at the start or after a blank; longest first (TopicId before Topic).
KEY = re.compile(
    r"(?<![^ \t])(" + "|".join(re.escape(k) for k in sorted(KEYS, key=len, reverse=True)) + "):"
)
# Broker ids as Kafka prints them that _broker accepts: canonical, not negative, and
# of at most 9 digits, so within an int32.
BROKER_LIST = re.compile(r"(?:0|[1-9][0-9]{0,8})(?:,(?:0|[1-9][0-9]{0,8}))*\Z", re.ASCII)
FREE_TEXT = "Configs"
SPACES_FOR_TABS = "topics lines with spaces for tabs (read by their Key: names)"


def is_topics_line(line: str) -> bool:
    return line.lstrip("\t ").startswith("Topic:")


def _fields(line: str) -> dict[str, str]:
    """The line's `Key: value` pairs, by tab, then by the known keys within a field."""
    fields: dict[str, str] = {}
    for part in line.split("\t"):
        key, value = _one_field(part)
        if key is not None:
            fields[key] = value
        else:
            _split_field(part, fields)
    return fields


def _one_field(part: str) -> tuple[str | None, str]:
    """A tab's field as _split_field reads it when it holds one known key and one word
    (how Kafka prints every field), without its search for more keys: no key can follow
    where no blank does. (None, "") for any other field."""
    key, sep, rest = part.partition(":")
    name = key.lstrip(" ")
    if not sep or name not in KEYS:
        return None, ""
    if name == FREE_TEXT:
        return name, rest.strip(BLANKS)
    word = rest.lstrip(" ")
    if " " in word or (len(word) < len(rest) and KEY.match(word)):
        return None, ""
    return name, word


def _split_field(part: str, fields: dict[str, str]) -> None:
    """Every `Key: value` of one tab's field into `fields`, told apart by the known keys."""
    keys = list(KEY.finditer(part))
    if not keys or part[: keys[0].start()].strip(BLANKS):
        key, sep, value = part.partition(":")
        if sep:
            fields[key.strip(BLANKS)] = value.strip(BLANKS)
        return
    for this, following in zip(keys, [*keys[1:], None], strict=True):
        if this.group(1) == FREE_TEXT:
            fields[FREE_TEXT] = part[this.end() :].strip(BLANKS)
            break
        end = following.start() if following else len(part)
        fields[this.group(1)] = part[this.end() : end].strip(BLANKS)


def _value(fields: dict[str, str], key: str, *, empty: bool = False) -> str:
    """A field's value, one word as Kafka prints every field but Configs: one with a
    blank took in what followed it (a field Kafka never printed, or damage)."""
    value = fields[key]
    if any(blank in value for blank in BLANKS):
        raise ValueError(f"{key} value {value!r} holds a blank (text after it that is no field)")
    if not value and not empty:
        raise ValueError(f"empty {key}")
    return value


def _brokers(fields: dict[str, str], key: str) -> list[int]:
    """Broker ids `1,2,3`; empty or `N/A` (Elr from a Metadata-API fallback) is none."""
    text = _value(fields, key, empty=True)
    if text in ("", "N/A"):
        return []
    if BROKER_LIST.match(text):  # the common case: each id a valid one, read at once
        return [int(b) for b in text.split(",")]
    return [_broker(b, f"{key} broker id") for b in text.split(",")]


def _broker(text: str, column: str) -> int:
    """A broker id: a node id, never negative (`-1` is a missing leader's, read apart)."""
    return not_negative(parse_int(text, column, INT32), column)


def parse_topics(text_lines: list[str], result: ParseResult, context: ParseContext) -> None:
    topic_ids: dict[str, str | None] = {}
    for number, raw in enumerate(text_lines, start=1):
        line = raw
        if not line.strip(BLANKS):
            result.structural += 1
            continue
        if not is_topics_line(line):
            failure = msg.tool_error(line.strip())
            if failure is not None or msg.is_stack_trace(line):
                result.reject(
                    number, line, f"tool error: {failure}" if failure else "tool error stack trace"
                )
                result.status = FAILED_CAPTURE
            elif msg.is_log_noise(line.strip()) or msg.tool_message(
                line.strip(), msg.TOPIC_MESSAGES
            ):
                result.structural += 1
            else:
                result.reject(number, line, "not a kafka-topics.sh --describe line")
            continue
        fields = _fields(line)
        if "\t" not in line.strip(BLANKS):
            result.notes[SPACES_FOR_TABS] += 1
        if "PartitionCount" in fields:
            topic_id = fields.get("TopicId") or None
            if topic_id is not None and "\ufffd" in topic_id:  # undecodable bytes: unknown
                result.notes["TopicId with undecodable bytes (stored as null)"] += 1
                topic_id = None
            elif topic_id is not None and UNPRINTED.search(topic_id):
                result.notes["TopicId with a control character (stored as null)"] += 1
                topic_id = None
            topic_ids[fields.get("Topic", "")] = topic_id
            result.structural += 1
            continue
        try:
            control = UNPRINTED.search(line)
            if control is not None:
                raise ValueError(f"control character {control.group()!r} (Kafka prints none)")
            topic = _value(fields, "Topic")
            partition = not_negative(
                parse_int(_value(fields, "Partition"), "Partition", INT32), "Partition"
            )
            leader_text = _value(fields, "Leader")
            leader = None if leader_text in ("none", "-1") else _broker(leader_text, "Leader")
            replicas = _brokers(fields, "Replicas")
            isr = _brokers(fields, "Isr")
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
