"""The nightly's closing lines on the terminal."""

from __future__ import annotations

from fleet_rebalance.metrics.recommendation_text import KEEP, STATIC
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.svg import visible


def summary_lines(facts: DayFacts) -> list[str]:
    lines = [
        f"fleet_rebalance {facts.run_date}: {facts.groups} groups analysed, "
        f"{facts.rebalances} rebalances, {facts.replay_errors} replay errors, "
        f"{facts.quarantined} quarantined lines",
        "top groups by paused partitions (observed; the recommended change, replayed):",
    ]
    for r in facts.top_paused.itertuples():
        change = _change(r, r.declared_paused_partitions, r.recommended_paused_partitions, _n)
        lines.append(f"  {r.cluster}/{r.group_id}: {r.observed_paused} observed; {change}")
    lines.append("top groups by mean lag skew (observed; the recommended change, replayed):")
    for r in facts.top_lag_skew.itertuples():
        change = _change(r, r.declared_mean_lag_skew, r.recommended_mean_lag_skew, _f)
        lines.append(f"  {r.cluster}/{r.group_id}: {_f(r.observed_lag_skew)} observed; {change}")
    lines.append(f"recommendations: {_recommended(facts.recommendations)}")
    statuses = ", ".join(f"{r.group_status} {r.count}" for r in facts.status_counts.itertuples())
    lines.append(f"consumer status (Burrow, per group): {statuses or 'no offsets'}")
    # Ids and names come from captures: bidi and control characters spelled out.
    return [visible(line) for line in lines]


def _change(r, declared, recommended, show) -> str:
    """The group's recommendation in a few words: a change reads `range 10 -> 4 under
    sticky (assignor)`, its numbers both replayed over the same rebalances; a keep never
    shows a number, so a worse one can never read as a recommendation."""
    kind = r.change_kind
    if not isinstance(kind, str):
        return "no recommendation"
    if kind == KEEP:
        return (
            f"keep {r.recommended_assignor}" if isinstance(r.recommended_assignor, str) else "keep"
        )
    if kind == STATIC:
        return f"static membership: {_saved(r.paused_partitions_saved)}"
    return (
        f"{r.compared_with} {show(declared)} -> {show(recommended)} "
        f"under {r.recommended_assignor} ({kind})"
    )


def _recommended(recs) -> str:
    """`cooperative-sticky 5 (assignor: 53 fewer paused partitions), keep 11`: the
    changes by assignor, then static membership and keep by count."""
    if not len(recs):
        return "none (no rebalances)"
    changes = recs[~recs.change_kind.isin([KEEP, STATIC])]
    parts = [
        f"{r.recommended_assignor} {r.groups} "
        f"({r.change_kind}: {_saved(r.paused_partitions_saved)})"
        for r in changes.itertuples()
    ]
    for kind in (STATIC, KEEP):
        groups = int(recs[recs.change_kind == kind].groups.sum())
        if groups:
            parts.append(f"{kind} {groups}")
    return ", ".join(parts)


def _saved(value) -> str:
    if value is None or value != value:
        return "paused partitions saved unknown"
    value = int(value)
    return f"{value} fewer paused partitions" if value >= 0 else f"{-value} more paused partitions"


def _n(value) -> str:
    return "n/a" if value is None or value != value else str(int(value))


def _f(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.2f}"
