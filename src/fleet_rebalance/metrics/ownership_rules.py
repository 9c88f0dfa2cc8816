"""`ownership_audit` rules: partitions two members own at once, and partitions nobody owns
while their lag grows. Pure Python, no Spark: the gold step hands over one group's
partition captures of the day (PartitionCapture rows) and writes what `audit` returns.

Double ownership: a settled capture whose members' captured assignments hold the same
partition more than once (a custom client-side balancer can do this: grafana/tempo#7665
double-owned 32 of 33 partitions). A capture taken mid-rebalance is no evidence: the
cooperative and KIP-848 handovers, and the new classic coordinator's "last assignment"
view (shared/FORMATS.md 1.1), show transient overlap there. Mid-rebalance means the
state view says a REBALANCING_STATES state, the members view warned `is rebalancing`,
or (the old coordinator's view of a rebalance) members are listed and none owns anything.

Orphaned: a partition with a committed offset and a known lag that no member owns
(neither the members' captured assignments nor the offsets view's CONSUMER-ID name an
owner) at a settled capture where the group has members (listed in the members view or
counted by the state view) or is Empty. An Empty group whose lag grows is reported per
partition here (the "consumers died" case, kafka_exporter#220), beside Burrow's STOP in
consumer_status. A capture whose members' assignments were not captured (the plain
`--members` view, an unresolved 3.8/3.9 assignment) shows no orphan: ownership is not
known there. A topic the group stopped reading keeps its committed offsets, and so shows
as orphaned until they expire (offsets.retention.minutes): that is what it is.
"Growing lag": over at least 2 such captures, the lag at the last one is above the
first's. One row per partition and finding of the day: its first and last capture, how
many captures show it, the members (double) or the lag at first and last (orphaned).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Literal, TypedDict

from fleet_rebalance.replay.snapshots import REBALANCING_STATES

Finding = Literal["double_ownership", "orphaned"]
DOUBLE: Finding = "double_ownership"
ORPHANED: Finding = "orphaned"
EMPTY = "Empty"
# The gold columns beside cluster, group_id and date (pipeline/gold.py ownership_audit).
COLUMNS = [
    "topic",
    "partition",
    "finding",
    "first_captured_at",
    "last_captured_at",
    "captures",
    "members",
    "first_lag",
    "last_lag",
    "group_state",
]


class PartitionCapture(TypedDict):
    """One partition of one group at one capture, with what that capture says of the group."""

    captured_at: dt.datetime
    topic: str
    partition: int
    owners: list[str] | None  # distinct member ids whose captured assignment holds it
    current_offset: int | None  # committed offset (offsets view)
    lag: int | None
    offsets_owner: str | None  # the offsets view's CONSUMER-ID; None for `-` or no row
    state: str | None  # the state view's state; None when not captured
    state_members: int | None  # the state view's #MEMBERS
    warned: bool | None  # the members view printed `is rebalancing`
    listed_members: int  # members the members view lists (0: none or not captured)
    assigning_members: int  # ... whose captured assignment holds a partition
    unknown_assignments: int  # ... whose assignment was not captured


class GroupCapture(TypedDict):
    """One group capture that could show a finding (its members' assignments hold a
    partition twice, or it has unowned offsets rows), as the gold step gathers it."""

    captured_at: dt.datetime
    holdings: list[dict[str, Any]] | None  # {consumer_id, assignment: [{topic, partition}]}
    unowned: list[dict[str, Any]] | None  # {topic, partition, current_offset, lag}
    state: str | None
    state_members: int | None
    warned: bool | None
    listed_members: int | None
    assigning_members: int | None
    unknown_assignments: int | None


def partition_captures(capture: GroupCapture) -> list[PartitionCapture]:
    """The capture's partitions that could show a finding: each unowned offsets row
    (with the members holding it, unless exactly one does) and each partition two
    members hold that has no such row."""
    owners: dict[tuple[str, int], set[str]] = defaultdict(set)
    for holding in capture["holdings"] or ():
        for tp in holding["assignment"]:
            owners[(tp["topic"], tp["partition"])].add(holding["consumer_id"])
    out = []
    unowned = capture["unowned"] or ()
    for row in unowned:
        held = owners.get((row["topic"], row["partition"]))
        if held is None or len(held) != 1:
            out.append(_partition(capture, row["topic"], row["partition"], held, row))
    listed = {(row["topic"], row["partition"]) for row in unowned}
    for (topic, partition), held in owners.items():
        if len(held) > 1 and (topic, partition) not in listed:
            out.append(_partition(capture, topic, partition, held, None))
    return out


def _partition(
    capture: GroupCapture,
    topic: str,
    partition: int,
    owners: set[str] | None,
    offsets: dict[str, Any] | None,
) -> PartitionCapture:
    return PartitionCapture(
        captured_at=capture["captured_at"],
        topic=topic,
        partition=partition,
        owners=sorted(owners) if owners else None,
        current_offset=offsets["current_offset"] if offsets else None,
        lag=offsets["lag"] if offsets else None,
        offsets_owner=None,  # the unowned offsets rows are those without a CONSUMER-ID
        state=capture["state"],
        state_members=capture["state_members"],
        warned=capture["warned"],
        listed_members=capture["listed_members"] or 0,
        assigning_members=capture["assigning_members"] or 0,
        unknown_assignments=capture["unknown_assignments"] or 0,
    )


def rebalancing(c: PartitionCapture) -> bool:
    """The capture shows the group mid-rebalance (module docstring)."""
    old_coordinator_view = (
        c["listed_members"] > 0 and c["assigning_members"] == 0 and c["unknown_assignments"] == 0
    )
    return c["state"] in REBALANCING_STATES or bool(c["warned"]) or old_coordinator_view


def double_owned(c: PartitionCapture) -> bool:
    return len(c["owners"] or ()) > 1 and not rebalancing(c)


def orphaned(c: PartitionCapture) -> bool:
    """Committed, lag known, owned by nobody in either view, in a settled group that has
    members or is Empty."""
    if c["owners"] or c["offsets_owner"] is not None or c["unknown_assignments"]:
        return False
    if c["current_offset"] is None or c["lag"] is None or rebalancing(c):
        return False
    has_members = c["listed_members"] > 0 or (c["state_members"] or 0) > 0
    return has_members or c["state"] == EMPTY


def audit(rows: Iterable[PartitionCapture]) -> list[dict[str, Any]]:
    """The findings (COLUMNS) of one group's partition captures of the day, sorted by
    topic, partition and finding."""
    shown: dict[tuple[str, int, Finding], list[PartitionCapture]] = defaultdict(list)
    for c in rows:
        if double_owned(c):
            shown[(c["topic"], c["partition"], DOUBLE)].append(c)
        elif orphaned(c):
            shown[(c["topic"], c["partition"], ORPHANED)].append(c)
    out = []
    for (topic, partition, finding), captures in sorted(shown.items()):
        captures.sort(key=lambda c: c["captured_at"])
        first, last = captures[0], captures[-1]
        # An orphaned partition's captures all have a lag (orphaned()).
        if finding == ORPHANED and (len(captures) < 2 or (last["lag"] or 0) <= (first["lag"] or 0)):
            continue
        double = finding == DOUBLE
        out.append(
            {
                "topic": topic,
                "partition": partition,
                "finding": finding,
                "first_captured_at": first["captured_at"],
                "last_captured_at": last["captured_at"],
                "captures": len(captures),
                "members": sorted({m for c in captures for m in c["owners"] or ()})
                if double
                else None,
                "first_lag": None if double else first["lag"],
                "last_lag": None if double else last["lag"],
                "group_state": last["state"],
            }
        )
    return out
