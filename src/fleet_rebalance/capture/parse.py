"""One capture file -> ParseResult: decode, recognise the kind from content, parse."""

from __future__ import annotations

from typing import Any

from fleet_rebalance.capture import lines as msg
from fleet_rebalance.capture.coordinator_log import is_log_line, parse_coordinator_log
from fleet_rebalance.capture.describe import header_view, parse_describe
from fleet_rebalance.capture.jsonl import parse_jsonl
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN, CapturePath, parse_capture_path
from fleet_rebalance.capture.result import FAILED_CAPTURE, REJECTED, ParseResult
from fleet_rebalance.capture.topics import is_topics_line, parse_topics

KINDS = ("offsets", "members", "state", "topics", "coordinator_log", "jsonl")
BINARY_SHARE = 0.1  # more NUL/control bytes than this: not a text capture
CONTROL_BYTES = bytes([*range(9), *range(14, 32)])  # tab, newlines, FF and CR are text


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
    if not data.strip():
        result = ParseResult(kind="unknown", status=FAILED_CAPTURE)
        result.reject(None, "", "empty capture file (failed capture: a gap, not 'no groups')")
        return result
    head = data[:65536]
    control = len(head) - len(head.translate(None, CONTROL_BYTES))
    if control > BINARY_SHARE * min(len(data), 65536):
        result = ParseResult(kind="unknown", status=REJECTED)
        result.reject(
            None,
            "",
            f"not a text capture: {control} control bytes in the first {min(len(data), 65536)}",
        )
        return result
    text = data.decode("utf-8", errors="replace")
    text_lines = text.splitlines()
    kind = detect_kind(text_lines)
    path = path or parse_capture_path(relative, path_pattern)
    if kind is None:
        failed = any(msg.tool_error(line.strip()) for line in text_lines)
        result = ParseResult(
            kind="unknown", lines=len(text_lines), status=FAILED_CAPTURE if failed else REJECTED
        )
        result.reject(
            None,
            text_lines[0][:500] if text_lines else "",
            "tool error, no capture content (failed capture)"
            if failed
            else "unrecognised content: no describe header, topic, log or JSON line",
        )
        return result
    result = ParseResult(kind=kind, lines=len(text_lines))
    if kind != "coordinator_log" and path.captured_at is None:
        result.status = REJECTED
        result.reject(
            None, "", f"no capture time in the path {relative!r} (expected e.g. 2026-11-20T0910Z)"
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
    if "\ufffd" in text:
        for number, line in enumerate(text_lines, start=1):
            if "\ufffd" in line:
                result.notes[f"undecodable bytes on line {number}"] += 1
    return result
