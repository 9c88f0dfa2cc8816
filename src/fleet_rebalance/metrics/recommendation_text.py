"""The `reason` and `prerequisites` texts of a recommendation, as Spark columns.

They read the columns recommendations.py builds: `b_*` the baseline (the declared
assignor's replay, else `observed`), `r_*` the recommended row, `o_*` the best assignor
of the group's own protocol, and the what-if's `s_*`. No number is printed from a null
(an unknown mean lag skew reads `n/a` or its clause is left out). Prerequisites say what
Kafka's documentation asks for each change: KIP-429's two rolling bounces to go from an
eager assignor to a cooperative one, KIP-848's operations guide (Kafka 4.0) for the
consumer protocol, KIP-345 for static membership.
"""

from __future__ import annotations

import pyspark.sql.functions as F
from pyspark.sql import Column

from fleet_rebalance.metrics.protocols import CLASSIC_COORDINATOR, CONSUMER_GROUPS
from fleet_rebalance.vocabulary import Change, GroupType, RebalanceProtocol


def _text(value: Column) -> Column:
    return F.coalesce(value.cast("string"), F.lit(""))


def skew_text(value: Column) -> Column:
    """A mean lag skew with two decimals, `n/a` when unknown."""
    return F.when(value.isNull() | F.isnan(value), F.lit("n/a")).otherwise(
        F.format_string("%.2f", value)
    )


def _known(value: Column) -> Column:
    return value.isNotNull() & ~F.isnan(value)


def _plural(count: Column, word: str) -> Column:
    return F.concat(_text(count), F.lit(f" {word}"), F.when(count != 1, "s").otherwise(F.lit("")))


def saving_text(base: Column, new: Column, events: Column) -> Column:
    """`pauses 120 fewer partitions over 23 replayed events (-38 %)`, or as many, or more.
    Events, not rebalances: the replay counts each group's initial assignment too."""
    change = base - new
    percent = F.round(F.abs(change) * 100 / base).cast("long")
    share = F.when(
        base > 0,
        F.concat(F.lit(" ("), F.when(change > 0, "-").otherwise("+"), _text(percent), F.lit(" %)")),
    ).otherwise(F.lit(""))
    over = F.concat(F.lit(" over "), _plural(events, "replayed event"))
    return (
        F.when(base.isNull() | new.isNull(), F.concat(F.lit("paused partitions unknown"), over))
        .when(
            change > 0,
            F.concat(F.lit("pauses "), _text(change), F.lit(" fewer partitions"), over, share),
        )
        .when(
            change < 0,
            F.concat(F.lit("pauses "), _text(-change), F.lit(" more partitions"), over, share),
        )
        .otherwise(F.concat(F.lit("pauses as many partitions ("), _text(new), F.lit(")"), over))
    )


def _difference(saved: Column, unit: Column, shown: Column) -> Column:
    """`, 30.0 fewer partition-seconds` (or more); nothing when unknown or none."""
    return F.when(
        _known(saved) & (saved != 0),
        F.concat(
            F.lit(", "),
            shown,
            F.when(saved > 0, F.lit(" fewer ")).otherwise(F.lit(" more ")),
            unit,
        ),
    ).otherwise(F.lit(""))


def cost_text(seconds: Column, messages: Column) -> Column:
    """`, 30.0 fewer partition-seconds, 1,400 fewer messages delayed`: the savings in
    cost, formatted as the summary and the report format them."""
    one = F.abs(messages) == 1
    return F.concat(
        _difference(seconds, F.lit("partition-seconds"), F.format_number(F.abs(seconds), 1)),
        _difference(
            messages,
            F.when(one, F.lit("message delayed")).otherwise(F.lit("messages delayed")),
            F.format_number(F.abs(messages), 0),
        ),
    )


def _versus(name: str, new: Column, base: Column, show: Column) -> Column:
    return F.when(
        F.coalesce(show, F.lit(False)),
        F.concat(F.lit(f", {name} "), new, F.lit(" vs "), base),
    ).otherwise(F.lit(""))


def balance_and_skew_text() -> Column:
    """`, max count spread 1 vs 3, mean lag skew 1.20 vs n/a`: the clauses that differ."""
    chosen_spread, baseline_spread = F.col("chosen_spread"), F.col("baseline_spread")
    chosen_skew, baseline_skew = F.col("chosen_skew"), F.col("baseline_skew")
    skew_differs = skew_text(chosen_skew) != skew_text(baseline_skew)  # as shown: 2 decimals, n/a
    return F.concat(
        _versus(
            "max count spread",
            _text(chosen_spread),
            _text(baseline_spread),
            chosen_spread != baseline_spread,
        ),
        _versus("mean lag skew", skew_text(chosen_skew), skew_text(baseline_skew), skew_differs),
    )


