"""The nightly's closing lines on the terminal: the report's first two sections, in the
same words (report/actions.py)."""

from __future__ import annotations

from fleet_rebalance.report import actions
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.svg import visible


def summary_lines(facts: DayFacts) -> list[str]:
    lines = [actions.headline(facts), actions.attention_title(facts) + ":"]
    lines += [f"  {group}: {why}" for group, why in actions.attention_rows(facts)]
    lines += _more(len(facts.attention), facts.attention_total)
    lines.append(actions.changes_title(facts) + ":")
    for c in actions.change_rows(facts):
        lines.append(f"  {c.group}: {c.change}; saves {c.saving}")
        lines.append(f"    why: {c.reason}")
        if c.prerequisites:
            lines.append(f"    prerequisites: {c.prerequisites}")
    lines += _more(len(facts.changes), actions.changes_total(facts))
    # Ids and names come from captures: bidi and control characters spelled out.
    return [visible(line) for line in lines]


def _more(shown: int, total: int) -> list[str]:
    line = actions.more(shown, total)
    return [f"  {line}"] if line else []
