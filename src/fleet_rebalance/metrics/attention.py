"""Why a group needs attention, in the words the summary and the report print.

A group needs attention when Burrow rates it WARN or ERR at the day's last capture (or
rated a partition STOP, STALL or REWIND earlier in the day; a WARN that passed is not
news), when it rebalanced at
least `metrics.attention_rebalances` times (initial joins not counted), when its mean lag
skew reaches `metrics.attention_lag_skew` while some partition lagged at least
`metrics.attention_min_lag` messages (a skew of 5 over a dozen messages is noise), or when
its partition counts are unbalanced (count spread above 1), when ownership_audit found
partitions owned by two members at once or orphaned (no owner, growing lag), or when
KIP-848 members stayed behind their target epoch (stuck reconciling). Severity
orders the list: 3 for Burrow ERR at the last capture, 2 for WARN and for an ownership
finding (duplicates processed, or messages nobody reads), 1 for everything else, 0 for a
group that needs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.vocabulary import Status

SEVERITY = {Status.ERR: 3, Status.WARN: 2}
OWNERSHIP_SEVERITY = 2
# The group_health row's ownership_audit findings: partition names (`orders-3`), sorted.
DOUBLE_OWNED_COLUMN = "double_owned_partitions"
ORPHANED_COLUMN = "orphaned_partitions"
# Partition statuses worth naming after the group recovered (a WARN that passed is not).
STUCK = (Status.STOP, Status.STALL, Status.REWIND)


@dataclass(frozen=True)
class Limits:
    """The conf's thresholds of attention (metrics.attention_*)."""

    rebalances: int
    lag_skew: float
    min_lag: int

    @classmethod
    def of(cls, m: MetricsConfig) -> Limits:
        return cls(m.attention_rebalances, m.attention_lag_skew, m.attention_min_lag)


def hms(seconds: float | None) -> str:
    """A duration as h:mm:ss (`0:00:07`, `26:03:10`); `n/a` when unknown."""
    if not present(seconds):
        return "n/a"
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def present(value: Any) -> TypeGuard[float]:
    """A number: not null, and not NaN (pandas hands a missing number over as either)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def causes_text(by_cause: Mapping[str, int] | list[tuple[str, int]] | None) -> str:
    """`5 deploy_restart, 4 poll_timeout`: most frequent first, ties by name (a map
    column reaches pandas as a dict or as key-value pairs)."""
    items = by_cause.items() if isinstance(by_cause, Mapping) else (by_cause or [])
    ranked = sorted(((c, int(n)) for c, n in items), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{n} {cause}" for cause, n in ranked)


def _named(value: Any) -> list[str]:
    """A partition-name list column as pandas hands it over (a numpy array or a list)."""
    return [] if value is None or (isinstance(value, float) and math.isnan(value)) else list(value)


def ownership_reasons(row: Mapping[str, Any]) -> list[str]:
    """`2 partitions owned by more than one member at once (orders-3, orders-7)`,
    `3 partitions with no owner and growing lag (...)` (metrics/ownership_rules.py)."""
    reasons = []
    for column, what in (
        (DOUBLE_OWNED_COLUMN, "owned by more than one member at once"),
        (ORPHANED_COLUMN, "with no owner and growing lag"),
    ):
        names = _named(row.get(column))
        if names:
            noun = "partition" if len(names) == 1 else "partitions"
            reasons.append(f"{len(names)} {noun} {what} ({_listed(names)})")
    return reasons


def _listed(names: list[str], limit: int = 5) -> str:
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


def attention(row: Mapping[str, Any], limits: Limits) -> tuple[int, list[str]]:
    """(severity, reasons) of one group_health row."""
    severity, reasons = 0, []
    last, worst = row.get("last_status"), row.get("worst_status")
    if last in SEVERITY:
        severity = SEVERITY[last]
        text = (
            f"Burrow {last} at the last capture: {int(row['non_ok_partitions'])} of "
            f"{int(row['partitions'])} partitions not OK"
        )
        reasons.append(text + (f" (worst of the day {worst})" if worst not in (None, last) else ""))
    elif worst in STUCK:
        severity = 1
        reasons.append(
            f"Burrow {worst} earlier in the day, {last or 'not rated'} at the last capture"
        )
    owned = ownership_reasons(row)
    if owned:
        severity = max(severity, OWNERSHIP_SEVERITY)
        reasons.extend(owned)
    stuck = row.get("members_stuck_reconciling")
    if present(stuck) and stuck > 0:
        severity = max(severity, 1)
        noun = "member" if stuck == 1 else "members"
        reasons.append(
            f"{int(stuck)} KIP-848 {noun} stuck reconciling (behind the target epoch in "
            "captures spanning metrics.reconcile_stuck_s or more)"
        )
    rebalances = int(row.get("rebalances") or 0)
    if rebalances >= limits.rebalances:
        severity = max(severity, 1)
        text = f"{rebalances} rebalances ({causes_text(row.get('rebalances_by_cause'))})"
        seconds = row.get("paused_partition_seconds")
        if present(seconds):
            text += f", {seconds:,.1f} paused partition-seconds"
        reasons.append(text)
    skew = row.get("mean_lag_skew")
    lagging = present(row.get("max_lag")) and row["max_lag"] >= limits.min_lag
    if present(skew) and skew >= limits.lag_skew and lagging:
        severity = max(severity, 1)
        reasons.append(
            f"mean lag skew {skew:.2f}: its most lagging member holds {skew:.2f}x "
            f"the mean member's lag (partition lag up to {int(row['max_lag']):,} messages)"
        )
    spread = row.get("max_count_spread")
    if present(spread) and spread > 1:
        severity = max(severity, 1)
        reasons.append(
            f"unbalanced: one member owns up to {int(spread)} partitions more than another"
        )
    return severity, reasons
