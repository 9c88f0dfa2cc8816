"""What the advice must never contradict (issue 51), checked over every group and date of
a warehouse the nightly wrote: test_advice.py runs it on data/sample and generated
fleets, test_kafka_lab.py on the recorded (and live) labs. `problems` returns one line
per broken rule, naming the group, so a test asserts it is empty.

For every group of every date (recommendations, and group_health, which shows it):
- group_health's change is recommendations', column for column;
- no change the group already has: no static membership where its members captured a
  group.instance.id that day, no assignor change to the assignor it declares, no
  protocol migration but from the classic protocol; what stays keeps what runs;
- a protocol migration agrees with protocol_migration_plan: the plan lists the group,
  blocks it at most for its brokers (which the recommendation says to upgrade first),
  shows a gain, and the same savings;
- no change but a fault below the thresholds in cost (paused partition-seconds, messages
  delayed; paused partitions where no log times the rebalances), unless an assignor
  change balances the group or lowers its lag skew while a partition lagged the
  attention floor; no assignor or protocol change for a group that did not rebalance;
- the faults are named whatever they cost: a partition STALLed at the last capture while
  the group's others move is stuck_partition; a crash loop in the day's events (the
  rule of metrics/changes.py) is fix_crash_loop unless a stuck partition comes first;
- a change states what it saves, with its unit, in its reason, as the summary and the
  report show it (report/actions.py); keep saves nothing and needs nothing;
- rack_aware (issue 55) only where cross_zone_traffic has the group's row and shows the
  saving it states (follower fetching's, or its rack-aware replay's where it names the
  replay's assignor), at or above metrics.change_min_cross_zone_gb_saved, at the row's
  price; a switch of assignor only to the replay's, for the replay's saving; not to set
  client.rack where every member captured one; never keep
  where the way the group can take (metrics/rack_aware_rules.py's rule, restated here)
  saves that much, nor a saving in bytes beside another change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
from deltalake import DeltaTable

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.changes import UPGRADABLE, Limits, crash_loops
from fleet_rebalance.metrics.cross_zone_rules import GB, RACK_AWARE_ASSIGNORS, cost
from fleet_rebalance.metrics.group_health import FROM_RECOMMENDATIONS as MIRRORED
from fleet_rebalance.report import actions
from fleet_rebalance.vocabulary import Change

KEYS = ["cluster", "group_id", "date"]
TUNING = (
    Change.STATIC_MEMBERSHIP,
    Change.CONSUMER_CONFIG,
    Change.ASSIGNOR,
    Change.PROTOCOL_MIGRATION,
)


def problems(warehouse: Path, metrics: MetricsConfig | None = None) -> list[str]:
    """Every broken rule of the module docstring, over every group and date."""
    limits = Limits.of(metrics or MetricsConfig())
    facts = _facts(warehouse)
    found = []
    for group in facts.itertuples(index=False):
        where = f"{group.cluster}/{group.group_id} {group.date}"
        found += [f"{where}: {problem}" for problem in _group_problems(group, limits)]
    return found


def _group_problems(g: Any, limits: Limits) -> Iterator[str]:
    kind = g.change_kind
    for column in MIRRORED:
        if not _same(getattr(g, column), getattr(g, f"h_{column}")):
            yield f"group_health.{column} {getattr(g, f'h_{column}')!r} != {getattr(g, column)!r}"
    if g.reason != g.h_change_reason:
        yield "group_health.change_reason is not the recommendation's reason"
    yield from _already_had(g, kind)
    if kind == Change.PROTOCOL_MIGRATION:
        yield from _plan_disagrees(g)
    if kind in TUNING:
        yield from _not_worth_it(g, kind, limits)
    if g.stuck and kind != Change.STUCK_PARTITION:
        yield f"{kind}, with a stuck partition"
    if g.looping and not g.stuck and kind != Change.FIX_CRASH_LOOP:
        yield f"{kind}, with a crash loop of {sorted(g.looping)}"
    yield from _unstated(g, kind)
    yield from _cross_zone_disagrees(g, kind, limits)


def _runs(g: Any) -> Any:
    """What runs, as recommendations names it: the declared assignor, else the replayed
    baseline (none when only the observed assignment was measured)."""
    baseline = g.compared_with if g.compared_with != "observed" else None
    return _value(g.declared_assignor) or baseline


def _already_had(g: Any, kind: str) -> Iterator[str]:
    runs = _runs(g)
    if kind == Change.STATIC_MEMBERSHIP and g.instance_ids:
        yield f"static membership, but its members have group.instance.id {g.instance_ids}"
    if kind == Change.ASSIGNOR and g.recommended_assignor == runs:
        yield f"an assignor change to {runs}, which it runs"
    if kind == Change.PROTOCOL_MIGRATION and g.protocol != "classic":
        yield f"a protocol migration of a {g.protocol} group"
    switches = (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION, Change.RACK_AWARE)
    if kind not in switches and g.recommended_assignor != runs:
        yield f"{kind}, but the recommended assignor {g.recommended_assignor} is not {runs}"


def _plan_disagrees(g: Any) -> Iterator[str]:
    if not _value(g.readiness):
        yield "migrate, but protocol_migration_plan does not list the group"
        return
    blockers = set(g.blockers) - set(UPGRADABLE)
    if blockers:
        yield f"migrate, but the plan blocks it: {sorted(blockers)}"
    if not ((g.p_paused_partitions_saved or 0) > 0 or (g.p_paused_seconds_saved or 0) > 0):
        yield f"migrate, but the plan says nothing to gain: {g.plan_reason}"
    for ours, theirs in (
        ("paused_partitions_saved", "p_paused_partitions_saved"),
        ("paused_partition_seconds_saved", "p_paused_seconds_saved"),
    ):
        if not _same(getattr(g, ours), getattr(g, theirs)):
            yield f"{ours} {getattr(g, ours)!r}, the plan's {getattr(g, theirs)!r}"


def _not_worth_it(g: Any, kind: str, limits: Limits) -> Iterator[str]:
    seconds, messages = _value(g.paused_partition_seconds_saved), _value(g.messages_delayed_saved)
    partitions = _value(g.paused_partitions_saved)
    costs_less = (
        (seconds or 0) >= limits.seconds
        or (messages or 0) >= limits.messages
        or (seconds is None and (partitions or 0) >= limits.partitions)
    )
    lag = _value(g.max_lag)
    lagging = lag is not None and lag >= limits.min_lag
    skew = -(_value(g.mean_lag_skew_delta) or 0)
    spread_before, spread_after = (
        _value(g.declared_max_count_spread),
        _value(g.recommended_max_count_spread),
    )
    balances = spread_before is not None and spread_after is not None
    balances = balances and spread_before > 1 >= spread_after
    lag_gain = kind == Change.ASSIGNOR and (balances or skew >= limits.skew)
    if not costs_less and not (lag_gain and lagging):
        yield (
            f"{kind} saving {seconds} partition-seconds, {messages} messages delayed, "
            f"{partitions} paused partitions, lag skew {skew:.2f} lower (largest lag {lag}): "
            "below every threshold"
        )
    if kind in (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION) and not g.rebalances:
        yield f"{kind} for a group that did not rebalance"


def _unstated(g: Any, kind: str) -> Iterator[str]:
    reason = g.reason or ""
    seconds, messages = _value(g.paused_partition_seconds_saved), _value(g.messages_delayed_saved)
    partitions, rebalances = _value(g.paused_partitions_saved), _value(g.rebalances_saved)
    if kind == Change.KEEP:
        in_zone = _value(g.cross_zone_bytes_saved)
        if (
            (partitions or 0)
            or (seconds or 0)
            or (messages or 0)
            or (in_zone or 0)
            or _value(g.prerequisites)
        ):
            yield "keep, with a saving or prerequisites"
        if reason and not reason.startswith("keep "):
            yield f"keep, but the reason says {reason!r}"
        return
    if kind == Change.STUCK_PARTITION:
        return
    said = {
        "rebalances": (rebalances, rf"\b{rebalances:.0f} rebalances?\b" if rebalances else ""),
        "paused partitions": (
            partitions,
            rf"(pauses {partitions:,.0f} fewer partitions|\b{partitions:,.0f} paused partitions?)"
            if partitions
            else "",
        ),
        "partition-seconds": (
            seconds,
            rf"\b{re.escape(f'{seconds:,.1f}')} (fewer )?partition-seconds" if seconds else "",
        ),
        "messages delayed": (
            messages,
            rf"\b{messages:,.0f} (fewer )?messages? delayed" if messages else "",
        ),
    }
    for unit, (value, pattern) in said.items():
        if value and value > 0 and not re.search(pattern, reason):
            yield f"saves {value} {unit}, which its reason does not say: {reason!r}"
    shown = actions.saving(_saving_row(g))
    if shown == "-" or (shown.startswith("better") and kind != Change.ASSIGNOR):
        yield f"{kind}, which the summary shows saving {shown!r}"
    if seconds and seconds > 0 and actions.partition_seconds(seconds) not in shown:
        yield f"the summary shows {shown!r}, not {actions.partition_seconds(seconds)}"
    if (rebalances or 0) > g.rebalances:
        yield f"saves {rebalances} of its {g.rebalances} rebalances"


def _cross_zone_disagrees(g: Any, kind: str, limits: Limits) -> Iterator[str]:
    saved = _value(g.cross_zone_bytes_saved)
    price = _value(g.x_price_per_gb)
    if price is None:  # no cross_zone_traffic row: no broker zone known
        if kind == Change.RACK_AWARE or saved is not None:
            yield f"{kind} saving {saved} bytes across zones, but cross_zone_traffic has no row"
        return
    follower = g.x_cross_zone_leader_bytes - g.x_cross_zone_follower_bytes
    replayed = _value(g.x_rack_aware_saving_bytes)
    if kind != Change.RACK_AWARE:
        if kind != Change.KEEP and saved is not None:
            yield f"{kind}, with a saving of {saved} bytes across zones"
        possible = _possible(g, follower, replayed)
        if kind == Change.KEEP and possible >= limits.cross_zone_bytes:
            yield f"keep, but rack_aware would save {possible} bytes a day: {g.reason!r}"
        return
    if saved not in {follower, replayed}:
        yield (
            f"rack_aware saving {saved} bytes; cross_zone_traffic shows {follower} with "
            f"follower fetching and {replayed} rack-aware"
        )
    if (saved or 0) < limits.cross_zone_bytes:
        yield f"rack_aware saving {saved} bytes, below {limits.cross_zone_bytes}"
    if not _same(g.cross_zone_cost_saved, cost(saved or 0, price)):
        yield f"rack_aware cost {g.cross_zone_cost_saved}, not {saved} bytes at {price}"
    if f"{(saved or 0) / GB:,.1f} GB/day" not in (g.reason or ""):
        yield f"rack_aware saving {saved} bytes, which its reason does not say: {g.reason!r}"
    racked = 0 < (g.x_members or 0) == (g.x_members_client_rack or 0)
    if racked and "client.rack=<zone>" in (g.prerequisites or ""):
        yield f"rack_aware telling consumers that set client.rack to set it: {g.prerequisites!r}"
    switched = g.recommended_assignor != _runs(g)
    if switched and (g.recommended_assignor != g.x_rack_aware_assignor or saved != replayed):
        yield (
            f"rack_aware switching to {g.recommended_assignor}, not to the replayed "
            f"{g.x_rack_aware_assignor} for its saving"
        )


def _possible(g: Any, follower: int, replayed: int | None) -> int:
    """What the way the group can take saves (metrics/rack_aware_rules.py's rule): the
    rack-aware replay's for a classic group whose assignor is rack-aware, the larger of
    the two for roundrobin, else follower fetching's."""
    classic = g.x_protocol == "classic"
    declared = _value(g.declared_assignor)
    if classic and declared in RACK_AWARE_ASSIGNORS and replayed is not None:
        return replayed
    if classic and declared == "roundrobin" and replayed is not None:
        return max(follower, replayed)
    return follower


def _saving_row(g: Any) -> SimpleNamespace:
    """The group_health columns report/actions.py reads."""
    return SimpleNamespace(
        change_kind=g.h_change_kind,
        rebalances=g.rebalances,
        **{c: getattr(g, f"h_{c}") for c in MIRRORED if c.endswith("_saved")},
    )


def _facts(warehouse: Path) -> pd.DataFrame:
    """One row per group and date of recommendations with what the rules compare."""

    def table(name: str) -> pd.DataFrame:
        return DeltaTable(str(warehouse / name)).to_pandas()

    recs = table("recommendations")
    health = table("group_health")
    health = health[[*KEYS, "rebalances", "max_lag", *MIRRORED, "change_reason"]].rename(
        columns={c: f"h_{c}" for c in (*MIRRORED, "change_reason")}
    )
    plan = table("protocol_migration_plan")[
        [
            *KEYS,
            "readiness",
            "blockers",
            "paused_partitions_saved",
            "paused_partition_seconds_saved",
            "reason",
        ]
    ].rename(
        columns={
            "paused_partitions_saved": "p_paused_partitions_saved",
            "paused_partition_seconds_saved": "p_paused_seconds_saved",
            "reason": "plan_reason",
        }
    )
    traffic = table("cross_zone_traffic")[
        [
            *KEYS,
            "protocol",
            "price_per_gb",
            "cross_zone_leader_bytes",
            "cross_zone_follower_bytes",
            "rack_aware_assignor",
            "rack_aware_saving_bytes",
            "members",
            "members_client_rack",
        ]
    ]
    traffic = traffic.rename(columns={c: f"x_{c}" for c in traffic.columns if c not in KEYS})
    facts = (
        recs.merge(health, on=KEYS, how="left")
        .merge(plan, on=KEYS, how="left")
        .merge(traffic, on=KEYS, how="left")
        .merge(_instance_ids(table("members")), on=KEYS, how="left")
        .merge(_stuck(table("consumer_status")), on=KEYS, how="left")
        .merge(_loops(table("rebalance_events")), on=KEYS, how="left")
    )
    for column in ("instance_ids", "blockers", "looping"):
        facts[column] = [_items(v) for v in facts[column]]
    facts["stuck"] = facts["stuck"].fillna(False).astype(bool)
    facts["rebalances"] = facts["rebalances"].fillna(0).astype(int)
    return facts.astype(object).where(facts.notna(), None)


def _instance_ids(members: pd.DataFrame) -> pd.DataFrame:
    static = members[members["group_instance_id"].notna()]
    ids = static.groupby(["cluster", "group_id", "capture_date"])["group_instance_id"]
    found = ids.agg(lambda s: sorted(set(s))).rename("instance_ids").reset_index()
    return found.rename(columns={"capture_date": "date"})


def _stuck(status: pd.DataFrame) -> pd.DataFrame:
    """A partition STALLed at the last capture while another of the group's is not."""
    stalled = status.assign(stall=status["status"] == "STALL").groupby(KEYS)["stall"]
    both = stalled.agg(lambda s: bool(s.any() and not s.all())).rename("stuck")
    return both.reset_index()


def _loops(events: pd.DataFrame) -> pd.DataFrame:
    limits = Limits.of(MetricsConfig())
    moved = events[events["trigger"] != "initial"].rename(columns={"event_date": "date"})
    rows = [
        {**dict(zip(KEYS, key, strict=True)), "looping": sorted(crash_loops(
            part.to_dict("records"), limits))}
        for key, part in moved.groupby(KEYS)
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=[*KEYS, "looping"])


def _items(value: Any) -> list:
    return [] if value is None or isinstance(value, float) else list(value)


def _value(value: Any) -> Any:
    """A cell as a Python value: None for null or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _same(a: Any, b: Any) -> bool:
    a, b = _value(a), _value(b)
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, abs_tol=1e-9)
    return a == b
