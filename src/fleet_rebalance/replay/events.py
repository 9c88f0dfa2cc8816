"""A rebalance event, and what two captures show changed.

Where no coordinator log covers a period (rebalance_events.py), an event is emitted when,
between two usable captures, the member set (by identity: static members by
group.instance.id), a member's subscription, or the partition count of a subscribed
topic changed (`classify`). Captures that cannot tell the group's membership are gaps,
never evidence that members left:
- failed captures never reach the replay (the caller drops them);
- mid-rebalance captures (PreparingRebalance, CompletingRebalance, Assigning, Reconciling,
  or every member listed with an empty assignment) are skipped: the next stable capture
  shows where the rebalance ended, and one event covers it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from fleet_rebalance.assignors import TopicPartition
from fleet_rebalance.replay.snapshots import Snapshot
from fleet_rebalance.vocabulary import Cause, MemberEvent

# A logged generation whose members, subscriptions and partition counts are all as
# before (a leader's rejoin, a metadata update): the captures could never see it.
NO_CHANGE = "no_change"
CAPTURES, LOGS, BOTH = "captures", "logs", "both"


@dataclass(frozen=True)
class RebalanceEvent:
    seq: int
    at: dt.datetime
    trigger: str
    snapshot: Snapshot
    previous: Snapshot | None
    # The last capture that still showed `previous`'s state: the change happened after it.
    previous_at: dt.datetime | None = None
    # Where the event comes from (rebalance_events.py): a logged generation no capture saw, a
    # change between captures no log covers, or a logged generation a capture confirms.
    source: str = CAPTURES
    generation: int | None = None
    # False for a KIP-848 epoch the next one superseded before the coordinator computed
    # its target assignment (no "Computed a new target assignment" line): the members
    # kept what they had, and the next epoch's assignor starts from that.
    assigned: bool = True
    duration_ms: int | None = None
    cause: str | None = None  # None for `initial`
    evidence: str | None = None
    static_avoidable: bool = False
    # How the capture confirming a logged generation differs from the log's members.
    capture_difference: str | None = None
    # The consumers (their identity: group.instance.id, client id or host) this event let
    # go, those it took back in after they had left (each once, comma-separated), and the
    # longest of their absences, from when they fell silent (a LeaveGroup, or an expired
    # member's last heartbeat: its session timeout before the expiry) to their return (or,
    # with only `departed`, until they came back; null: not that day).
    departed: str | None = None
    returned: str | None = None
    away_ms: int | None = None
    # The session timeout of the consumer(s) it names that the coordinator expired (how
    # long they were silent before the expiry line, counted in away_ms), and whether the
    # conf's default stood in for a timeout no log line gave (session_timeouts.py).
    session_timeout_ms: int | None = None
    session_timeout_assumed: bool | None = None
    # The capture whose lags the event is measured with, and the two captures around it
    # (its produce rates: `rates`, messages per second per partition).
    lags_at: dt.datetime | None = None
    window: tuple[dt.datetime, dt.datetime] | None = None
    rates: Mapping[TopicPartition, float] = field(default_factory=dict)
    # The member sets of the generations of this rebalance before its last: cooperative
    # follow-up rounds that also took members in or let them go (rebalance_events.py), replayed
    # as steps of their own (assignor_runs.py); the event itself is still one rebalance.
    steps: tuple[Snapshot, ...] = ()
    # The member the coordinator names as the leader that sent this generation's
    # assignment (a classic group; null where no log names it), and whether the
    # coordinator assigned it itself (a KIP-848 epoch): who ran the assignor.
    leader: str | None = None
    coordinator_assigned: bool = False
    # The capture confirming this generation was stamped before its last (cooperative)
    # follow-up round ended: it may show the round before (rebalance_events.py).
    follow_up_pending: bool = False
    # A cooperative generation without a follow-up round of its own: the next rebalance
    # took its revoking members in (rebalance_events.py); replayed as one round, no follow-up.
    single_round: bool = False


def classify(previous: Snapshot | None, current: Snapshot) -> str | None:
    """The trigger of the change from previous to current, or None when nothing changed."""
    if previous is None:
        return "initial"
    before, after = previous.by_key(), current.by_key()
    joined, left = after.keys() - before.keys(), before.keys() - after.keys()
    resubscribed = any(
        set(before[k].topics) != set(after[k].topics) for k in before.keys() & after.keys()
    )
    old_counts, new_counts = previous.subscribed_counts(), current.subscribed_counts()
    grown = any(
        new_counts.get(t, 0) != old_counts.get(t, 0) for t in new_counts.keys() & old_counts.keys()
    )
    causes = []
    if joined and left:
        causes.append("members_replaced")
    elif joined:
        causes.append(MemberEvent.JOINED)
    elif left:
        causes.append(MemberEvent.LEFT)
    if resubscribed or (not joined and not left and set(new_counts) != set(old_counts)):
        causes.append(Cause.SUBSCRIPTION_CHANGED)
    if grown:
        causes.append(Cause.PARTITIONS_ADDED)
    if not causes:
        return None
    return causes[0] if len(causes) == 1 else "mixed"
