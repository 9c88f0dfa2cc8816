"""The `rack_aware` change, one of metrics/changes.py's candidates: how a group can stop
reading across availability zones, what that saves a day, and what to set. Pure Python
over the group's cross_zone_traffic row, which metrics/cross_zone_rules.py measures.

There are two ways, each measured against what crosses now (cross_zone_leader_bytes):
- follower fetching (KIP-392, brokers and clients 2.4+): every consumer's client.rack and
  the brokers' RackAwareReplicaSelector. A read then crosses only where no in-sync replica
  is in the reader's zone. It saves cross_zone_leader_bytes - cross_zone_follower_bytes.
- rack-aware assignment with follower fetching (KIP-881, consumers 3.5+, the classic
  protocol's range, sticky and cooperative-sticky). It saves rack_aware_saving_bytes, the
  table's replay of rack_aware_assignor at every capture.

Which way a group can take depends on its assignor, because a classic consumer's
client.rack turns KIP-881 on in those three assignors by itself:
- A classic group declaring range, sticky or cooperative-sticky gets the replay's saving.
  A saving of 0 or less rules the change out: the assignor puts balance before racks, so
  its reads would cross as much or more. Follower fetching's saving is used only where
  the replay has none (a member's zone is unknown): that figure counts the placed reads.
- A classic group declaring roundrobin gets the larger of the two. Rack-aware assignment
  means switching to the replay's cooperative-sticky, so it must save more than follower
  fetching alone, which keeps the assignor (a tie keeps it).
- Any other group gets follower fetching. A plug-in assignor (Kafka Streams' included)
  is kept for reasons the captures do not show: protocol_migration_plan's custom_assignor
  blocker says the same. An unknown assignor cannot be rolled from. The consumer
  protocol's 4.x assignors ignore racks (research55.md section 1); a streams group's
  tasks are Kafka Streams' to place, which the replay does not run.
No saving above 0, no option.

A group whose every member captured a client.rack has set it already: it is not told to
set it, only the brokers' replica selector. The captures cannot show which replica
served a fetch, so its reason says that with the selector already on, those reads stay
in zone and there is nothing to save.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fleet_rebalance.assignors.registry import get_assignor
from fleet_rebalance.metrics.cross_zone_rules import GB, RACK_AWARE_ASSIGNORS, cost
from fleet_rebalance.metrics.migration_rules import BUILT_IN_ASSIGNORS
from fleet_rebalance.vocabulary import GroupType, RebalanceProtocol

Way = Literal["follower_fetching", "rack_aware_assignment"]
FOLLOWER_FETCHING: Way = "follower_fetching"
RACK_AWARE_ASSIGNMENT: Way = "rack_aware_assignment"
# Built-in classic assignors without rack logic: a group may switch from these to the
# replay's rack-aware one.
SWITCHABLE = BUILT_IN_ASSIGNORS - RACK_AWARE_ASSIGNORS
SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


@dataclass(frozen=True)
class CrossZoneFacts:
    """The cross_zone_traffic row's columns the change reads. rack_aware_saving_bytes is
    null where a member's zone is unknown."""

    cross_zone_leader_bytes: int
    cross_zone_follower_bytes: int
    partitions_read: int
    partitions_cross_zone_leader: int
    price_per_gb: float
    protocol: str | None = None
    rack_aware_assignor: str | None = None
    rack_aware_saving_bytes: int | None = None
    members: int = 0
    members_client_rack: int = 0

    @property
    def racked(self) -> bool:
        """Every member set client.rack (the captures show it)."""
        return 0 < self.members == self.members_client_rack

    @classmethod
    def of(cls, row: Mapping[str, Any] | None) -> CrossZoneFacts | None:
        """From a row's cells (extra cells ignored); None when the group has no row."""
        if row is None:
            return None
        return cls(
            cross_zone_leader_bytes=int(row.get("cross_zone_leader_bytes") or 0),
            cross_zone_follower_bytes=int(row.get("cross_zone_follower_bytes") or 0),
            partitions_read=int(row.get("partitions_read") or 0),
            partitions_cross_zone_leader=int(row.get("partitions_cross_zone_leader") or 0),
            price_per_gb=float(row.get("price_per_gb") or 0.0),
            protocol=row.get("protocol"),
            rack_aware_assignor=row.get("rack_aware_assignor"),
            rack_aware_saving_bytes=_int_or_none(row.get("rack_aware_saving_bytes")),
            members=int(row.get("members") or 0),
            members_client_rack=int(row.get("members_client_rack") or 0),
        )


