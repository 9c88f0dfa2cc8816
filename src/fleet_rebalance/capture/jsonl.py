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

Each line feeds group_states (one row), members and offsets. The bronze members table
has no rack or generation column (DESIGN.md), so those two fields are validated but
not stored yet.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from fleet_rebalance.capture.result import GROUP_STATES, MEMBERS, OFFSETS, ParseResult


class SnapshotError(ValueError):
    pass


def parse_jsonl(text_lines: list[str], result: ParseResult, context: dict[str, Any]) -> None:
    for number, raw in enumerate(text_lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            result.structural += 1
            continue
        try:
            snapshot = json.loads(line)
            rows = _rows(snapshot, context)
        except (json.JSONDecodeError, SnapshotError, TypeError, ValueError, KeyError) as exc:
            result.reject(number, line, f"invalid snapshot: {exc}")
            continue
        for table, row in rows:
            row["line_number"] = number
            result.add(table, row)
        result.row_lines += 1


def _rows(snapshot: Any, context: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(snapshot, dict):
        raise SnapshotError("expected a JSON object per line")
    group = snapshot.get("group_id")
    if not isinstance(group, str) or not group:
        raise SnapshotError("group_id is required")
    common = dict(context["common"])
    if snapshot.get("cluster"):
        common["cluster"] = str(snapshot["cluster"])
    if snapshot.get("captured_at"):
        at = dt.datetime.fromisoformat(str(snapshot["captured_at"]).replace("Z", "+00:00"))
        at = at.astimezone(dt.UTC) if at.tzinfo else at.replace(tzinfo=dt.UTC)
        common.update(captured_at=at, capture_date=at.date())
    if common.get("captured_at") is None:
        raise SnapshotError("no captured_at in the snapshot or the path")
    coordinator = snapshot.get("coordinator") or {}
    members = snapshot.get("members") or []
    rows: list[tuple[str, dict[str, Any]]] = [
        (
            GROUP_STATES,
            {
                **common,
                "group_id": group,
                "coordinator_host": coordinator.get("host"),
                "coordinator_id": _int(coordinator.get("id")),
                "assignment_strategy": snapshot.get("assignment_strategy") or None,
                "state": snapshot.get("state"),
                "member_count": len(members),
            },
        )
    ]
    for member in members:
        assignment = [_tp(tp) for tp in member.get("assignment") or []]
        _int(member.get("generation"))
        subscription = member.get("subscription")
        rows.append(
            (
                MEMBERS,
                {
                    **common,
                    "group_id": group,
                    "consumer_id": str(member["member_id"]),
                    "group_instance_id": member.get("group_instance_id"),
                    "host": member.get("host"),
                    "client_id": member.get("client_id"),
                    "partition_count": len(assignment),
                    "assignment": assignment,
                    "subscription": list(subscription) if subscription is not None else None,
                    "subscription_inferred": False if subscription is not None else None,
                    "assignment_groups": None,
                },
            )
        )
    for offset in snapshot.get("offsets") or []:
        current, end = _int(offset.get("current_offset")), _int(offset.get("log_end_offset"))
        lag = end - current if current is not None and end is not None else None
        if lag is not None and lag < 0:
            raise SnapshotError(
                f"negative lag {lag} for {offset.get('topic')}-{offset.get('partition')}"
            )
        rows.append(
            (
                OFFSETS,
                {
                    **common,
                    "group_id": group,
                    "topic": str(offset["topic"]),
                    "partition": int(offset["partition"]),
                    "current_offset": current,
                    "log_end_offset": end,
                    "lag": lag,
                    "consumer_id": offset.get("consumer_id"),
                    "host": offset.get("host"),
                    "client_id": offset.get("client_id"),
                },
            )
        )
    return rows


def _int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SnapshotError(f"expected an integer, found {value!r}")
    return int(value)


def _tp(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"topic": str(value["topic"]), "partition": int(value["partition"])}
    topic, partition = value
    return {"topic": str(topic), "partition": int(partition)}
