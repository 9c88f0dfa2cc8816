"""`recommendations`: per group and date, the one change the group should make.

Rule (DESIGN.md): an assignor is better than another when its max count spread is <= 1
and the other's is not, else when it pauses fewer partitions, else when its mean lag
skew is lower (unknown skew is the worst); equal on all three is not better. The
baseline is what the group runs: the declared assignor's replay (the strategy of its
latest state capture of the day), or `observed` when the declared assignor was not
replayed as the group's protocol runs it; `compared_with` says which.

A group only chooses within its protocol (protocols.py). A classic group's candidates
are the replayed classic assignors (built-in and plug-ins); `uniform` is KIP-848's
server-side assignor, so for a classic group it is a `protocol_migration`, recommended
only when it beats the best classic choice. A consumer-protocol group's candidates are
the replayed server-side assignors; a classic client assignor is never recommended to
it (KIP-848's server-side range is not replayed: such a group is compared as observed).
A best candidate that is not better than the baseline is `keep`.

Beside that choice, `static_membership` comes from the what-if of restarts
(`static_what_if`: per group and date, rebalances_avoided, paused_partitions_avoided,
paused_partition_seconds_avoided, messages_delayed_avoided) and is the row's change when
it saves more paused partitions than the assignor or protocol change (ties keep the
latter), never for a group whose members already have a group.instance.id (group
context's `instance_ids`); one row per group and date holds the top change. Savings are
against the baseline: paused_partitions_saved, paused_partition_seconds_saved and
messages_delayed_saved (where the rollup times events) and, for static membership,
rebalances_saved. Whether a change saves enough is changes.py's (final_changes).

Ratios are rounded to 4 decimals (SKEW_DIGITS): they are day means of ratios, and more
digits were float noise, not information. Mean lag skews are compared at 2 decimals
(SKEW_COMPARED_DIGITS), as the reason shows them: a skew lower by less than 0.01 is no
reason to change an assignor, let alone a protocol.
"""

from __future__ import annotations

from typing import Any

import pyspark.sql.functions as F
from pyspark.sql import Column, DataFrame
from pyspark.sql.types import StructType

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics import changes
from fleet_rebalance.metrics import rack_aware_rules as rack
from fleet_rebalance.metrics import recommendation_text as text
from fleet_rebalance.metrics.arrow_rows import map_rows
from fleet_rebalance.metrics.changes import Limits
from fleet_rebalance.metrics.protocols import SERVER_SIDE_ASSIGNORS, declared_protocol
from fleet_rebalance.replay.assignor_runs import OBSERVED
from fleet_rebalance.vocabulary import Change, GroupType, RebalanceProtocol, Status

GROUP = ["cluster", "group_id", "date"]
SKEW_DIGITS = 4
SKEW_COMPARED_DIGITS = 2
MEASURES = [
    "assignor",
    "row_protocol",
    "events",
    "paused",
    "seconds",
    "messages",
    "spread",
    "skew",
    "stickiness",
    "key",
]
# stickiness.paused_partition_seconds and messages_delayed, where the rollup has them (the
# replay times events from coordinator logs): an assignor change's savings in cost.
SECONDS, MESSAGES = "paused_partition_seconds", "messages_delayed"
WHAT_IF = {  # the what-if's column -> (name here, type)
    "rebalances_avoided": ("what_if_rebalances", "int"),
    "paused_partitions_avoided": ("what_if_paused", "long"),
    "paused_partition_seconds_avoided": ("what_if_seconds", "double"),
    "messages_delayed_avoided": ("what_if_messages", "long"),
}
COMPARED = {  # output name -> measure
    "paused_partitions": "paused",
    "max_count_spread": "spread",
    "mean_lag_skew": "skew",
    "stickiness": "stickiness",
}


def declared_strategies(group_states: DataFrame) -> DataFrame:
    known = group_states.where(F.col("assignment_strategy").isNotNull())
    return known.groupBy("cluster", "group_id", F.col("capture_date").alias("date")).agg(
        F.max_by("assignment_strategy", "captured_at").alias("declared_assignor")
    )


def rounded(value: Column, digits: int = SKEW_DIGITS) -> Column:
    """value to `digits` decimals; NaN as null (an unknown ratio, never a number)."""
    return F.when(F.isnan(value), F.lit(None).cast("double")).otherwise(F.round(value, digits))


