"""The rack_aware change (metrics/rack_aware_rules.py, weighed in metrics/changes.py) on
hand-built cross_zone_traffic rows: which way each group can take, what it says and
needs, the threshold in decimal GB a day, and how it is weighed against the faults and
the tuning changes; and how the summary and the report show it (report/actions.py). No
Spark: the cross_zone_traffic row is the dict final_changes hands over."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from test_changes import STATIC

from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.changes import GroupFacts, Limits, decide
from fleet_rebalance.pipeline import gold
from fleet_rebalance.report import actions

LIMITS = Limits.of(MetricsConfig())
GB = 10**9
SELECTOR = (
    "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector on every "
    "broker (KIP-392, brokers 2.4+; a static config, so a rolling restart of the brokers, and "
    "it serves every consumer of the cluster that sets client.rack); a follower serves a "
    "record once it learns the high watermark is past it, a little later than the leader"
)
NOW = (
    "cross-zone reads: 120.5 GB of the group's reads crossed zones today, from the leaders of "
    "3 of the 8 partitions it read"
)
FOLLOWER = (
    "with follower fetching (KIP-392) each consumer reads from an in-sync replica in its own "
    "zone, and 12.3 GB would still cross (no replica in the reader's zone)"
)


def traffic(protocol="classic", assignor=None, replayed=None, leader=120_500_000_000,
            follower=12_300_000_000) -> dict:  # fmt: skip
    """A cross_zone_traffic row: `leader` bytes crossing now, `follower` still crossing
    with follower fetching, the rack-aware replay's assignor and saving (null: a member's
    zone unknown), 3 of 8 partitions crossing, at 0.02 per GB."""
    return {
        "cross_zone_leader_bytes": leader,
        "cross_zone_follower_bytes": follower,
        "partitions_read": 8,
        "partitions_cross_zone_leader": 3,
        "price_per_gb": 0.02,
        "protocol": protocol,
        "rack_aware_assignor": assignor,
        "rack_aware_saving_bytes": replayed,
    }


def keep_row(declared: str | None, reason: str = "keep ...") -> dict:
    return {"change_kind": "keep", "declared_assignor": declared, "reason": reason}


def decided(declared, row, recommended=None, events=(), stuck=()):
    facts = GroupFacts.of(None, row["protocol"], None, row)
    return decide(recommended or keep_row(declared), list(events), list(stuck), LIMITS, facts)


def test_a_consumer_protocol_group_is_told_follower_fetching_in_gb_and_cost():
    """Given: a KIP-848 group whose reads crossed 120.5 GB from the leaders, 12.3 GB of
    them with no in-sync replica in the reader's zone. Then: rack_aware with follower
    fetching only (the brokers' 4.x assignors ignore racks). Expected: 108.2 GB/day
    saved, 2.164 at 0.02 per GB, no saving in pauses, client.rack and the selector."""
    got = decided("uniform", traffic("consumer", replayed=108_200_000_000))
    assert got == {
        "change_kind": "rack_aware",
        "changed_assignor": False,
        "reason": (
            f"{NOW}; {FOLLOWER}; the consumer protocol's assignors (Kafka 4.x) ignore "
            "client.rack, so follower fetching is what the group can use; it saves 108.2 "
            "GB/day, 2.16 at zones.price_per_gb 0.02"
        ),
        "prerequisites": (
            "client.rack=<zone> on every consumer: its own availability zone, spelled as the "
            "broker.rack of the brokers there (clients 2.4+); the consumer protocol also "
            f"sends it to the brokers' assignors, which ignore it in 4.x; {SELECTOR}"
        ),
        "paused_partitions_saved": None,
        "rebalances_saved": None,
        "paused_partition_seconds_saved": None,
        "messages_delayed_saved": None,
        "cross_zone_bytes_saved": 108_200_000_000,
        "cross_zone_cost_saved": 2.164,
    }


def test_a_range_group_gets_its_rack_aware_replays_saving():
    """Given: a classic range group whose rack-aware replay (KIP-881 range with follower
    fetching) reads everything in zone: 120.5 GB saved, more than follower fetching's
    108.2. Then: rack_aware keeping range (client.rack turns KIP-881 on in it), clients
    3.5+. Expected: the replay's 120.5 GB/day, 2.41."""
    got = decided("range", traffic(assignor="range", replayed=120_500_000_000))
    assert got["reason"] == (
        f"{NOW}; with client.rack set, range gives each consumer partitions with a replica in "
        "its zone where balance allows (KIP-881), and with follower fetching 0.0 GB would "
        "still cross, as the replay of the day's captures shows; it saves 120.5 GB/day, 2.41 "
        "at zones.price_per_gb 0.02"
    )
    assert got["prerequisites"] == (
        "client.rack=<zone> on every consumer: its own availability zone, spelled as the "
        "broker.rack of the brokers there (clients 2.4+), clients 3.5+ for KIP-881's "
        f"rack-aware range (older clients only fetch from followers); {SELECTOR}"
    )
    assert (got["changed_assignor"], got["cross_zone_bytes_saved"]) == (False, 120_500_000_000)
    assert got["cross_zone_cost_saved"] == 2.41


def test_a_roundrobin_group_switches_only_where_the_rack_aware_replay_saves_more():
    """Given: a roundrobin group (no rack logic), its replay under cooperative-sticky.
    Then: where the replay saves 120.5 GB against follower fetching's 108.2, switch to
    cooperative-sticky with the two-bounce upgrade (eager to cooperative); where it saves
    the same 108.2, follower fetching keeping roundrobin (a tie keeps the assignor)."""
    more = decided("roundrobin", traffic(assignor="cooperative-sticky", replayed=120_500_000_000))
    assert more["change_kind"] == "rack_aware"
    assert (more["changed_assignor"], more["recommended_assignor"]) == (True, "cooperative-sticky")
    assert more["reason"] == (
        f"{NOW}; cooperative-sticky with client.rack set gives each consumer partitions with a "
        "replica in its zone where balance allows (KIP-881), and with follower fetching 0.0 "
        "GB would still cross, as its replay of the day's captures shows; follower fetching "
        "alone, keeping roundrobin, would save 108.2 GB/day; needs the two-bounce rolling "
        "upgrade (first beside the eager assignor, then alone); it saves 120.5 GB/day, 2.41 "
        "at zones.price_per_gb 0.02"
    )
    assert more["prerequisites"] == (
        "two-bounce rolling upgrade (KIP-429): roll every consumer with client.rack=<zone> and "
        "partition.assignment.strategy=cooperative-sticky,roundrobin (the group stays eager), "
        "then roll again with cooperative-sticky alone; clients 3.5+ (KIP-881); client.rack "
        "is each consumer's availability zone, spelled as the broker.rack of the brokers "
        f"there; {SELECTOR}"
    )
    same = decided("roundrobin", traffic(assignor="cooperative-sticky", replayed=108_200_000_000))
    assert (same["change_kind"], same["changed_assignor"]) == ("rack_aware", False)
    assert "recommended_assignor" not in same
    assert same["reason"] == (
        f"{NOW}; {FOLLOWER}; switching to a rack-aware assignor (KIP-881) would save no more "
        "than follower fetching with roundrobin; it saves 108.2 GB/day, 2.16 at "
        "zones.price_per_gb 0.02"
    )


def test_a_plug_in_assignor_is_kept_and_told_follower_fetching():
    """Given: a classic group on a plug-in assignor whose replay under cooperative-sticky
    would save all 120.5 GB. Then: follower fetching only (a plug-in is kept for reasons
    the captures do not show). Expected: 108.2 GB/day, the plug-in named as kept."""
    got = decided("com.acme:Mine", traffic(assignor="cooperative-sticky", replayed=120 * GB))
    assert (got["change_kind"], got["changed_assignor"]) == ("rack_aware", False)
    assert got["reason"] == (
        f"{NOW}; {FOLLOWER}; com.acme:Mine is not a built-in assignor: any rack awareness is "
        "its own, and it is kept; it saves 108.2 GB/day, 2.16 at zones.price_per_gb 0.02"
    )


def test_a_member_of_unknown_zone_leaves_follower_fetching_with_a_caveat():
    """Given: a range group with a member of unknown zone (the replay's columns null).
    Then: follower fetching's saving over the placed reads, saying the replay could not
    measure what KIP-881 range would do."""
    got = decided("range", traffic())
    assert got["reason"] == (
        f"{NOW}; {FOLLOWER}; on clients 3.5+ range also matches racks (KIP-881), which the "
        "replay could not measure: a member's zone is unknown; it saves 108.2 GB/day, 2.16 at "
        "zones.price_per_gb 0.02"
    )


def test_consumers_that_set_client_rack_already_are_told_only_the_brokers_part():
    """Given: a KIP-848 group whose 3 members all captured a client.rack, and one where 2
    of 3 did. Then: the first is not told to set client.rack, and its reason says that
    with the brokers' selector already on there is nothing to save (the captures cannot
    show which replica serves a fetch); the second is told client.rack as usual."""
    racked = traffic("consumer") | {"members": 3, "members_client_rack": 3}
    got = decided("uniform", racked)
    assert got["reason"].startswith(
        f"{NOW} (its consumers set client.rack already: if the brokers' replica selector is "
        "on too, these reads stay in zone already and there is nothing to save; the captures "
        "cannot show which replica serves a fetch); with follower fetching"
    )
    assert got["prerequisites"] == (
        "client.rack is set on every consumer already (the captures show it); the consumer "
        f"protocol also sends it to the brokers' assignors, which ignore it in 4.x; {SELECTOR}"
    )
    partly = traffic("consumer") | {"members": 3, "members_client_rack": 2}
    assert decided("uniform", partly)["prerequisites"].startswith("client.rack=<zone> on every")


def test_a_rack_aware_assignor_whose_replay_crosses_more_rules_the_change_out():
    """Given: a range group whose rack-aware replay crosses 2 GB more than now (balance
    before racks), while follower fetching alone would save 108.2 GB. Then: keep (its
    client.rack would turn KIP-881 on in range too), saying so after the recommendation's
    own reason; no saving in bytes."""
    row = traffic(assignor="range", replayed=-2 * GB)
    got = decided("range", row, keep_row("range", "keep range: no classic assignor does better"))
    assert got == {
        "change_kind": "keep",
        "changed_assignor": False,
        "cross_zone_bytes_saved": 0,
        "cross_zone_cost_saved": 0.0,
        "reason": (
            "keep range: no classic assignor does better; follower fetching (client.rack) "
            "would save 108.2 GB/day, 2.16 at zones.price_per_gb 0.02, but client.rack also "
            "turns on KIP-881 in range (clients 3.5+), and its replay with follower fetching "
            "crosses 2.0 GB/day more than now: it puts balance before racks"
        ),
    }


def test_below_the_threshold_is_keep_saying_what_each_change_would_save():
    """Given: a range group saving 3.2 GB a day rack-aware (0.064), and an assignor change
    saving 16.8 partition-seconds, both below their thresholds. Then: keep, the assignor
    change's shortfall then the rack-aware one's with the threshold in GB and cost."""
    recommended = {
        "change_kind": "assignor",
        "declared_assignor": "range",
        "recommended_assignor": "cooperative-sticky",
        "paused_partitions_saved": 6,
        "paused_partition_seconds_saved": 16.8,
        "messages_delayed_saved": 140,
    }
    small = traffic(assignor="range", replayed=3_200_000_000, leader=4 * GB, follower=GB)
    got = decided("range", small, recommended, events=[{"event_seq": 2, "cause": "scale_out"}])
    assert got["change_kind"] == "keep"
    assert got["reason"] == (
        "keep range: gain too small: switching to cooperative-sticky would save 6 paused "
        "partitions, 16.8 partition-seconds, 140 messages delayed, below the thresholds (60 "
        "partition-seconds or 10,000 messages delayed, 12 paused partitions where no log "
        "times the rebalances, or a mean lag skew 0.25 lower); gain too small: rack-aware "
        "range with follower fetching (client.rack) would save 3.2 GB/day, 0.06 at "
        "zones.price_per_gb 0.02, below the threshold (50.0 GB/day, "
        "metrics.change_min_cross_zone_gb_saved: 1.00 at zones.price_per_gb 0.02)"
    )
    assert (got["cross_zone_bytes_saved"], got["paused_partitions_saved"]) == (0, 0)


def test_the_threshold_itself_is_enough_and_is_in_decimal_gb():
    """Given: savings of exactly 50 GB and of one byte less; a conf asking 0.5 GB.
    Expected: rack_aware, keep; the limit 500,000,000 bytes."""
    at = traffic("consumer", leader=62_300_000_000)
    assert decided("uniform", at)["change_kind"] == "rack_aware"
    under = traffic("consumer", leader=62_300_000_000 - 1)
    assert decided("uniform", under)["change_kind"] == "keep"
    half = MetricsConfig(change_min_cross_zone_gb_saved=0.5)
    assert Limits.of(half).cross_zone_bytes == 500_000_000


STALL = {
    "topic": "payments",
    "partition": 1,
    "offset": 106598,
    "lag": 88890,
    "since": dt.datetime(2026, 11, 20, 4, 40),
}


def test_a_fault_comes_first_whatever_the_cross_zone_saving():
    """Given: a stuck partition and a cross-zone saving of 10 TB a day. Then:
    stuck_partition, no saving in bytes stated."""
    got = decided("uniform", traffic("consumer", leader=10_000 * GB), stuck=[STALL])
    assert got["change_kind"] == "stuck_partition"
    assert "cross_zone_bytes_saved" not in got


RESTARTS = [{"event_seq": i, "cause": "deploy_restart"} for i in range(2, 8)]


def test_the_change_that_clears_its_threshold_more_times_wins():
    """Given: static membership saving 216 partition-seconds (3.6 times 60) and follower
    fetching saving 200 GB (4 times 50), then 180 GB (3.6 times: a tie) and 150 GB (3
    times). Then: rack_aware, naming what it beat with both figures; static membership on
    the tie and below."""
    row = traffic("consumer", leader=212_300_000_000)
    got = decided("range", row, STATIC, RESTARTS)
    assert got["change_kind"] == "rack_aware"
    assert got["reason"].endswith(
        "; it saves 200.0 GB/day, 4.00 at zones.price_per_gb 0.02; that is 4.0 times its "
        "threshold, more than static membership (6 rebalances, 72 paused partitions, 216.0 "
        "partition-seconds, 5,400 messages delayed: 3.6 times its own)"
    )
    tie = traffic("consumer", leader=192_300_000_000)
    assert decided("range", tie, STATIC, RESTARTS)["change_kind"] == "static_membership"
    less = traffic("consumer", leader=162_300_000_000)
    assert decided("range", less, STATIC, RESTARTS) == {
        "change_kind": "static_membership",
        "changed_assignor": False,
    }


def test_a_group_without_a_cross_zone_row_is_decided_as_before():
    """Given: no cross_zone_traffic row (no broker zone known). Then: nothing about zones
    in the row: keep as before, and the tuning change as before."""
    assert decide(keep_row("range"), [], [], LIMITS, GroupFacts()) == {
        "change_kind": "keep",
        "changed_assignor": False,
    }
    assert decide(STATIC, RESTARTS, [], LIMITS)["change_kind"] == "static_membership"


def test_nothing_crossing_is_keep_with_no_saving_in_bytes():
    """Given: a group whose reads all stay in zone. Then: keep, the recommendation's reason
    unchanged, 0 bytes saved (known, not null)."""
    got = decided("range", traffic(leader=0, follower=0, assignor="range", replayed=0))
    assert got == {
        "change_kind": "keep",
        "changed_assignor": False,
        "cross_zone_bytes_saved": 0,
        "cross_zone_cost_saved": 0.0,
    }


def test_cross_zone_traffic_is_written_before_the_recommendations_that_weigh_it():
    """Given: the gold tables in write order. Then: cross_zone_traffic before
    recommendations (derived from the tables written before it)."""
    order = list(gold.TABLES)
    assert order.index("cross_zone_traffic") < order.index("recommendations")
    assert "cross_zone_traffic" not in gold.DERIVED
    for name in ("recommendations", "group_health"):
        assert gold.TABLES[name].fieldNames()[-2:] == [
            "cross_zone_bytes_saved",
            "cross_zone_cost_saved",
        ]


def saving_row(**cells) -> SimpleNamespace:
    base = {
        "change_kind": "rack_aware",
        "declared_assignor": "roundrobin",
        "recommended_assignor": "roundrobin",
        "rebalances": 3,
        "rebalances_saved": None,
        "paused_partitions_saved": None,
        "paused_partition_seconds_saved": None,
        "messages_delayed_saved": None,
        "cross_zone_bytes_saved": 120_500_000_000,
        "cross_zone_cost_saved": 2.41,
    }
    return SimpleNamespace(**(base | cells))


def test_the_summary_and_report_show_the_change_and_its_saving_in_gb_and_cost():
    """Given: rack_aware rows keeping roundrobin and switching to cooperative-sticky.
    Expected: the change in words, the saving in GB a day and cost (short in the
    summary)."""
    assert actions.change_text(saving_row()) == "read in-zone (client.rack)"
    switching = saving_row(recommended_assignor="cooperative-sticky")
    assert actions.change_text(switching) == "cooperative-sticky + client.rack"
    assert actions.saving(saving_row()) == "120.5 GB/day across zones (2.41 a day)"
    assert actions.saving(saving_row(), short=True) == "120.5 GB/day across zones (2.41/day)"
    assert actions.KIND_ORDER.index("rack_aware") < actions.KIND_ORDER.index("keep")


def test_the_summary_lists_a_rack_aware_group_with_its_saving():
    """Given: a day whose one listed group is told rack_aware (120.5 GB, 2.41 a day).
    Then: the changes' count names rack_aware, and its row the change and the saving."""
    import pandas as pd
    from test_report_and_sql import facts

    from fleet_rebalance.report.summary import summary_lines

    listed = pd.DataFrame(
        [
            {
                "cluster": "c",
                "group_id": "orders-reader",
                "severity": 0,
                "attention": [],
                "last_status": "OK",
                "worst_status": "OK",
                "rebalances": 0,
                "paused_partition_seconds": None,
                "mean_lag_skew": None,
                "max_count_spread": 1,
                **vars(saving_row()),
            }
        ]
    )
    lines = summary_lines(
        facts(listed=listed, listed_total=1, changes_by_kind={"rack_aware": 1, "keep": 4})
    )
    assert lines[1] == (
        "Groups that need attention: 3 of 5; Changes to make: 1 groups (rack_aware 1, keep 4)"
    )
    assert lines[3].split("  ")[0] == "c/orders-reader"
    assert lines[3].endswith("read in-zone (client.rack)  120.5 GB/day across zones (2.41/day)")
