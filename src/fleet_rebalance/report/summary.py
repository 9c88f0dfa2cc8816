"""The nightly's closing lines on the terminal."""

from __future__ import annotations

from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.svg import visible


def summary_lines(facts: DayFacts) -> list[str]:
    lines = [
        f"fleet_rebalance {facts.run_date}: {facts.groups} groups analysed, "
        f"{facts.rebalances} rebalances, {facts.replay_errors} replay errors, "
        f"{facts.quarantined} quarantined lines",
        "top groups by paused partitions (observed -> recommended):",
    ]
    for r in facts.top_paused.itertuples():
        lines.append(
            f"  {r.cluster}/{r.group_id}: {r.observed_paused} -> "
            f"{_n(r.recommended_paused_partitions)} under {r.recommended_assignor}"
        )
    lines.append("top groups by mean lag skew (observed -> recommended):")
    for r in facts.top_lag_skew.itertuples():
        lines.append(
            f"  {r.cluster}/{r.group_id}: {r.observed_lag_skew:.2f} -> "
            f"{_f(r.recommended_mean_lag_skew)} under {r.recommended_assignor}"
        )
    recommended = ", ".join(
        f"{r.recommended_assignor} {r.groups} ({r.changes} a change)"
        for r in facts.recommendations.itertuples()
    )
    lines.append(f"recommendations: {recommended or 'none (no rebalances)'}")
    statuses = ", ".join(f"{r.group_status} {r.count}" for r in facts.status_counts.itertuples())
    lines.append(f"consumer status (Burrow, per group): {statuses or 'no offsets'}")
    # Ids and names come from captures: bidi and control characters spelled out.
    return [visible(line) for line in lines]


def _n(value) -> str:
    return "-" if value is None or value != value else str(int(value))


def _f(value) -> str:
    return "-" if value is None or value != value else f"{value:.2f}"