def recommendations(
    stickiness: DataFrame,
    skew: DataFrame,
    declared: DataFrame,
    groups: DataFrame | None = None,
    static_what_if: DataFrame | None = None,
    static_session_timeout_s: int = MetricsConfig().static_session_timeout_s,
) -> DataFrame:
    """One row per group and date. `groups` is protocols.group_context's (protocol,
    brokers and instance_ids; without it a group declaring a server-side assignor is
    `consumer`, any other `classic`, and none is static); `static_what_if` as in the
    module docstring; the timeout is the one the what-if assumed, named in the static
    membership prerequisites."""
    rows = _measured(stickiness, skew, _context(declared, groups))
    kind, protocol = F.col("kind"), F.col("protocol")
    own = ((kind == GroupType.CLASSIC) & (protocol == GroupType.CLASSIC)) | (
        (kind == "server") & (protocol == GroupType.CONSUMER)
    )
    migration = (kind == "server") & (protocol == GroupType.CLASSIC)
    declared_last = F.coalesce(
        (F.col("assignor") != F.col("declared_assignor")).cast("int"), F.lit(1)
    )
    best_first = F.struct("key", declared_last.alias("declared_last"), "assignor")
    measures = F.struct(*MEASURES)

    def first(condition: Column, order: Column) -> Column:
        """The measures of the group's first row in `order` among those meeting condition
        (min_by passes over null orderings)."""
        return F.min_by(measures, F.when(condition, order))

    picked = (
        rows.groupBy(*GROUP)
        .agg(
            F.max("declared_assignor").alias("declared_assignor"),
            F.max("protocol").alias("protocol"),
            F.max("brokers").alias("brokers"),
            F.max("static_group").alias("static_group"),
            first(own, best_first).alias("own"),
            first(migration, best_first).alias("migration"),
            first((own & (declared_last == 0)) | (kind == OBSERVED), declared_last).alias(
                "baseline"
            ),
            F.max(kind != OBSERVED).alias("_replayed"),
        )
        .where("_replayed")
    )
    joined = picked.select(
        *GROUP,
        "declared_assignor",
        "protocol",
        "brokers",
        "static_group",
        *[
            F.col(f"{side}.{m}").alias(f"{side}_{m}")
            for side in ("own", "migration", "baseline")
            for m in MEASURES
        ],
    )
    return _decide(_with_what_if(joined, static_what_if), static_session_timeout_s)


def _context(declared: DataFrame, groups: DataFrame | None) -> DataFrame:
    if groups is None:
        return declared.select(
            *GROUP,
            "declared_assignor",
            declared_protocol(F.col("declared_assignor")).alias("_protocol"),
            F.lit(None).cast("string").alias("brokers"),
            F.lit(False).alias("static_group"),
        )
    static = F.size(F.coalesce("instance_ids", F.array())) > 0
    return declared.join(
        groups.select(
            *GROUP, F.col("protocol").alias("_protocol"), "brokers", static.alias("static_group")
        ),
        GROUP,
        how="full",
    )


def _measured(stickiness: DataFrame, skew: DataFrame, context: DataFrame) -> DataFrame:
    """Each replayed assignor's day in the rule's terms, with its group's context."""
    rows = (
        stickiness.select(
            *GROUP,
            "assignor",
            F.col("protocol").alias("row_protocol"),
            "events",
            "kept",
            "paused_partitions",
            (F.col(SECONDS) if SECONDS in stickiness.columns else F.lit(None))
            .cast("double")
            .alias("_seconds"),
            (F.col(MESSAGES) if MESSAGES in stickiness.columns else F.lit(None))
            .cast("long")
            .alias("_messages"),
            "stickiness",
        )
        .join(
            skew.select(*GROUP, "assignor", "max_count_spread", "mean_lag_skew"),
            [*GROUP, "assignor"],
            how="inner",
        )
        .join(context, GROUP, how="left")
    )
    assignor = F.col("assignor")
    protocol = F.coalesce(F.col("_protocol"), declared_protocol(F.col("declared_assignor")))
    kind = (
        F.when(assignor == OBSERVED, OBSERVED)
        .when(assignor.isin(*SERVER_SIDE_ASSIGNORS), "server")
        .otherwise(GroupType.CLASSIC)
    )
    # The replay measures `observed` of a group declaring server-side range as eager; under
    # the consumer protocol only the partitions that move pause (DESIGN: all - kept).
    eager_observed = (assignor == OBSERVED) & (F.col("row_protocol") == RebalanceProtocol.EAGER)
    recounted = eager_observed & (protocol == GroupType.CONSUMER)
    paused = F.when(recounted, F.col("paused_partitions") - F.col("kept")).otherwise(
        F.col("paused_partitions")
    )
    # Per event only: not recounted here.
    seconds = F.when(~recounted, F.col("_seconds"))
    messages = F.when(~recounted, F.col("_messages"))
    skew_value = rounded(F.col("mean_lag_skew"))
    unbalanced = F.coalesce((F.col("max_count_spread") > 1).cast("int"), F.lit(1))
    key = F.struct(
        unbalanced.alias("unbalanced"),
        F.coalesce(paused, F.lit(2**63 - 1)).alias("paused"),
        F.coalesce(F.round(skew_value, SKEW_COMPARED_DIGITS), F.lit(float("inf"))).alias("skew"),
    )
    return rows.select(
        *GROUP,
        "declared_assignor",
        protocol.alias("protocol"),
        "brokers",
        F.coalesce("static_group", F.lit(False)).alias("static_group"),
        "assignor",
        "row_protocol",
        "events",
        paused.alias("paused"),
        seconds.alias("seconds"),
        messages.alias("messages"),
        F.col("max_count_spread").alias("spread"),
        skew_value.alias("skew"),
        rounded(F.col("stickiness")).alias("stickiness"),
        kind.alias("kind"),
        key.alias("key"),
    )


