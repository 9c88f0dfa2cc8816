"""The report's "Cross-zone reads" section (cross_zone.py gathers it,
cross_zone.html.j2 writes it): bytes in decimal GB a day and costs at
zones.price_per_gb, as cross_zone_traffic and the rack_aware change write them."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from fleet_rebalance.metrics.attention import present
from fleet_rebalance.metrics.rack_aware_rules import gb, money
from fleet_rebalance.report.cross_zone import CrossZoneFacts
from fleet_rebalance.report.page import Links, group_cell, table
from fleet_rebalance.report.templating import Macros


def render(c: CrossZoneFacts, links: Links) -> Markup:
    prices = sorted({float(p) for p in c.clusters["price_per_gb"] if present(p)})
    price = " and ".join(f"{p:g}" for p in prices)
    clusters = _clusters(c) if len(c.clusters) else None
    costly = _costly(c, links) if len(c.top) else None
    return Macros("cross_zone.html.j2").section(clusters, costly, price)


def _clusters(c: CrossZoneFacts) -> Markup:
    """Per cluster, what its groups read and what crosses zones."""
    rows = [
        [
            r.cluster,
            str(int(r.groups)),
            _gb(r.read_bytes),
            _gb(r.estimated_bytes),
            _gb(r.cross_zone_leader_bytes),
            _gb(r.cross_zone_follower_bytes),
            _gb(r.unknown_zone_bytes),
            _money(r.cross_zone_leader_cost),
            _money(r.rack_aware_saving_cost),
        ]
        for r in c.clusters.itertuples()
    ]
    headers = [
        "cluster",
        "groups",
        "read/day",
        "of it estimated",
        "across zones/day",
        "with follower fetching/day",
        "zone unknown",
        "cost/day",
        "rack-aware saving/day",
    ]
    return table(headers, rows, numeric=frozenset(range(1, 9)))


def _costly(c: CrossZoneFacts, links: Links) -> Markup:
    """The groups whose cross-zone reads cost most, costliest first."""
    rows = [
        [
            group_cell(links, r.cluster, r.group_id),
            _gb(r.read_bytes),
            _gb(r.cross_zone_leader_bytes),
            f"{int(r.partitions_cross_zone_leader)} of {int(r.partitions_read)}",
            _money(r.cross_zone_leader_cost),
            _money(r.cross_zone_follower_cost),
            _money(r.rack_aware_saving_cost),
        ]
        for r in c.top.itertuples()
    ]
    headers = [
        "group",
        "read/day",
        "across zones/day",
        "partitions across zones",
        "cost/day",
        "cost with follower fetching",
        "rack-aware saving/day",
    ]
    return table(headers, rows, numeric=frozenset(range(1, 7)))


def _gb(value: Any) -> str:
    return gb(value) if present(value) else "n/a"


def _money(value: Any) -> str:
    return money(value) if present(value) else "n/a"
