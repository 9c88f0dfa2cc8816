"""A JSON-lines format for programmatic exporters: one JSON object per group snapshot.

    {"group_id": "orders-processor",                       # required
     "captured_at": "2026-11-20T09:10:00Z",                # optional, else from the path
     "cluster": "prod-east",                               # optional, else from the path
     "state": "Stable", "assignment_strategy": "cooperative-sticky",
     "coordinator": {"host": "kafka-3:9092", "id": 3},
     "members": [{"member_id": "c-1-...", "group_instance_id": null, "client_id": "c-1",
                  "host": "/10.0.0.7", "rack": "use1-az1", "generation": 42,
                  "subscription": ["orders"],              # explicit: not inferred
                  "assignment": [["orders", 0], ["orders", 1]]}],
     "offsets": [{"topic": "orders", "partition": 0, "current_offset": 10,
                  "log_end_offset": 12, "consumer_id": "c-1-..."}]}

A group the exporter failed to capture is one line with its `capture_error` and
nothing of the group (fleet-capture writes it, agent/snapshot.py):

    {"group_id": "billing", "captured_at": "2026-11-20T09:10:00Z", "cluster": "prod-east",
     "capture_error": {"stage": "describe",                # optional
                       "reason": "COORDINATOR_NOT_AVAILABLE: Broker: Coordinator not available"}}

It yields no row in any table: that group has a gap at that capture, as if a capture
had failed, never an empty group or a departure of all its members (the replay counts a
jsonl capture of a group only through its rows). The line is structural and the file's
ingested_files.reason names the groups (ParseResult.failed_groups). An error that is
not a non-empty string, or one beside a state, coordinator, members or offsets, is
quarantined: the line contradicts itself.

A snapshot whose `captured_at` is of another date than its path is quarantined with
a `date mismatch` reason: only the run of the path's date reads the file, so no run
would write it (capture/stray_dates.py).

Optional KIP-848 keys (Kafka's admin API, 4.x): a snapshot's `group_epoch` and
`target_assignment_epoch`, a member's `member_epoch`, `target_epoch` and `upgraded`
(false: a classic member inside a consumer group); absent or null is unknown.

Every other line feeds group_states (one row), members (with each member's rack and
generation, which the CLI views never print) and offsets. Types are strict: a snapshot
with a value of the wrong JSON type (a string for a list, 3.7 or true for a partition, a
repeated key) is quarantined whole, never coerced, so a group is never stored with part
of its members.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.numbers import INT32, INT64, NumberError, check_int, not_negative
from fleet_rebalance.capture.result import GROUP_STATES, MEMBERS, OFFSETS, ParseResult
from fleet_rebalance.capture.share_streams import RowProblem, group_type
from fleet_rebalance.capture.stray_dates import mismatch_reason
from fleet_rebalance.capture.text import BLANKS, SURROGATE, UNPRINTED

# What a snapshot tells of its group: a failed capture's line must hold none of it.
SNAPSHOT_KEYS = ("state", "assignment_strategy", "coordinator", "members", "offsets")


class SnapshotError(ValueError):
    pass


class DateMismatch(ValueError):
    """A snapshot of another date than its path: no run would write it (stray_dates.py)."""


def _on_path_date(rows: list[tuple[str, dict[str, Any]]], context: ParseContext) -> None:
    """Only the run of a capture's path date reads it, so a snapshot of another date
    (a `captured_at` in another time zone than the path, a copy filed under the wrong
    directory) is quarantined here, while its line is at hand."""
    path_date = context["common"].get("capture_date")
    if not rows or path_date is None:
        return
    date = rows[0][1]["capture_date"]
    if date != path_date:
        raise DateMismatch(mismatch_reason(date, path_date, log=False))


def parse_jsonl(text_lines: list[str], result: ParseResult, context: ParseContext) -> None:
    for number, line in enumerate(text_lines, start=1):
        if not line.strip(BLANKS):
            result.structural += 1
            continue
        try:
            snapshot = json.loads(line, object_pairs_hook=_object, parse_constant=_constant)
            failed = _capture_error(snapshot, context)
            rows = [] if failed else _rows(snapshot, context)
            _on_path_date(rows, context)
        except DateMismatch as exc:
            result.reject(number, line, str(exc))
            continue
        except (SnapshotError, NumberError) as exc:
            result.reject(number, line, f"invalid snapshot: {exc}")
            continue
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, 5000 digits, [[[[...
            result.reject(number, line, f"invalid snapshot: not JSON: {exc}")
            continue
        if failed:
            group, error = failed
            result.failed_groups.setdefault(group, error)
            result.structural += 1
            continue
        for table, row in rows:
            row["line_number"] = number
            result.add(table, row)
        result.row_lines += 1


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        raise SnapshotError(f"repeated key(s) {repeated[:5]} in one object")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise SnapshotError(f"{name} is not JSON")


def _capture_error(snapshot: Any, context: ParseContext) -> tuple[str, str] | None:
    """(group id, error) of a group the exporter failed to capture, None for a snapshot."""
    if not isinstance(snapshot, dict) or snapshot.get("capture_error") is None:
        return None
    error = _object_at(snapshot, "capture_error")
    reason = _string(error.get("reason"), "capture_error.reason")
    if not reason or not reason.strip(BLANKS):
        raise SnapshotError("capture_error.reason must be a non-empty string")
    _string(error.get("stage"), "capture_error.stage")
    beside = [key for key in SNAPSHOT_KEYS if snapshot.get(key) is not None]
    if beside:
        raise SnapshotError(
            f"capture_error beside {', '.join(beside)}: a group that failed to be "
            "captured has no snapshot"
        )
    group, _ = _identity(snapshot, context)
    return group, reason


def _identity(snapshot: Any, context: ParseContext) -> tuple[str, dict[str, Any]]:
    """A line's group id and its values common to every row (cluster, time, file)."""
    if not isinstance(snapshot, dict):
        raise SnapshotError("expected a JSON object per line")
    group = _text(snapshot, "group_id")
    if not group:
        raise SnapshotError("group_id is required")
    common = dict(context["common"])
    if cluster := _text(snapshot, "cluster"):
        common["cluster"] = cluster
    if stamp := _text(snapshot, "captured_at"):
        try:
            at = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            at = at.astimezone(dt.UTC) if at.tzinfo else at.replace(tzinfo=dt.UTC)
        except (ValueError, OverflowError):
            raise SnapshotError(f"captured_at is not an ISO-8601 time: {stamp[:60]!r}") from None
        common.update(captured_at=at, capture_date=at.date())
    if common.get("captured_at") is None:
        raise SnapshotError("no captured_at in the snapshot or the path")
    return group, common