def _baseline_name() -> Column:
    """The baseline as the reader knows it: the declared assignor, `(as observed)` when
    the numbers are what ran rather than its replay."""
    declared = F.coalesce(F.col("declared_assignor"), F.lit("the declared assignor"))
    return F.when(
        F.col("compared_with") == "observed", F.concat(declared, F.lit(" (as observed)"))
    ).otherwise(F.col("compared_with"))


def _eager_to_cooperative() -> Column:
    return (
        (F.col("protocol") != GroupType.CONSUMER)
        & (F.col("baseline_row_protocol") == RebalanceProtocol.EAGER)
        & (F.col("chosen_row_protocol") == RebalanceProtocol.COOPERATIVE)
    )


def _standing(side: str) -> Column:
    """`12 paused partitions (max count spread 0, mean lag skew 1.90)` of a side."""
    skew = F.when(
        _known(F.col(f"{side}_skew")),
        F.concat(F.lit(", mean lag skew "), skew_text(F.col(f"{side}_skew"))),
    ).otherwise(F.lit(""))
    return F.concat(
        _plural(F.col(f"{side}_paused"), "paused partition"),
        F.lit(" (max count spread "),
        _text(F.col(f"{side}_spread")),
        skew,
        F.lit(")"),
    )


def reason() -> Column:
    """One line: the change, what it saves in words, and why (or why nothing)."""
    kind, base = F.col("change_kind"), _baseline_name()
    tail = F.concat(
        saving_text(F.col("baseline_paused"), F.col("chosen_paused"), F.col("chosen_events")),
        cost_text(
            F.col("baseline_seconds") - F.col("chosen_seconds"),
            F.col("baseline_messages") - F.col("chosen_messages"),
        ),
        balance_and_skew_text(),
    )
    two_bounce = F.when(
        _eager_to_cooperative(),
        F.lit(
            "; needs the two-bounce rolling upgrade (first beside the eager assignor, then alone)"
        ),
    ).otherwise(F.lit(""))
    assignor = F.concat(
        F.col("recommended_assignor"), F.lit(" instead of "), base, F.lit(": "), tail, two_bounce
    )
    best_classic = F.when(
        F.col("own_assignor") != F.col("compared_with"),
        F.concat(
            F.lit("; the best classic assignor, "),
            F.col("own_assignor"),
            F.lit(", has "),
            _standing("own"),
        ),
    ).otherwise(F.concat(F.lit("; no classic assignor does better than "), base))
    migration = F.concat(
        F.lit("migrate to the consumer protocol (KIP-848) with "),
        F.col("recommended_assignor"),
        F.lit(" instead of "),
        base,
        F.lit(": "),
        tail,
        best_classic,
    )
    over = F.concat(
        F.lit(" over "),
        _plural(F.col("baseline_events"), "replayed event"),
        F.lit(" than its "),
        _standing("baseline"),
    )
    keep_name = F.coalesce(
        F.col("declared_assignor"), F.col("compared_with"), F.lit("the current assignor")
    )
    keep_classic = F.concat(
        F.lit("keep "),
        keep_name,
        F.lit(": no classic assignor"),
        F.when(
            F.col("migration_assignor").isNotNull(),
            F.lit(", nor uniform under the consumer protocol,"),
        ).otherwise(F.lit("")),
        F.lit(" does better"),
        over,
    )
    keep_consumer = F.concat(
        F.lit("keep "),
        keep_name,
        F.lit(
            ": the group runs the consumer protocol (KIP-848), whose assignor is server-side"
            " (classic client assignors do not apply), and no replayed server-side assignor"
            " does better"
        ),
        over,
    )
    unmeasured = F.concat(
        F.lit("keep "),
        keep_name,
        F.lit(
            ": what the group ran was not measured (no capture showed every member's "
            "assignment), so nothing is known to do better"
        ),
    )
    runner_up = F.when(
        F.col("runner_up_kind").isNotNull(),
        F.concat(
            F.lit("; more than switching to "),
            F.col("runner_up_assignor"),
            F.lit(", which saves "),
            _plural(F.col("runner_up_saved"), "paused partition"),
        ),
    ).otherwise(F.lit(""))
    # No share of the day's pauses: the what-if counts what ran, the baseline may be a replay.
    saved = F.concat(F.lit("pauses "), _text(F.col("what_if_paused")), F.lit(" fewer partitions"))
    static = F.concat(
        F.lit("static membership (group.instance.id) avoids "),
        _plural(F.col("what_if_rebalances"), "rebalance"),
        F.lit(" (members restarted and back within "),
        _text(F.col("static_timeout_s")),
        F.lit(" s): "),
        saved,
        cost_text(F.col("what_if_seconds"), F.col("what_if_messages")),
        runner_up,
    )
    return (
        F.when(kind == Change.STATIC_MEMBERSHIP, static)
        .when(kind == Change.PROTOCOL_MIGRATION, migration)
        .when(kind == Change.ASSIGNOR, assignor)
        .when(F.col("compared_with").isNull(), unmeasured)
        .when(F.col("protocol") == GroupType.CONSUMER, keep_consumer)
        .otherwise(keep_classic)
    )


