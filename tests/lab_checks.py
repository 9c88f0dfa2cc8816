"""What a Kafka lab run's own record (truth.jsonl, tests/kafka_lab.py) says the nightly
must find in its tables, and what it found: the checks tests/test_kafka_lab.py asserts
and benchmarks/kafka_lab.py prints.

Every scripted action is a window of its group's history, until the group's next action:
the rebalances in it must all have the cause the action stands for (a restart: its
leave and its return, deploy_restart; a static member's restart within its session
timeout: none at all; a freeze past the session timeout: its expiry and its return,
session_timeout), and there must be one. Actions of one kind on one group within
BURST_S of each other (members started or stopped together) are one window. A group's
rebalances before the first settled capture are it forming: scale_out, if any. The
members a window's action stopped are the consumers its rebalances name departed, and
a member frozen past its session timeout was away at least as long as it was frozen. Each
group's events, with the cooperative revocation rounds folded into them, must be exactly
the generations from the one the first capture shows to the one the group's clients (or
the admin API, for a consumer group) last saw.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_lab import SESSION_MS

BURST_S = 5
# The cause each scripted action is, in the history of the group it acts on.
CAUSE = {
    "start": "scale_out",
    "kill": "session_timeout",
    "freeze": "session_timeout",
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
    # A static member's restart down longer than its session timeout: it expires and
    # comes back under its group.instance.id (deploy_restart); within it, no rebalance.
    past_session: bool = False
    required: bool = True  # False: its window may hold no rebalance (a group forming)
    seconds: float | None = None  # how long a freeze lasted

    @property
    def cause(self) -> str | None:
        """The cause its rebalances must have; None: it must cause none."""
        if self.static and self.action == "restart" and not self.past_session:
            return None
        return CAUSE[self.action]


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
    session_ms: dict[str, int] = {}
    running: Counter[str] = Counter()
    truth = Truth()
    for r in rows:
        group = r.get("group")
        if r["action"] == "start":
            topics[group].update(r["topics"].split(","))
            static[r["member"]] = r.get("instance") is not None
            session_ms[r["member"]] = r.get("session_ms", SESSION_MS)
            truth.assignors.setdefault(group, r["assignor"])
            running[group] += 1
        elif r["action"] in ("kill", "terminate"):
            running[group] -= 1
        if r["action"] == "restart" and r.get("assignor"):
            truth.assignors[group] = r["assignor"]
        if r["action"] not in CAUSE:
            continue
        at = dt.datetime.fromisoformat(r["at"])
        if scripted_from and r["at"] < scripted_from:
            forming = Action(at, r["action"], group, None, required=False)
            truth.actions.setdefault(group, [forming])
            continue
        if r["action"] == "add_partitions":
            for g, read in topics.items():
                if r["topic"] in read:
                    truth.actions.setdefault(g, []).append(Action(at, r["action"], g, None))
            continue
        down_ms = r.get("down_s", 0) * 1000
        past = down_ms > session_ms.get(r["member"], SESSION_MS)
        action = Action(at, r["action"], group, r["member"], static.get(r["member"], False), past,
                        seconds=r.get("seconds"))  # fmt: skip
        actions = truth.actions.setdefault(group, [])
        last = actions[-1] if actions else None
        if (
            last is not None
            and last.required
            and (last.action, last.cause) == (action.action, action.cause)
            and at - last.at <= dt.timedelta(seconds=BURST_S)
        ):
            actions[-1] = Action(last.at, last.action, group, f"{last.member}, {action.member}",
                                 last.static, last.past_session)  # fmt: skip
            continue
        actions.append(action)
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
        _check_absences(what, action, inside, found)
        causes = sorted({e["cause"] for e in inside})
        if action.cause is None:
            if inside:
                found.problems.append(f"{what}: expected no rebalance, found {causes}")
        elif causes != [action.cause] and (causes or action.required):
            found.problems.append(f"{what}: expected {action.cause}, found {causes or 'none'}")


def _check_absences(
    what: str, action: Action, inside: list[Mapping[str, Any]], found: Findings
) -> None:
    """A burst of clean stops: its rebalances name every member stopped departed (the
    lab's consumers' client.id is their name). A freeze: the rebalances that let the
    member go and took it back say it was away at least as long as it was frozen (its
    last heartbeat was before the SIGSTOP; a second's slack for the heartbeat interval)."""
    if action.action == "terminate" and action.member:
        named = {c for e in inside if e.get("departed") for c in e["departed"].split(", ")}
        stopped = set(action.member.split(", "))
        if named != stopped:
            found.problems.append(f"{what}: departed {sorted(named)}, stopped {sorted(stopped)}")
    if action.action == "freeze" and action.seconds is not None:
        aways = [e.get("away_ms") for e in inside if e.get("departed") or e.get("returned")]
        # (a null read from a table by pandas is NaN)
        short = [a for a in aways if a is None or not a >= (action.seconds - 1) * 1000]
        if not aways or short:
            found.problems.append(f"{what}: frozen {action.seconds} s, away_ms {aways}")


def _check_generations(
    group: str,
    rows: list[Mapping[str, Any]],
    folded: set[int],
    final: int | None,
    found: Findings,
) -> None:
    initial = next((e for e in rows if e["trigger"] == "initial"), None)
    first = _generation(initial) if initial is not None else None
    if first is None:
        found.problems.append(f"{group}: no initial event with a generation")
        return
    if final is None:
        found.problems.append(f"{group}: the lab recorded no final generation")
        return
    logged = [g for e in rows if (g := _generation(e)) is not None]
    got = sorted([*logged, *folded])
    want = list(range(first, final + 1))
    if [g for g in got if g >= first] != want:
        found.problems.append(f"{group}: generations {got}, the brokers' {want}")


def _generation(e: Mapping[str, Any]) -> int | None:
    """An event's generation; null (a capture-only event) read by pandas is NaN."""
    g = e["generation"]
    return None if g is None or g != g else int(g)


def _utc(at: dt.datetime) -> dt.datetime:
    return at.replace(tzinfo=dt.UTC) if at.tzinfo is None else at.astimezone(dt.UTC)


def _show(e: Mapping[str, Any]) -> str:
    return f"{e['trigger']} generation {e['generation']} ({e['cause']}) at {_utc(e['event_at'])}"