def _with_what_if(joined: DataFrame, what_if: DataFrame | None) -> DataFrame:
    if what_if is None:
        return joined.select(
            "*", *[F.lit(None).cast(kind).alias(name) for name, kind in WHAT_IF.values()]
        )
    avoided = what_if.select(
        *GROUP, *[F.col(c).cast(kind).alias(name) for c, (name, kind) in WHAT_IF.items()]
    )
    return joined.join(avoided, GROUP, how="left")


def _pick(condition: Column, then: str, otherwise: str) -> list[Column]:
    return [
        F.when(condition, F.col(f"{then}_{m}")).otherwise(F.col(f"{otherwise}_{m}")).alias(f"_{m}")
        for m in MEASURES
    ]


def _decide(joined: DataFrame, static_timeout_s: int) -> DataFrame:
    """The change of each group, its numbers, savings and texts."""
    better = F.col("own_key") < F.col("baseline_key")
    own_better = F.coalesce(better, F.lit(False))
    step = joined.select("*", *_pick(own_better, "own", "baseline"))
    migrate = F.coalesce(
        (F.col("protocol") == GroupType.CLASSIC) & (F.col("migration_key") < F.col("_key")),
        F.lit(False),
    )
    step = step.select(
        "*",
        F.when(migrate, Change.PROTOCOL_MIGRATION)
        .when(own_better, Change.ASSIGNOR)
        .otherwise(Change.KEEP)
        .alias("_change"),
    )
    step = step.select(
        *[c for c in step.columns if not c.startswith("_") or c == "_change"],
        *[
            F.when(migrate, F.col(f"migration_{m}"))
            .otherwise(F.col(f"_{m}"))
            .alias(f"candidate_{m}")
            for m in MEASURES
        ],
    )
    change_saved = F.when(
        F.col("_change") != Change.KEEP, F.col("baseline_paused") - F.col("candidate_paused")
    )
    static_wins = F.coalesce(
        ~F.col("static_group")
        & (F.col("what_if_rebalances") > 0)
        & (F.col("what_if_paused") > F.coalesce(change_saved, F.lit(0))),
        F.lit(False),
    )
    step = step.select(
        "*",
        F.when(static_wins, Change.STATIC_MEMBERSHIP)
        .otherwise(F.col("_change"))
        .alias("change_kind"),
        F.when(static_wins & (F.col("_change") != Change.KEEP), F.col("_change")).alias(
            "runner_up_kind"
        ),
        F.col("candidate_assignor").alias("runner_up_assignor"),
        change_saved.alias("runner_up_saved"),
        F.lit(static_timeout_s).alias("static_timeout_s"),
    )
    stays = F.col("change_kind").isin(Change.KEEP, Change.STATIC_MEMBERSHIP)
    step = step.select(
        "*",
        *[
            F.when(stays, F.col(f"baseline_{m}"))
            .otherwise(F.col(f"candidate_{m}"))
            .alias(f"chosen_{m}")
            for m in MEASURES
        ],
    )
    current = F.coalesce(
        F.col("declared_assignor"),
        F.when(F.col("baseline_assignor") != OBSERVED, F.col("baseline_assignor")),
    )
    step = step.select(
        "*",
        F.when(stays, current).otherwise(F.col("chosen_assignor")).alias("recommended_assignor"),
        F.col("baseline_assignor").alias("compared_with"),
    )
    kind = F.col("change_kind")
    saved = (
        F.when(kind == Change.STATIC_MEMBERSHIP, F.col("what_if_paused"))
        .when(kind == Change.KEEP, F.when(F.col("baseline_paused").isNotNull(), F.lit(0)))
        .otherwise(F.col("baseline_paused") - F.col("chosen_paused"))
    )
    seconds_saved = (
        F.when(kind == Change.STATIC_MEMBERSHIP, F.col("what_if_seconds"))
        .when(kind == Change.KEEP, F.when(F.col("baseline_seconds").isNotNull(), F.lit(0.0)))
        # Both sides are whole milliseconds (rollups.seconds_sum): so is the difference.
        .otherwise(F.round(F.col("baseline_seconds") - F.col("chosen_seconds"), 3))
    )
    messages_saved = (
        F.when(kind == Change.STATIC_MEMBERSHIP, F.col("what_if_messages"))
        .when(kind == Change.KEEP, F.when(F.col("baseline_messages").isNotNull(), F.lit(0)))
        .otherwise(F.col("baseline_messages") - F.col("chosen_messages"))
    )

    def delta(name: str, measure: str) -> Column:
        difference = F.col(f"chosen_{measure}") - F.col(f"baseline_{measure}")
        if name in ("mean_lag_skew", "stickiness"):
            difference = rounded(difference)
        return difference.alias(f"{name}_delta")

    return step.select(
        *GROUP,
        "declared_assignor",
        "recommended_assignor",
        "compared_with",
        F.coalesce("chosen_events", "own_events").alias("events"),
        *[
            F.col(f"{side}_{measure}").alias(f"{label}_{name}")
            for name, measure in COMPARED.items()
            for side, label in (("baseline", "declared"), ("chosen", "recommended"))
        ],
        *[delta(name, measure) for name, measure in COMPARED.items()],
        text.reason().alias("reason"),
        kind,
        "protocol",
        text.prerequisites().alias("prerequisites"),
        saved.cast("long").alias("paused_partitions_saved"),
        F.when(kind == Change.STATIC_MEMBERSHIP, F.col("what_if_rebalances"))
        .cast("int")
        .alias("rebalances_saved"),
        seconds_saved.cast("double").alias("paused_partition_seconds_saved"),
        messages_saved.cast("long").alias("messages_delayed_saved"),
        # rack_aware's, which final_changes weighs (cross_zone_traffic's figures).
        F.lit(None).cast("long").alias("cross_zone_bytes_saved"),
        F.lit(None).cast("double").alias("cross_zone_cost_saved"),
        "brokers",
    )