# The cross_zone_traffic columns CrossZoneFacts reads, for the Spark glue's select.
COLUMNS = tuple(CrossZoneFacts.__dataclass_fields__)


@dataclass(frozen=True)
class Option:
    """The way a group can take (module docstring) and what it saves a day.
    `assignor`: the rack-aware assignor (KIP-881) for rack-aware assignment, else None;
    `switch`: that assignor is not the declared one. `follower_saving_bytes`: follower
    fetching alone's saving, to compare with. `ruled_out`: why it cannot be recommended,
    whatever follower fetching alone would save."""

    way: Way
    assignor: str | None
    switch: bool
    saving_bytes: int
    follower_saving_bytes: int
    ruled_out: str | None = None


def option(facts: CrossZoneFacts, declared: str | None) -> Option | None:
    """The way the group can take, by the module docstring's rule; None when none saves."""
    follower = facts.cross_zone_leader_bytes - facts.cross_zone_follower_bytes
    replayed, assignor = facts.rack_aware_saving_bytes, facts.rack_aware_assignor
    alone = Option(FOLLOWER_FETCHING, None, False, follower, follower)
    classic = facts.protocol == GroupType.CLASSIC
    if classic and declared in RACK_AWARE_ASSIGNORS and replayed is not None and assignor:
        if replayed > 0:
            return Option(RACK_AWARE_ASSIGNMENT, assignor, assignor != declared, replayed, follower)
        if follower <= 0:
            return None
        return Option(
            FOLLOWER_FETCHING,
            None,
            False,
            follower,
            follower,
            ruled_out=(
                f"client.rack also turns on KIP-881 in {declared} (clients 3.5+), and its "
                f"replay with follower fetching {_no_saving(replayed)}: it puts balance "
                "before racks"
            ),
        )
    # follower >= 0 (a read crossing with follower fetching crosses from the leader too),
    # so a replay saving more saves something.
    if classic and declared in SWITCHABLE and assignor and (replayed or 0) > follower:
        return Option(RACK_AWARE_ASSIGNMENT, assignor, True, replayed or 0, follower)
    return alone if follower > 0 else None


def _no_saving(replayed: int) -> str:
    return "saves nothing" if replayed == 0 else f"crosses {gb(-replayed)}/day more than now"


def gb(n_bytes: float) -> str:
    """`12.3 GB`: decimal gigabytes, as cloud bills count them."""
    return f"{n_bytes / GB:,.1f} GB"


def money(amount: float) -> str:
    """An amount in the price's currency (unnamed: zones.price_per_gb has none): two
    decimals, or two significant digits below 0.01 so a small saving never reads 0.00."""
    return f"{amount:,.2f}" if amount == 0 or abs(amount) >= 0.01 else f"{amount:.2g}"


def saving_text(n_bytes: int, price_per_gb: float) -> str:
    """`12.3 GB/day, 0.25 at zones.price_per_gb 0.02`."""
    return (
        f"{gb(n_bytes)}/day, {money(cost(n_bytes, price_per_gb))} at zones.price_per_gb "
        f"{price_per_gb:g}"
    )


def title(o: Option, declared: str | None) -> str:
    """The change in a few words."""
    if o.way == FOLLOWER_FETCHING:
        return "follower fetching (client.rack)"
    if o.switch:
        return f"switching to {o.assignor}, rack-aware, with follower fetching (client.rack)"
    return f"rack-aware {declared} with follower fetching (client.rack)"


def reason(o: Option, facts: CrossZoneFacts, declared: str | None) -> str:
    """What crosses now, what the way changes and what would still cross; the caller
    adds what it saves."""
    now = (
        f"cross-zone reads: {gb(facts.cross_zone_leader_bytes)} of the group's reads crossed "
        f"zones today, from the leaders of {facts.partitions_cross_zone_leader} of the "
        f"{facts.partitions_read} partitions it read{RACKED if facts.racked else ''}"
    )
    left = gb(facts.cross_zone_leader_bytes - o.saving_bytes)
    if o.way == FOLLOWER_FETCHING:
        why = _follower_only(facts, declared)
        return (
            f"{now}; with follower fetching (KIP-392) each consumer reads from an in-sync "
            f"replica in its own zone, and {left} would still cross (no replica in the "
            f"reader's zone){why}"
        )
    if not o.switch:
        return (
            f"{now}; with client.rack set, {declared} gives each consumer partitions with a "
            f"replica in its zone where balance allows (KIP-881), and with follower fetching "
            f"{left} would still cross, as the replay of the day's captures shows"
        )
    return (
        f"{now}; {o.assignor} with client.rack set gives each consumer partitions with a "
        f"replica in its zone where balance allows (KIP-881), and with follower fetching "
        f"{left} would still cross, as its replay of the day's captures shows; follower "
        f"fetching alone, keeping {declared}, would save {gb(o.follower_saving_bytes)}/day"
        f"{_two_bounce(declared, o.assignor)}"
    )