def _rows(snapshot: Any, context: ParseContext) -> list[tuple[str, dict[str, Any]]]:
    group, common = _identity(snapshot, context)
    try:  # fleet-capture's `type`: classic|consumer (share|streams), null when unknown
        common["group_type"] = group_type(_text(snapshot, "type"))
    except RowProblem as exc:
        raise SnapshotError(str(exc)) from None
    coordinator = _object_at(snapshot, "coordinator")
    members = _objects(snapshot, "members")
    rows: list[tuple[str, dict[str, Any]]] = [
        (
            GROUP_STATES,
            {
                **common,
                "group_id": group,
                "coordinator_host": _text(coordinator, "host"),
                "coordinator_id": _int(coordinator, "id", INT32, "coordinator.id"),
                "assignment_strategy": _text(snapshot, "assignment_strategy") or None,
                "state": _text(snapshot, "state"),
                "member_count": len(members),
                "group_epoch": _int(snapshot, "group_epoch", INT32, "group_epoch"),
                "target_assignment_epoch": _int(
                    snapshot, "target_assignment_epoch", INT32, "target_assignment_epoch"
                ),
            },
        )
    ]
    for member in members:
        assignment = [_tp(tp) for tp in _list(member, "assignment")]
        subscription = member.get("subscription")
        if subscription is not None:
            subscription = [_topic(t, "subscription") for t in _list(member, "subscription")]
        member_id = _text(member, "member_id")
        if member_id is None:
            raise SnapshotError("a member without member_id")
        rows.append(
            (
                MEMBERS,
                {
                    **common,
                    "group_id": group,
                    "consumer_id": member_id,
                    "group_instance_id": _text(member, "group_instance_id"),
                    "host": _text(member, "host"),
                    "client_id": _text(member, "client_id"),
                    "partition_count": len(assignment),
                    "assignment": assignment,
                    "subscription": subscription,
                    "subscription_inferred": False if subscription is not None else None,
                    "assignment_groups": None,
                    "member_epoch": _int(member, "member_epoch", INT32, "member_epoch"),
                    "target_epoch": _int(member, "target_epoch", INT32, "target_epoch"),
                    "upgraded": _bool(member, "upgraded"),
                    "rack": _text(member, "rack"),
                    "generation": _int(member, "generation", INT32, "generation"),
                },
            )
        )
    for offset in _objects(snapshot, "offsets"):
        current, end = (
            not_negative(_int(offset, key, INT64, key), key)
            for key in ("current_offset", "log_end_offset")
        )
        partition = _int(offset, "partition", INT32, "partition")
        if offset.get("topic") is None or partition is None or partition < 0:
            raise SnapshotError(f"an offset needs a topic and a partition >= 0: {_shown(offset)}")
        topic = _topic(offset["topic"], "an offset's topic")
        lag = end - current if current is not None and end is not None else None
        if lag is not None and lag < 0:
            raise SnapshotError(f"negative lag {lag} for {topic}-{partition}")
        rows.append(
            (
                OFFSETS,
                {
                    **common,
                    "group_id": group,
                    "topic": topic,
                    "partition": partition,
                    "current_offset": current,
                    "log_end_offset": end,
                    "lag": lag,
                    "consumer_id": _text(offset, "consumer_id"),
                    "host": _text(offset, "host"),
                    "client_id": _text(offset, "client_id"),
                },
            )
        )
    return rows