def stuck_partitions(consumer_status: DataFrame) -> DataFrame:
    """cluster, group_id, date, topic, partition, offset, lag, since: partitions Burrow
    rates STALL at the day's last capture in groups whose other partitions are not all
    STALL (one record the consumer cannot pass, not a consumer that stopped), with the
    committed offset they sit at."""
    by_group = consumer_status.groupBy(*GROUP).agg(
        F.count_if(F.col("status") != Status.STALL).alias("_moving")
    )
    return (
        consumer_status.where(F.col("status") == Status.STALL)
        .join(by_group.where(F.col("_moving") > 0), GROUP, how="left_semi")
        .select(
            *GROUP,
            "topic",
            "partition",
            F.col("current_offset").alias("offset"),
            F.col("current_lag").alias("lag"),
            F.when(F.col("worst_status") == Status.STALL, F.col("worst_status_at"))
            .otherwise(F.col("evaluated_at"))
            .alias("since"),
        )
    )


def cross_zone_facts(traffic: DataFrame, stickiness: DataFrame, skew: DataFrame) -> DataFrame:
    """Per group and date, the cross_zone_traffic columns the rack_aware change reads
    (rack_aware_rules.COLUMNS) and, under RACK_AWARE_MEASURES' names, the day's replay of
    its rack-aware assignor as recommendations measures an assignor: the recommended
    side of a group told to switch to it."""
    measured = stickiness.select(
        *GROUP,
        F.col("assignor").alias("rack_aware_assignor"),
        F.col("paused_partitions").alias("rack_aware_paused_partitions"),
        rounded(F.col("stickiness")).alias("rack_aware_stickiness"),
    ).join(
        skew.select(
            *GROUP,
            F.col("assignor").alias("rack_aware_assignor"),
            F.col("max_count_spread").alias("rack_aware_max_count_spread"),
            rounded(F.col("mean_lag_skew")).alias("rack_aware_mean_lag_skew"),
        ),
        [*GROUP, "rack_aware_assignor"],
        how="inner",
    )
    return traffic.select(*GROUP, *rack.COLUMNS).join(
        measured, [*GROUP, "rack_aware_assignor"], how="left"
    )


