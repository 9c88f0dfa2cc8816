"""The words of the report's first two sections, which the terminal summary prints too:
the groups that need attention and the changes to make, from group_health."""

from __future__ import annotations

from dataclasses import dataclass

from fleet_rebalance.metrics.attention import hms, present
from fleet_rebalance.metrics.recommendation_text import ASSIGNOR, KEEP, MIGRATION, STATIC
from fleet_rebalance.report.facts import DayFacts

KIND_ORDER = (ASSIGNOR, MIGRATION, STATIC, KEEP)


@dataclass(frozen=True)
class Change:
    group: str
    change: str
    prerequisites: str
    saving: str
    reason: str


def group_name(row) -> str:
    return f"{row.cluster}/{row.group_id}"


def headline(f: DayFacts) -> str:
    """The day in one line; the rebalances the captures saw reconciled with the logs'
    generations (several generations between two captures are one rebalance event)."""
    return (
        f"fleet_rebalance {f.run_date}: {f.groups} groups analysed, {f.rebalances} rebalances "
        f"(+{f.initial_events} initial joins), {f.generations_logged} generations in the "
        f"coordinator logs ({f.generations_matched} matched to those rebalances); "
        f"{f.replay_errors} replay errors, {f.quarantined} quarantined lines"
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
    return sum(n for kind, n in f.changes_by_kind.items() if kind != KEEP)


def more(shown: int, total: int) -> str | None:
    """The line after a capped list, or None when it is whole."""
    hidden = total - shown
    return f"... and {hidden} more (SELECT ... FROM group_health)" if hidden > 0 else None


def change_rows(f: DayFacts) -> list[Change]:
    return [
        Change(group_name(r), change_text(r), r.prerequisites or "", saving(r), r.change_reason)
        for r in f.changes.itertuples()
    ]


def change_text(r) -> str:
    """`range -> cooperative-sticky`, `migrate to the consumer protocol (uniform)`,
    `static membership (group.instance.id)`."""
    if r.change_kind == STATIC:
        return "static membership (group.instance.id)"
    if r.change_kind == MIGRATION:
        return f"migrate to the consumer protocol ({r.recommended_assignor})"
    return f"{r.declared_assignor or 'current assignor'} -> {r.recommended_assignor}"


def saving(r) -> str:
    """`4 of 9 rebalances, 120 fewer paused partitions, 0:05:20 less paused partition-time`:
    what it saves, unknown and zero parts left out; a change that saves no pause is made
    for balance or lag skew, which its reason quantifies."""
    parts = []
    if present(r.rebalances_saved) and r.rebalances_saved > 0:
        parts.append(f"{int(r.rebalances_saved)} of {int(r.rebalances)} rebalances")
    if present(r.paused_partitions_saved) and r.paused_partitions_saved > 0:
        parts.append(f"{int(r.paused_partitions_saved):,} fewer paused partitions")
    if present(r.paused_partition_seconds_saved) and r.paused_partition_seconds_saved > 0:
        parts.append(f"{hms(r.paused_partition_seconds_saved)} less paused partition-time")
    return ", ".join(parts) or "nothing in pauses; better balance or lag skew (see why)"