def _brokers_clause() -> Column:
    brokers = F.col("brokers")
    return (
        F.when(
            brokers == CONSUMER_GROUPS,
            F.lit("brokers: this cluster already serves consumer-protocol groups; clients >= 4.0"),
        )
        .when(
            brokers == CLASSIC_COORDINATOR,
            F.lit(
                "brokers >= 4.0 first (this cluster's coordinator logs are the pre-4.0 "
                "GroupCoordinator's), then clients >= 4.0"
            ),
        )
        .otherwise(
            F.lit("brokers and clients >= 4.0 (this cluster's release is not in the captures)")
        )
    )


MIGRATION_STEPS = (
    "; the brokers' group.version feature >= 1 (on by default from 4.0; kafka-features.sh); "
    "every consumer rolled with group.protocol=consumer (partition.assignment.strategy is "
    "then ignored: uniform is first in the brokers' group.consumer.assignors by default, or "
    "set group.remote.assignor=uniform); session.timeout.ms and heartbeat.interval.ms give "
    "way to the brokers' group.consumer.session.timeout.ms and "
    "group.consumer.heartbeat.interval.ms; the running group converts during the roll only "
    "if the brokers' group.consumer.migration.policy allows upgrades (default bidirectional)"
)


def prerequisites() -> Column:
    """What the change takes; null for keep."""
    kind, rec = F.col("change_kind"), F.col("recommended_assignor")
    old = F.when(F.col("compared_with") == "observed", F.col("declared_assignor")).otherwise(
        F.col("compared_with")
    )
    both = F.when(old.isNotNull(), F.concat(rec, F.lit(","), old)).otherwise(
        F.concat(rec, F.lit(" listed first beside the current assignor"))
    )
    two_bounce = F.concat(
        F.lit(
            "two-bounce rolling upgrade (KIP-429), clients >= 2.4: roll every consumer with "
            "partition.assignment.strategy="
        ),
        both,
        F.lit(" (the group stays eager), then roll again with "),
        rec,
        F.lit(" alone"),
    )
    classic_swap = F.concat(
        F.lit("roll every consumer with partition.assignment.strategy="),
        both,
        F.lit(" (members need an assignor in common throughout; the group switches once all list "),
        rec,
        F.lit("), then drop the old one in a second roll"),
    )
    server_swap = F.concat(
        F.lit("roll every consumer with group.remote.assignor="),
        rec,
        F.lit(
            " (the brokers' group.consumer.assignors must list it; uniform is there and "
            "first by default)"
        ),
    )
    timeout_ms = F.col("static_timeout_s").cast("long") * 1000
    static_classic = F.concat(
        F.lit(
            "every consumer sets a unique group.instance.id that survives its restarts "
            "(e.g. the pod name) and session.timeout.ms >= "
        ),
        _text(timeout_ms),
        F.lit(
            " (the brokers' group.max.session.timeout.ms, default 1800000, must allow it); "
            "clients >= 2.3 (KIP-345)"
        ),
    )
    static_consumer = F.concat(
        F.lit(
            "every consumer sets a unique group.instance.id that survives its restarts "
            "(e.g. the pod name); the session timeout is the brokers' "
            "group.consumer.session.timeout.ms (default 45000, at most "
            "group.consumer.max.session.timeout.ms, default 60000), which must be >= "
        ),
        _text(timeout_ms),
    )
    return (
        F.when(
            kind == Change.PROTOCOL_MIGRATION, F.concat(_brokers_clause(), F.lit(MIGRATION_STEPS))
        )
        .when((kind == Change.ASSIGNOR) & (F.col("protocol") == GroupType.CONSUMER), server_swap)
        .when((kind == Change.ASSIGNOR) & _eager_to_cooperative(), two_bounce)
        .when(kind == Change.ASSIGNOR, classic_swap)
        .when(
            (kind == Change.STATIC_MEMBERSHIP) & (F.col("protocol") == GroupType.CONSUMER),
            static_consumer,
        )
        .when(kind == Change.STATIC_MEMBERSHIP, static_classic)
        .otherwise(F.lit(None).cast("string"))
    )