# cross_zone_facts' measures of the rack-aware assignor, by recommendations' COMPARED name.
RACK_AWARE_MEASURES = {name: f"rack_aware_{name}" for name in COMPARED}


def final_changes(
    recommended: DataFrame,
    rebalances: DataFrame,
    replay_metrics: DataFrame,
    stuck: DataFrame,
    groups: DataFrame,
    limits: Limits,
    schema: StructType,
    cross_zone: DataFrame | None = None,
) -> DataFrame:
    """recommendations' rows with each group's final change (changes.decide): the
    faults and consumer settings the day's rebalances and statuses call for beside the
    assignor, protocol and static-membership choice, and the rack_aware change its
    cross-zone reads call for, and only changes whose gain is material. `rebalances`:
    the date's non-initial rebalance_events (with `date`); `replay_metrics`: the date's;
    `stuck`: stuck_partitions'; `groups`: cluster, group_id, date, instance_ids
    (protocols.group_context's) and max_lag (the group's largest lag,
    group_health.largest_lag); `cross_zone`: cross_zone_facts' (without it, or for a
    group it has no row of, no rack_aware). The result is in `schema` (the
    recommendations table's)."""
    baseline = recommended.select(*GROUP, F.col("compared_with").alias("assignor"))
    costs = replay_metrics.withColumnRenamed("event_date", "date").join(
        baseline, [*GROUP, "assignor"], how="left_semi"
    )
    cost_columns = ["paused_partitions", "paused_partition_seconds", "messages_delayed"]
    costed = rebalances.join(
        costs.select(*GROUP, "event_seq", *cost_columns), [*GROUP, "event_seq"], how="left"
    )
    events = costed.groupBy(*GROUP).agg(
        F.collect_list(
            F.struct("event_seq", "cause", "departed", "returned", "away_ms", *cost_columns)
        ).alias("_events")
    )
    stalled = stuck.groupBy(*GROUP).agg(
        F.collect_list(F.struct("topic", "partition", "offset", "lag", "since")).alias("_stuck")
    )
    facts = groups.select(*GROUP, F.col("instance_ids").alias("_instance_ids"), "max_lag")
    joined = (
        recommended.join(events, GROUP, how="left")
        .join(stalled, GROUP, how="left")
        .join(facts, GROUP, how="left")
    )
    if cross_zone is not None:
        found = [c for c in cross_zone.columns if c not in GROUP]
        joined = joined.join(
            cross_zone.select(*GROUP, F.struct(*found).alias(CROSS_ZONE)), GROUP, how="left"
        )
    return map_rows(joined, lambda rows: [_decided(row, limits) for row in rows], schema)


CROSS_ZONE = "_cross_zone"


def _decided(row: dict[str, Any], limits: Limits) -> dict[str, Any]:
    events = row.pop("_events", None) or []
    stuck = row.pop("_stuck", None) or []
    cross_zone = row.pop(CROSS_ZONE, None)
    group = changes.GroupFacts.of(
        row.pop("_instance_ids", None), row.get("protocol"), row.pop("max_lag", None), cross_zone
    )
    change = changes.decide(row, events, stuck, limits, group)
    changed_assignor = change.pop("changed_assignor")
    was = row["change_kind"]
    row.update(change)
    if not changed_assignor and was in (Change.ASSIGNOR, Change.PROTOCOL_MIGRATION):
        # What runs stays: the recommended side is the baseline's.
        row["recommended_assignor"] = row["declared_assignor"] or row["compared_with"]
        for name in COMPARED:
            row[f"recommended_{name}"] = row[f"declared_{name}"]
            row[f"{name}_delta"] = None if row[f"declared_{name}"] is None else 0
    if changed_assignor and row["change_kind"] == Change.RACK_AWARE:
        # A switch to the rack-aware assignor: the recommended side is its replay.
        for name, column in RACK_AWARE_MEASURES.items():
            value, declared = (cross_zone or {}).get(column), row[f"declared_{name}"]
            row[f"recommended_{name}"] = value
            row[f"{name}_delta"] = _delta(name, value, declared)
    return row


def _delta(name: str, value: Any, declared: Any) -> Any:
    """recommended - declared as _decide's delta gives it (ratios rounded); null where
    either is unknown."""
    if value is None or declared is None:
        return None
    if name in ("mean_lag_skew", "stickiness"):
        return round(value - declared, SKEW_DIGITS)
    return value - declared
