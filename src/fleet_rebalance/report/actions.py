"""The words of the report's first two sections, which the terminal summary prints too:
the groups that need attention and the changes to make, from group_health."""

from __future__ import annotations

from dataclasses import dataclass

from fleet_rebalance.metrics.attention import present
from fleet_rebalance.metrics.rack_aware_rules import gb, money
from fleet_rebalance.report.facts import AttentionRow, DayFacts, GroupRow, SavingRow
from fleet_rebalance.vocabulary import Change

KIND_ORDER = (
    Change.STUCK_PARTITION,
    Change.FIX_CRASH_LOOP,
    Change.CONSUMER_CONFIG,
    Change.STATIC_MEMBERSHIP,
    Change.ASSIGNOR,
    Change.PROTOCOL_MIGRATION,
    Change.RACK_AWARE,
    Change.KEEP,
)
# Paused partition-time is partitions x wall-clock seconds: written in partition-seconds
# everywhere (never h:mm:ss, which is for durations: a rebalance's, a time lag).
PARTITION_SECONDS = "partition-s"


@dataclass(frozen=True)
class ChangeRow:
    group: str
    change: str
    prerequisites: str
    saving: str
    reason: str


def group_name(row: GroupRow) -> str:
    return f"{row.cluster}/{row.group_id}"


def headline(f: DayFacts) -> str:
    """The day in one line, its rebalances reconciled with the logs' generations: each
    logged generation is a rebalance, but a cooperative group's revocation round is part
    of the one before, and generations outside the day's replayed captures (before its
    first, after its last) are the neighbouring days'."""
    captured = f.rebalances - f.rebalances_logged
    outside = max(f.generations_logged - f.rebalances_logged - f.follow_ups, 0)
    return (
        f"fleet_rebalance {f.run_date}: {f.groups} groups analysed, {f.rebalances} rebalances "
        f"({f.rebalances_logged} from the coordinator logs, {captured} seen only by captures) "
        f"+ {f.initial_events} initial joins; the logs' {f.generations_logged} generations = "
        f"{f.rebalances_logged} replayed + {f.follow_ups} cooperative follow-up rounds + "
        f"{outside} outside the replayed captures; {f.replay_errors} replay errors, "
        f"{f.quarantined} quarantined lines"
    )


def attention_title(f: DayFacts) -> str:
    return f"Groups that need attention: {f.attention_total} of {f.groups}"


def attention_rows(f: DayFacts) -> list[tuple[str, str]]:
    """(group, why): the reasons group_health gives, joined."""
    return [(group_name(r), "; ".join(r.attention)) for r in f.attention.itertuples()]


def changes_title(f: DayFacts) -> str:
    counts = ", ".join(
        f"{kind} {f.changes_by_kind[kind]}" for kind in KIND_ORDER if f.changes_by_kind.get(kind)
    )
    return f"Changes to make: {changes_total(f)} groups ({counts or 'no recommendations'})"


def changes_total(f: DayFacts) -> int:
    return sum(n for kind, n in f.changes_by_kind.items() if kind != Change.KEEP)


def more(shown: int, total: int) -> str | None:
    """The line after a capped list, or None when it is whole."""
    hidden = total - shown
    return f"... and {hidden} more (SELECT ... FROM group_health)" if hidden > 0 else None


def change_rows(f: DayFacts) -> list[ChangeRow]:
    return [
        ChangeRow(group_name(r), change_text(r), r.prerequisites or "", saving(r), r.change_reason)
        for r in f.changes.itertuples()
    ]


def change_text(r: SavingRow) -> str:
    """`range -> cooperative-sticky`, `migrate to the consumer protocol (uniform)`,
    `static membership (group.instance.id)`, `consumer settings`, `read in-zone
    (client.rack)` (rack_aware; `cooperative-sticky + client.rack` where it switches), ..."""
    kind = r.change_kind
    if kind == Change.STATIC_MEMBERSHIP:
        return "static membership (group.instance.id)"
    if kind == Change.PROTOCOL_MIGRATION:
        return f"migrate to the consumer protocol ({r.recommended_assignor})"
    if kind == Change.CONSUMER_CONFIG:
        return "consumer settings"
    if kind == Change.FIX_CRASH_LOOP:
        return "fix the crash loop"
    if kind == Change.STUCK_PARTITION:
        return "fix the stuck partition"
    if kind == Change.RACK_AWARE:
        # Short enough for the summary's change column (summary.WIDEST).
        was, now = r.declared_assignor, r.recommended_assignor
        if isinstance(was, str) and isinstance(now, str) and was != now:
            return f"{now} + client.rack"
        return "read in-zone (client.rack)"
    if kind == Change.KEEP or not isinstance(kind, str):
        return "keep"
    return f"{r.declared_assignor or 'current assignor'} -> {r.recommended_assignor}"


def saving(r: SavingRow, short: bool = False) -> str:
    """`4 of 9 rebalances, 120 paused partitions, 520.3 partition-s, 1,200 messages
    delayed`: what it saves, unknown and zero parts left out (`short`: the paused
    partitions only where no partition-time is known, `messages` for messages delayed); a
    change that saves no pause is made for balance or lag skew, which its reason
    quantifies, or (a stuck partition) to get data moving; rack_aware saves bytes read
    across zones: `120.5 GB/day across zones (2.41 a day)` (`short`: `(2.41/day)`)."""
    if r.change_kind == Change.RACK_AWARE and present(r.cross_zone_bytes_saved):
        amount = money(r.cross_zone_cost_saved) if present(r.cross_zone_cost_saved) else "n/a"
        per_day = f"{amount}/day" if short else f"{amount} a day"
        return f"{gb(r.cross_zone_bytes_saved)}/day across zones ({per_day})"
    parts = []
    timed = present(r.paused_partition_seconds_saved) and r.paused_partition_seconds_saved > 0
    if present(r.rebalances_saved) and r.rebalances_saved > 0:
        parts.append(f"{int(r.rebalances_saved)} of {int(r.rebalances)} rebalances")
    if (
        present(r.paused_partitions_saved)
        and r.paused_partitions_saved > 0
        and not (short and timed)
    ):
        n = int(r.paused_partitions_saved)
        parts.append(f"{n:,} paused partition{'s' * (n != 1)}")
    if timed:
        parts.append(partition_seconds(r.paused_partition_seconds_saved))
    if present(r.messages_delayed_saved) and r.messages_delayed_saved > 0:
        n = int(r.messages_delayed_saved)
        unit = ("message" if n == 1 else "messages") + ("" if short else " delayed")
        parts.append(f"{n:,} {unit}")
    if parts:
        return ", ".join(parts)
    if r.change_kind == Change.STUCK_PARTITION:
        return "a partition moving again"
    if r.change_kind == Change.KEEP or not isinstance(r.change_kind, str):
        return "-"
    return "better balance or lag skew (see why)"


def partition_seconds(value: float | None) -> str:
    """`1,234.5 partition-s`; `n/a` when unknown."""
    return f"{value:,.1f} {PARTITION_SECONDS}" if present(value) else "n/a"


def status_text(r: AttentionRow) -> str:
    last = r.last_status if isinstance(r.last_status, str) else "not rated"
    worst = r.worst_status if isinstance(r.worst_status, str) else None
    return last if worst in (None, last) else f"{last} (worst {worst})"
