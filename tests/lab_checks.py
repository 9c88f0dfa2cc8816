"""What a Kafka lab run's own record (truth.jsonl, tests/kafka_lab.py) says the nightly
must find in its tables, and what it found: the checks tests/test_kafka_lab.py asserts
and benchmarks/kafka_lab.py prints.

Every scripted action is a window of its group's history, until the group's next action:
the rebalances in it must all have the cause the action stands for (a restart: its
leave and its return, deploy_restart; a static member's restart: none at all), and
there must be one. Each group's events, with the cooperative revocation rounds folded
into them, must be exactly the generations from the one the first capture shows to the
one the group's clients (or the admin API, for a consumer group) last saw.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The cause each scripted action is, in the history of the group it acts on.
CAUSE = {
    "start": "scale_out",
    "kill": "session_timeout",
    "stall": "poll_timeout",
    "restart": "deploy_restart",
    "terminate": "scale_in",
    "add_partitions": "partitions_added",
}


@dataclass(frozen=True)
class Action:
    at: dt.datetime
    action: str
    group: str
    member: str | None
    static: bool = False

    @property
    def cause(self) -> str | None:
        """The cause its rebalances must have; None: it must cause none."""
        return None if self.static and self.action == "restart" else CAUSE[self.action]


@dataclass
class Truth:
    """A lab run's record, read."""

    actions: dict[str, list[Action]] = field(default_factory=dict)
    final_generation: dict[str, int] = field(default_factory=dict)
    assignors: dict[str, str] = field(default_factory=dict)


def read_truth(path: Path) -> Truth:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    settled = [r for r in rows if r["action"] == "settled"]
    scripted_from = settled[0]["at"] if settled else None
    topics: dict[str, set[str]] = defaultdict(set)
    static: dict[str, bool] = {}
    running: Counter[str] = Counter()
    truth = Truth()
    for r in rows:
        group = r.get("group")
        if r["action"] == "start":
            topics[group].update(r["topics"].split(","))
            static[r["member"]] = r.get("instance") is not None
            truth.assignors.setdefault(group, r["assignor"])
            running[group] += 1
        elif r["action"] in ("kill", "terminate"):
            running[group] -= 1
        if r["action"] == "restart" and r.get("assignor"):
            truth.assignors[group] = r["assignor"]
        if r["action"] not in CAUSE or (scripted_from and r["at"] < scripted_from):
            continue
        at = dt.datetime.fromisoformat(r["at"])
        if r["action"] == "add_partitions":
            for g, read in topics.items():
                if r["topic"] in read:
                    truth.actions.setdefault(g, []).append(Action(at, r["action"], g, None))
            continue
        action = Action(at, r["action"], group, r["member"], static.get(r["member"], False))
        truth.actions.setdefault(group, []).append(action)
    for r in rows:
        if r["action"] == "generation":
            seen = r.get("group_epoch") or r["generation"]
            # A group whose last member left went on to an empty generation its clients
            # never saw (the classic coordinator's "is now empty").
            truth.final_generation[r["group"]] = seen + (1 if running[r["group"]] == 0 else 0)
    return truth


@dataclass
class Findings:
    """What the tables say against the truth; `problems` empty means they agree."""

    problems: list[str] = field(default_factory=list)
    causes: dict[str, Counter] = field(default_factory=dict)  # group -> cause -> events
    expected: dict[str, Counter] = field(default_factory=dict)  # group -> cause -> actions


def compare(
    truth: Truth,
    events: Iterable[Mapping[str, Any]],
    follow_ups: Iterable[Mapping[str, Any]],
) -> Findings:
    """`events`: rebalance_events rows (group_id, event_at, trigger, generation, cause);
    `follow_ups`: rebalance_timeline rows with follow_up true (group_id, generation)."""
    found = Findings()
    by_group: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for e in events:
        by_group[e["group_id"]].append(e)
    folded: dict[str, set[int]] = defaultdict(set)
    for f in follow_ups:
        folded[f["group_id"]].add(f["generation"])
    for group in sorted(set(by_group) | set(truth.actions) | set(truth.final_generation)):
        rows = sorted(by_group.get(group, []), key=lambda e: e["event_at"])
        _check_causes(group, truth.actions.get(group, []), rows, found)
        _check_generations(group, rows, folded[group], truth.final_generation.get(group), found)
    return found


def _check_causes(
    group: str, actions: list[Action], rows: list[Mapping[str, Any]], found: Findings
) -> None:
    found.expected[group] = Counter(a.cause or "none" for a in actions)
    found.causes[group] = Counter(e["cause"] for e in rows if e["trigger"] != "initial")
    windows: list[list[Mapping[str, Any]]] = [[] for _ in actions]
    for e in rows:
        if e["trigger"] == "initial":
            continue
        at = _utc(e["event_at"])
        index = max((i for i, a in enumerate(actions) if a.at <= at), default=None)
        if index is None:
            found.problems.append(f"{group}: a rebalance no action explains: {_show(e)}")
            continue
        windows[index].append(e)
    for action, inside in zip(actions, windows, strict=True):
        what = f"{group}: {action.action} {action.member or ''} at {action.at:%H:%M:%S}"
        causes = sorted({e["cause"] for e in inside})
        if action.cause is None:
            if inside:
                found.problems.append(f"{what}: expected no rebalance, found {causes}")
        elif causes != [action.cause]:
            found.problems.append(f"{what}: expected {action.cause}, found {causes or 'none'}")


def _check_generations(
    group: str,
    rows: list[Mapping[str, Any]],
    folded: set[int],
    final: int | None,
    found: Findings,
) -> None:
    initial = next((e for e in rows if e["trigger"] == "initial"), None)
    if initial is None or initial["generation"] is None:
        found.problems.append(f"{group}: no initial event with a generation")
        return
    if final is None:
        found.problems.append(f"{group}: the lab recorded no final generation")
        return
    got = sorted([e["generation"] for e in rows if e["generation"] is not None] + [*folded])
    want = list(range(initial["generation"], final + 1))
    if [g for g in got if g >= initial["generation"]] != want:
        found.problems.append(f"{group}: generations {got}, the brokers' {want}")


def _utc(at: dt.datetime) -> dt.datetime:
    return at.replace(tzinfo=dt.UTC) if at.tzinfo is None else at.astimezone(dt.UTC)


def _show(e: Mapping[str, Any]) -> str:
    return f"{e['trigger']} generation {e['generation']} ({e['cause']}) at {_utc(e['event_at'])}"
