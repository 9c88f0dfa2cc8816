"""Share groups (KIP-932) in the lag metrics: what applies to them and what does not.

A share group's offsets rows (`kafka-share-groups.sh --describe`) hold START-OFFSET, the
share-partition start offset (SPSO: the first record not yet acknowledged, archived or
rejected), and from Kafka 4.2 the tool's LAG (KIP-1226); no committed offset, no log
end, no CONSUMER-ID. Bronze keeps the SPSO in offsets.start_offset and leaves
current_offset null.

lag_distribution applies: its offset lag is the tool's LAG, per partition and capture
like any group's. A 4.1 capture prints no LAG: its samples are unknown_lag_samples. Time
lag does not apply (time_lag_samples 0): it needs a consumer's position, and the SPSO is
none; records after it may be acknowledged already.

consumer_status does not apply, and rates no share group. Burrow's rules judge one
consumer's committed offsets, and the SPSO is neither:
- no consumer owns a share partition: every member assigned it fetches from it, and the
  offsets rows name none, so STOP (the consumer is gone) and STALL (it is alive but its
  offset stands still) cannot be told apart;
- the SPSO stands still while members acknowledge the records after it: a record at its
  start stays in flight until it is acknowledged or its delivery count runs out (each
  delivery holding the record for the acquisition lock's duration), so an unmoving SPSO
  over captures minutes apart is no stalled group, and STALL and WARN would flag healthy
  ones;
- it goes back only when an operator resets it (`--reset-offsets`), no rebalance
  re-committing an old offset, which is what REWIND's forgiveness is about.
A share group's progress is therefore read from its lag in lag_distribution. The
exclusion is not silent: report_unrated logs how many share groups consumer_status
leaves out each date.

ownership_audit leaves share groups out too (without_share_groups): their partitions
are held by many members at once by design, which is no double ownership.
"""

from __future__ import annotations

import datetime as dt
import logging

import pyspark.sql.functions as F
from pyspark.sql import DataFrame

from fleet_rebalance.vocabulary import GroupType

log = logging.getLogger("fleet_rebalance.metrics")


def share_groups(states: DataFrame) -> DataFrame:
    """(cluster, group_id) of every group a group_states row says is a share group."""
    return (
        states.where(F.col("group_type") == GroupType.SHARE)
        .select("cluster", "group_id")
        .distinct()
        if "group_type" in states.columns
        else states.where(F.lit(False)).select("cluster", "group_id")
    )


def report_unrated(states: DataFrame, run_date: dt.date) -> int:
    """Log, in one line, how many share groups of run_date's group_states consumer_status
    does not rate (see the module docstring), and return that count."""
    count = share_groups(states).count()
    if count:
        log.info(
            "consumer_status: %d share group(s) of %s not rated (Burrow's rules need one "
            "consumer's committed offsets; metrics/share_groups.py); their lag is in "
            "lag_distribution",
            count,
            run_date,
        )
    return count


def without_share_groups(members: DataFrame, states: DataFrame) -> DataFrame:
    """`members` without the share groups' rows, for the ownership audit: a share group
    hands each partition to many members by design (KIP-932), so a partition held twice
    is no finding there. A share member row of the plain `--members` layout has no
    group_type (the consumer tool prints the same layout): its group is known as a share
    group from group_states."""
    kept = members.join(share_groups(states), ["cluster", "group_id"], "left_anti")
    if "group_type" in members.columns:
        kept = kept.where(F.col("group_type").isNull() | (F.col("group_type") != GroupType.SHARE))
    return kept