def _text(obj: dict[str, Any], key: str) -> str | None:
    return _string(obj.get(key), key)


def _string(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise SnapshotError(f"{what} is not a string: {_shown(value)}")
    _printable(value, what)
    return value


def _printable(value: str | None, what: str) -> None:
    """A NUL or an escape sequence (`\\u0000` is valid JSON) in an id is damage; so is
    a lone surrogate (`\\udc80`: JSON's escapes allow it, Unicode text cannot hold it)."""
    if not value:
        return
    control = UNPRINTED.search(value)
    if control is not None:
        raise SnapshotError(f"{what} holds control character {control.group()!r}")
    lone = None if value.isascii() else SURROGATE.search(value)
    if lone is not None:
        raise SnapshotError(f"{what} holds a lone surrogate \\u{ord(lone.group()):04x}")


def _topic(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise SnapshotError(f"{what} holds a topic that is not a non-empty string: {_shown(value)}")
    _printable(value, what)
    return value


def _int(obj: dict[str, Any], key: str, bits: int, what: str) -> int | None:
    value = obj.get(key)
    return None if value is None else check_int(value, what, bits)


def _bool(obj: dict[str, Any], key: str) -> bool | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, bool):
        raise SnapshotError(f"{key} is not true, false or null: {_shown(value)}")
    return value


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SnapshotError(f"{key} is not a list: {_shown(value)}")
    return value


def _objects(obj: dict[str, Any], key: str) -> list[dict[str, Any]]:
    values = _list(obj, key)
    if not all(isinstance(v, dict) for v in values):
        raise SnapshotError(f"{key} holds something other than objects")
    return values


def _object_at(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SnapshotError(f"{key} is not an object: {_shown(value)}")
    return value


def _tp(value: Any) -> dict[str, Any]:
    """An assignment entry: {"topic": t, "partition": p} or [t, p]."""
    if isinstance(value, dict):
        topic, partition = value.get("topic"), value.get("partition")
    elif isinstance(value, list) and len(value) == 2:
        topic, partition = value
    else:
        raise SnapshotError(f"an assignment entry is [topic, partition]: {_shown(value)}")
    topic = _topic(topic, "an assignment entry")
    if check_int(partition, "assignment partition", INT32) < 0:
        raise SnapshotError(f"an assignment entry with a negative partition: {_shown(value)}")
    return {"topic": topic, "partition": partition}


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:60] + "..."