def _follower_only(facts: CrossZoneFacts, declared: str | None) -> str:
    """Why follower fetching is all the group is told."""
    if facts.protocol == GroupType.CONSUMER:
        return (
            "; the consumer protocol's assignors (Kafka 4.x) ignore client.rack, so follower "
            "fetching is what the group can use"
        )
    if facts.protocol == GroupType.STREAMS:
        return (
            "; a streams group's tasks are placed by Kafka Streams, which the replay does not "
            "run: follower fetching is what is counted"
        )
    if facts.protocol != GroupType.CLASSIC:
        return ""
    if declared in RACK_AWARE_ASSIGNORS:
        return (
            f"; on clients 3.5+ {declared} also matches racks (KIP-881), which the replay "
            "could not measure: a member's zone is unknown"
        )
    if declared in SWITCHABLE:
        return (
            f"; switching to a rack-aware assignor (KIP-881) would save no more than "
            f"follower fetching with {declared}"
        )
    if declared:
        return (
            f"; {declared} is not a built-in assignor: any rack awareness is its own, and "
            "it is kept"
        )
    return ""


def _two_bounce(declared: str | None, assignor: str | None) -> str:
    if _eager_to_cooperative(declared, assignor):
        return (
            "; needs the two-bounce rolling upgrade (first beside the eager assignor, then alone)"
        )
    return ""


def _eager_to_cooperative(declared: str | None, assignor: str | None) -> bool:
    if declared not in BUILT_IN_ASSIGNORS or assignor not in BUILT_IN_ASSIGNORS:
        return False
    old, new = get_assignor(declared).protocol, get_assignor(assignor).protocol
    return old == RebalanceProtocol.EAGER and new == RebalanceProtocol.COOPERATIVE


RACKED = (
    " (its consumers set client.rack already: if the brokers' replica selector is on too, "
    "these reads stay in zone already and there is nothing to save; the captures cannot "
    "show which replica serves a fetch)"
)
CLIENT_RACK = (
    "client.rack=<zone> on every consumer: its own availability zone, spelled as the "
    "broker.rack of the brokers there (clients 2.4+)"
)
SET_ALREADY = "client.rack is set on every consumer already (the captures show it)"
BROKER_SELECTOR = (
    f"replica.selector.class={SELECTOR} on every broker (KIP-392, brokers 2.4+; a static "
    "config, so a rolling restart of the brokers, and it serves every consumer of the "
    "cluster that sets client.rack); a follower serves a record once it learns the high "
    "watermark is past it, a little later than the leader"
)


def prerequisites(o: Option, facts: CrossZoneFacts, declared: str | None) -> str:
    """What to set, with the versions it needs; not client.rack where every consumer
    has it."""
    client_rack = SET_ALREADY if facts.racked else CLIENT_RACK
    if o.way == FOLLOWER_FETCHING:
        sent = (
            "; the consumer protocol also sends it to the brokers' assignors, which ignore it "
            "in 4.x"
            if facts.protocol == GroupType.CONSUMER
            else ""
        )
        return f"{client_rack}{sent}; {BROKER_SELECTOR}"
    if not o.switch:
        return (
            f"{client_rack}, clients 3.5+ for KIP-881's rack-aware {declared} (older clients "
            f"only fetch from followers); {BROKER_SELECTOR}"
        )
    both = f"{o.assignor},{declared}"
    setting = "" if facts.racked else "client.rack=<zone> and "
    if _eager_to_cooperative(declared, o.assignor):
        roll = (
            f"two-bounce rolling upgrade (KIP-429): roll every consumer with {setting}"
            f"partition.assignment.strategy={both} (the group stays eager), then roll "
            f"again with {o.assignor} alone"
        )
    else:
        roll = (
            f"roll every consumer with {setting}partition.assignment.strategy={both} "
            f"(members need an assignor in common throughout), then drop {declared} in a "
            "second roll"
        )
    zone = (
        SET_ALREADY
        if facts.racked
        else "client.rack is each consumer's availability zone, spelled as the broker.rack "
        "of the brokers there"
    )
    return f"{roll}; clients 3.5+ (KIP-881); {zone}; {BROKER_SELECTOR}"


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
