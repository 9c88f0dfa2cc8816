"""The ASSIGNMENT column of the members view, in each release's spelling (FORMATS 1.3)."""

from __future__ import annotations

import re

from fleet_rebalance.capture.numbers import INT32, NumberError, parse_int

# A topic starts after a separator: without the look-behind, findall would try every
# position of a long garbage value, each to its end (quadratic).
SCALA = re.compile(r"(?<![^\s(),])([^\s(),]+)\(([\d,]*)\)")  # audit(2), orders(0,1,10) (<= 3.7)
TOPICLESS = re.compile(r"\(([\d,]*)\)")  # (0,1,10), (2)              (3.8, 3.9)
KIP_1099 = re.compile(r"^[^\s:;]+:[\d,]+(?:;[^\s:;]+:[\d,]+)*$")  # audit:2;orders:0,1,10 (4.x)


class AssignmentTextError(ValueError):
    pass


def parse_assignment(text: str) -> tuple[list[tuple[str, int]] | None, list[list[int]] | None]:
    """(topic, partition) pairs, or for 3.8/3.9's topic-less text the partition groups."""
    text = text.strip()
    if text in ("", "-"):
        return [], None
    if KIP_1099.match(text):
        return [
            (topic, _partition(p, text))
            for item in text.split(";")
            for topic, parts in [item.split(":", 1)]
            for p in parts.split(",")
        ], None
    if text.startswith("("):
        groups = TOPICLESS.findall(text)
        if not groups or TOPICLESS.sub("", text).replace(",", "").strip():
            raise AssignmentTextError(f"unreadable topic-less assignment {text!r}")
        return None, [[_partition(p, text) for p in g.split(",") if p] for g in groups]
    pairs = SCALA.findall(text)
    if not pairs or SCALA.sub("", text).replace(",", "").strip():
        raise AssignmentTextError(f"unreadable assignment {text!r}")
    return [
        (topic, _partition(p, text)) for topic, parts in pairs for p in parts.split(",") if p
    ], None


def _partition(number: str, text: str) -> int:
    """Kafka never prints an empty, negative or out-of-range partition, nor one spelled
    otherwise than Java does: such text is unreadable."""
    try:
        value = parse_int(number, "partition", INT32)
    except NumberError:
        value = -1
    if value < 0:
        shown = text if len(text) <= 80 else text[:80] + "..."
        raise AssignmentTextError(f"invalid partition {number[:20]!r} in assignment {shown!r}")
    return value
