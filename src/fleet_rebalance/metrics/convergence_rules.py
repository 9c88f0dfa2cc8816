"""How long a KIP-848 group takes to converge after each epoch bump, and which members
are stuck reconciling: the rules behind group_health's convergence columns.

Under the consumer protocol a rebalance is no barrier: the coordinator bumps the group
epoch, computes a target assignment for it, and each member reconciles on its own
heartbeats (revoke, then take), reaching the new epoch when it owns its target. The group
has converged on epoch E once every member's epoch is E or later. The coordinator logs the
bump (`Bumped group epoch to E`, INFO in every release) but, from 4.0, not each member's
reconciliation (`new assignment state` is DEBUG), so convergence comes from the captures'
CURRENT-EPOCH per member (`--describe --members --verbose`, 4.x; fleet-capture's
member_epoch): the first capture after the bump in which every member is at E or later.
That gives an upper bound (`at most`: the capture's time minus the bump's); the
capture interval is the resolution. An epoch bumped again before any capture shows it
converged is `superseded`, not slow; one still open at the day's last capture is
`open`.

A member is stuck reconciling when its epoch stays behind its target epoch in consecutive
captures spanning `stuck_after` or more (Kafka fences a member that fails to transition
within its rebalance timeout, the consumer's max.poll.interval.ms, 5 minutes by default,
and logs it as `member_fenced`).
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MemberEpoch:
    member_id: str
    member_epoch: int | None  # null for a classic member (`-`)
    target_epoch: int | None


@dataclass(frozen=True)
class Capture:
    at: dt.datetime
    members: tuple[MemberEpoch, ...]


@dataclass(frozen=True)
class Convergence:
    epoch: int
    bumped_at: dt.datetime
    converged_by: dt.datetime | None  # the first capture showing it converged
    outcome: str  # converged | superseded | open

    @property
    def seconds(self) -> float | None:
        """At most this long (the capture interval is the resolution)."""
        if self.converged_by is None:
            return None
        return (self.converged_by - self.bumped_at).total_seconds()


@dataclass(frozen=True)
class Stuck:
    member_id: str
    since: dt.datetime  # the first capture showing it behind
    until: dt.datetime  # the last capture showing it behind
    member_epoch: int
    target_epoch: int


@dataclass(frozen=True)
class Summary:
    epochs: int
    converged: int
    max_seconds: float | None
    median_seconds: float | None
    stuck_members: int


def convergences(
    bumps: Sequence[tuple[dt.datetime, int]], captures: Sequence[Capture]
) -> list[Convergence]:
    """One row per logged epoch bump, in time order (module docstring)."""
    ordered = sorted(bumps)
    shots = sorted(captures, key=lambda c: c.at)
    result = []
    for index, (at, epoch) in enumerate(ordered):
        following = ordered[index + 1][0] if index + 1 < len(ordered) else None
        converged = next(
            (
                c.at
                for c in shots
                if c.at > at and (following is None or c.at <= following) and _at_least(c, epoch)
            ),
            None,
        )
        if converged is not None:
            outcome = "converged"
        elif following is not None:
            outcome = "superseded"
        else:
            outcome = "open"
        result.append(Convergence(epoch, at, converged, outcome))
    return result


def stuck(captures: Sequence[Capture], stuck_after: dt.timedelta) -> list[Stuck]:
    """Members behind their target epoch in consecutive captures spanning stuck_after."""
    behind: dict[str, Stuck] = {}
    found: dict[str, Stuck] = {}
    for capture in sorted(captures, key=lambda c: c.at):
        now = {}
        for m in capture.members:
            epoch, target = m.member_epoch, m.target_epoch
            if epoch is not None and target is not None and epoch < target:
                start = behind.get(m.member_id)
                since = start.since if start else capture.at
                now[m.member_id] = Stuck(m.member_id, since, capture.at, epoch, target)
        behind = now
        for member_id, s in behind.items():
            if s.until - s.since >= stuck_after:
                found[member_id] = s
    return sorted(found.values(), key=lambda s: (s.since, s.member_id))


def summary(rows: Sequence[Convergence], stuck_members: Sequence[Stuck]) -> Summary:
    seconds = [r.seconds for r in rows if r.seconds is not None]
    return Summary(
        epochs=len(rows),
        converged=len(seconds),
        max_seconds=max(seconds) if seconds else None,
        median_seconds=statistics.median(seconds) if seconds else None,
        stuck_members=len({s.member_id for s in stuck_members}),
    )


def _at_least(capture: Capture, epoch: int) -> bool:
    epochs = [m.member_epoch for m in capture.members if m.member_epoch is not None]
    return bool(epochs) and min(epochs) >= epoch
