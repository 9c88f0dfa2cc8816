"""Rebalance events from a group's capture history.

An event is emitted when, between two usable captures, the member set (by identity:
static members by group.instance.id), a member's subscription, or the partition count of
a subscribed topic changed. Captures that cannot tell the group's membership are gaps,
never evidence that members left:
- failed captures never reach this module (the caller drops them);
- mid-rebalance captures (PreparingRebalance, CompletingRebalance, Assigning, Reconciling,
  or every member listed with an empty assignment) are skipped: the next stable capture
  shows where the rebalance ended, and one event covers it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from fleet_rebalance.replay.snapshots import Snapshot

TRIGGERS = (
    "initial",
    "member_joined",
    "member_left",
    "members_replaced",
    "subscription_changed",
    "partitions_added",
    "mixed",
)


@dataclass(frozen=True)
class RebalanceEvent:
    seq: int
    at: dt.datetime
    trigger: str
    snapshot: Snapshot
    previous: Snapshot | None
    # The last capture that still showed `previous`'s state: the change happened after it.
    previous_at: dt.datetime | None = None


def classify(previous: Snapshot | None, current: Snapshot) -> str | None:
    """The trigger of the change from previous to current, or None when nothing changed."""
    if previous is None:
        return "initial"
    before, after = previous.by_key(), current.by_key()
    joined, left = after.keys() - before.keys(), before.keys() - after.keys()
    resubscribed = any(
        set(before[k].subscription) != set(after[k].subscription)
        for k in before.keys() & after.keys()
    )
    old_counts, new_counts = previous.subscribed_counts(), current.subscribed_counts()
    grown = any(
        new_counts.get(t, 0) != old_counts.get(t, 0) for t in new_counts.keys() & old_counts.keys()
    )
    causes = []
    if joined and left:
        causes.append("members_replaced")
    elif joined:
        causes.append("member_joined")
    elif left:
        causes.append("member_left")
    if resubscribed or (not joined and not left and set(new_counts) != set(old_counts)):
        causes.append("subscription_changed")
    if grown:
        causes.append("partitions_added")
    if not causes:
        return None
    return causes[0] if len(causes) == 1 else "mixed"


def derive_events(
    snapshots: Iterable[Snapshot], baseline: Snapshot | None = None, first_seq: int = 1
) -> Iterator[RebalanceEvent]:
    """Events from snapshots given in capture order (streamed: only the previous
    snapshot is kept). `baseline` is the previous date's last usable capture: changes
    against it are events of this date; without it the first capture is the group's
    `initial` event."""
    previous = baseline if baseline is None or not baseline.rebalancing else None
    # Until a rebalancing snapshot comes, the capture before each snapshot repeats
    # `previous` (repeats are no snapshots), so it is the last one known to show it.
    seen, after_previous = (previous.captured_at if previous else None), True
    seq = first_seq
    for snapshot in snapshots:
        if previous is not None and snapshot.captured_at <= previous.captured_at:
            raise ValueError(
                f"snapshots out of capture order: {snapshot.captured_at} after "
                f"{previous.captured_at}"
            )
        if after_previous and previous is not None and snapshot.follows is not None:
            seen = max(seen, snapshot.follows)
        if snapshot.rebalancing:
            after_previous = False
            continue
        trigger = classify(previous, snapshot)
        if trigger is not None:
            yield RebalanceEvent(seq, snapshot.captured_at, trigger, snapshot, previous, seen)
            seq += 1
        previous, seen, after_previous = snapshot, snapshot.captured_at, True
