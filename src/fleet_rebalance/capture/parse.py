"""One capture file -> ParseResult: decode, recognise the kind from content, parse."""

from __future__ import annotations

from codecs import BOM_UTF8
from typing import Any

from fleet_rebalance.capture import lines as msg
from fleet_rebalance.capture.coordinator_log import is_log_line, parse_coordinator_log
from fleet_rebalance.capture.describe import header_view, parse_describe
from fleet_rebalance.capture.jsonl import parse_jsonl
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN, CapturePath, parse_capture_path
from fleet_rebalance.capture.result import FAILED_CAPTURE, REJECTED, ParseResult
from fleet_rebalance.capture.text import BINARY_SHARE, control_share, decode
from fleet_rebalance.capture.topics import is_topics_line, parse_topics

KINDS = ("offsets", "members", "state", "topics", "coordinator_log", "jsonl")


def detect_kind(text_lines: list[str]) -> str | None:
    for line in text_lines:
        stripped = line.strip()
        if not stripped:
            continue
        header = header_view(line)
        if header is not None:
            return header[0]
        if is_topics_line(line):
            return "topics"
        if stripped.startswith("{"):
            return "jsonl"
    log_lines = sum(1 for line in text_lines[:200] if is_log_line(line))
    return "coordinator_log" if log_lines else None


def text_kind(text_lines: list[str]) -> str | None:
    """The kind parse_capture would give these lines, or None for an empty or a binary
    file or unrecognised content (store.is_log_head's question, on a file's head)."""
    if not any(line.strip() for line in text_lines) or _binary(*control_share(text_lines)):
        return None
    return detect_kind(text_lines)


def _binary(control: int, total: int) -> bool:
    return control > BINARY_SHARE * total


def parse_capture(
    relative: str,
    data: bytes,
    *,
    path_pattern: str = DEFAULT_PATH_PATTERN,
    log_timezone: str | None = None,
    path: CapturePath | None = None,
) -> ParseResult:
    """Parse one file; never raises for bad content (it becomes quarantine rows).
    `path` is the file's path as discovery parsed it (else parsed here)."""
    text = decode(data)
    text_lines = text.lines
    if not any(line.strip() for line in text_lines):
        blank = len(text_lines)
        result = ParseResult(kind="unknown", lines=blank, structural=blank, status=FAILED_CAPTURE)
        result.reject_file("empty capture file (failed capture: a gap, not 'no groups')", lines=0)
        return result
    control, total = control_share(text_lines)
    if _binary(control, total):
        result = ParseResult(kind="unknown", lines=len(text_lines), status=REJECTED)
        result.reject_file(f"not a text capture: {control} control characters in the first {total}")
        return result
    kind = detect_kind(text_lines)
    path = path or parse_capture_path(relative, path_pattern)
    if kind is None and msg.only_messages(text_lines):
        # A group with nothing to tabulate (Empty without offsets, Dead, no such group).
        result = ParseResult(kind="unknown", lines=len(text_lines), structural=len(text_lines))
        result.notes["no table: only the tool's messages"] += 1
        return result
    if kind is None:
        failed = any(msg.tool_error(line.strip()) for line in text_lines)
        result = ParseResult(
            kind="unknown", lines=len(text_lines), status=FAILED_CAPTURE if failed else REJECTED
        )
        result.reject_file(
            "tool error, no capture content (failed capture)"
            if failed
            else "unrecognised content: no describe header, topic, log or JSON line",
            text_lines[0][:500] if text_lines else "",
        )
        return result
    result = ParseResult(kind=kind, lines=len(text_lines), text_lines=text_lines)
    if kind != "coordinator_log" and path.captured_at is None:
        result.status = REJECTED
        result.reject_file(
            f"no capture time in the path {relative!r} (expected e.g. 2026-11-20T0910Z)"
        )
        return result
    context: dict[str, Any] = {
        "group": path.group,
        "log_timezone": log_timezone,
        "common": {
            "cluster": path.cluster,
            "captured_at": path.captured_at,
            "capture_date": path.captured_at.date() if path.captured_at else None,
            "source_file": relative,
        },
    }
    parser = {
        "topics": parse_topics,
        "coordinator_log": parse_coordinator_log,
        "jsonl": parse_jsonl,
    }.get(kind, parse_describe)
    parser(text_lines, result, context)
    if text.undecodable:
        result.quarantine_lines(
            text.undecodable, f"undecodable bytes: not {text.encoding} text (shown as \\xNN)"
        )
    if text.encoding != "utf-8" or data.startswith(BOM_UTF8):
        result.notes[f"decoded as {text.encoding} (byte-order mark)"] += 1
    return result
