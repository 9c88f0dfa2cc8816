"""Where the generated fleet runs: each cluster in a region of three availability zones,
its brokers spread over them (broker.rack) and its consumers' hosts drawn from one /18
subnet per zone, so a nightly whose conf maps those subnets to their zones
(zones.consumer_cidrs: CONSUMER_CIDRS, as conf/local.yaml has it) places every consumer.

Cluster i is in REGIONS[i % 3] (prod-east us-east-1, prod-west us-west-2, lab eu-west-1);
broker b in zone (b - 1) % 3 of it (1: a, 2: b, 3: c, 4: a, ...). A consumer in zone z of
cluster i has a host in 10.<i % 3>.<64 z .. 64 z + 63>.<1..254>: the second octet the
generator always gave cluster i's consumers, so the draws that pick a host are the ones
they were before zones existed and the fleet's other random choices stay as they were.
"""

from __future__ import annotations

import functools
import ipaddress

REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
ZONE_SUFFIXES = ("a", "b", "c")
SUBNET_PREFIX = 18
BLOCK = 1 << (24 - SUBNET_PREFIX)  # third-octet values in one /18: 64


def cluster_zones(cluster_index: int) -> tuple[str, ...]:
    """The zones of cluster `cluster_index`'s region, in order: us-east-1a, -1b, -1c."""
    region = REGIONS[cluster_index % len(REGIONS)]
    return tuple(region + suffix for suffix in ZONE_SUFFIXES)


def broker_zone(cluster_index: int, broker: int) -> str:
    """broker.rack of `broker` (ids from 1): the cluster's zones in turn."""
    zones = cluster_zones(cluster_index)
    return zones[(broker - 1) % len(zones)]


def consumer_subnet(cluster_index: int, zone_index: int) -> str:
    return f"10.{cluster_index % len(REGIONS)}.{zone_index * BLOCK}.0/{SUBNET_PREFIX}"


def consumer_host(cluster_index: int, zone_index: int, third: int, fourth: int) -> str:
    """A client's address as the group tools print it (`/10.0.12.7`), in the zone's /18:
    `third` (0-255) picks its third octet within the block, `fourth` is the last."""
    return f"/10.{cluster_index % len(REGIONS)}.{zone_index * BLOCK + third % BLOCK}.{fourth}"


def moved_to_zone(host: str, zone_index: int) -> str:
    """`host` (one of consumer_host's) at the same place in zone `zone_index`'s /18."""
    _, second, third, fourth = host.lstrip("/").split(".")
    return f"/10.{second}.{zone_index * BLOCK + int(third) % BLOCK}.{fourth}"


CONSUMER_CIDRS: dict[str, str] = {
    consumer_subnet(c, z): zone
    for c in range(len(REGIONS))
    for z, zone in enumerate(cluster_zones(c))
}
_NETWORKS = [(ipaddress.ip_network(cidr), zone) for cidr, zone in CONSUMER_CIDRS.items()]


@functools.cache  # a consumer's host is looked up at every capture
def host_zone(host: str) -> str | None:
    """The zone whose subnet holds `host` (`/10.0.12.7`); None outside them all."""
    try:
        address = ipaddress.ip_address(host.rsplit("/", 1)[-1])
    except ValueError:
        return None
    return next((zone for network, zone in _NETWORKS if address in network), None)
