"""Bronze rows from a describe row's values: offsets, members and group_states.

A row whose GROUP is `-` (the tool's no-value mark, no group id), whose numeric cell
(the 4.x epochs included) is no Kafka integer, or whose UPGRADED is not true, false or
`-` is a RowError, quarantined with the reason, never stored. The share and streams
tools' rows and the group lists are built by share_streams.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleet_rebalance.capture import share_streams as ss
from fleet_rebalance.capture.assignment_text import AssignmentTextError, parse_assignment
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.describe.headers import MEMBERS_VIEW, OFFSETS_VIEW, STATE_VIEW, View
from fleet_rebalance.capture.describe.split import COORDINATOR_ID, ROW_LINE, RowError
from fleet_rebalance.capture.numbers import INT32, INT64, NumberError, not_negative, parse_int
from fleet_rebalance.capture.result import GROUP_STATES, MEMBERS, OFFSETS
from fleet_rebalance.vocabulary import GroupType

# KIP-1099 (4.x --members --verbose): member epochs, `-` for classic groups.
EPOCH_COLUMNS = ("CURRENT-EPOCH", "TARGET-EPOCH")
UPGRADED = "UPGRADED"  # 4.x, mixed groups only (members.upgraded)
UPGRADED_VALUES = {"true": True, "false": False}
MISSING = {"-", ""}
OLD_MISSING = {*MISSING, "unknown", "none"}

Row = dict[str, Any]
RowBuilder = Callable[[dict[str, str], ParseContext], Row | None]


def _value(values: dict[str, str], column: str) -> str | None:
    value = values.get(column)
    return None if value is None or value in _missing(values) else value


def _group(values: dict[str, str], context: ParseContext) -> str:
    if values.get("GROUP") == "-":
        raise RowError("GROUP is '-', the tool's placeholder for no value: no group id")
    group: str | None = values.get("GROUP") or context.get("group")
    if not group:
        raise RowError(
            "no GROUP column in this layout and no group in the capture path "
            "(set capture.path_pattern with a (?P<group>...) part)"
        )
    return group


def _number(values: dict[str, str], column: str, bits: int = INT64) -> int | None:
    text = values.get(column)
    if text is None or text in _missing(values):
        return None
    try:
        return parse_int(text, column, bits)
    except NumberError as exc:
        raise RowError(str(exc)) from None


def _missing(values: dict[str, str]) -> set[str]:
    """Spellings of "no value": `-` since 0.10.2; 0.9-0.10.1 (the OWNER layouts) also
    printed `unknown` for an offset and `none` for no owner. Elsewhere those words are
    text (a client may be called `none`)."""
    return OLD_MISSING if "OWNER" in values else MISSING


def offsets_row(values: dict[str, str], context: ParseContext) -> Row | None:
    """An offsets row; None for 0.10.2-1.0's `-` row of a member without partitions."""
    if ss.SHARE_OFFSETS in values or ss.STREAMS_OFFSETS in values:
        return {"group_id": _group(values, context), **ss.offsets_row(values)}
    get = values.get
    missing = _missing(values)
    topic = get("TOPIC")
    if topic is None or topic in missing:
        return None  # 0.10.2-1.0 print a '-' row for a member without partitions
    partition = _number(values, "PARTITION", INT32)
    if partition is None or partition < 0:
        raise RowError(f"invalid PARTITION {get('PARTITION')!r}")
    current = not_negative(_number(values, "CURRENT-OFFSET"), "CURRENT-OFFSET")
    end = not_negative(_number(values, "LOG-END-OFFSET"), "LOG-END-OFFSET")
    lag = _number(values, "LAG")
    if current is not None and end is not None:
        if lag is not None and lag != end - current:
            raise RowError(
                f"LAG {lag} disagrees with LOG-END-OFFSET - CURRENT-OFFSET = {end - current}"
            )
        if end - current < 0:
            raise RowError(
                f"negative lag {end - current}: committed offset past the log end "
                "(log truncated?); kept out of the lag statistics"
            )
    elif lag is not None:
        raise RowError(f"LAG {lag} printed without both offsets")
    consumer, host, client = get("CONSUMER-ID"), get("HOST"), get("CLIENT-ID")
    owner = get("OWNER")
    if owner is not None:  # <= 0.10.1: clientId + "_" + clientHost
        owner = None if owner in missing else owner
        # The host is InetAddress.toString(), "/10.0.0.9": the owner splits at its "_/".
        cut = owner.rfind("_/") if owner else -1
        client, host = (owner[:cut], owner[cut + 1 :]) if owner and cut >= 0 else (owner, None)
        consumer = owner
    return {
        "group_id": _group(values, context),
        "topic": topic,
        "partition": partition,
        "current_offset": current,
        "log_end_offset": end,
        "lag": lag,
        "consumer_id": None if consumer in missing else consumer,
        "host": None if host in missing else host,
        "client_id": None if client in missing else client,
    }


def members_row(values: dict[str, str], context: ParseContext) -> Row:
    """A members row of any release's layout, its assignment checked against #PARTITIONS."""
    kind = ss.members_type(list(values))
    if kind == GroupType.STREAMS:
        return {"group_id": _group(values, context), **ss.streams_member(values)}
    if kind == GroupType.SHARE:
        return {"group_id": _group(values, context), **ss.share_member(values)}
    count = not_negative(_number(values, "#PARTITIONS", INT32), "#PARTITIONS")
    member_epoch, target_epoch = (_number(values, column, INT32) for column in EPOCH_COLUMNS)
    text = values.get("CURRENT-ASSIGNMENT", values.get("ASSIGNMENT"))
    pairs: list[tuple[str, int]] | None = None
    groups: list[list[int]] | None = None
    if text is not None:
        try:
            pairs, groups = parse_assignment(text)
        except AssignmentTextError as exc:
            raise RowError(str(exc)) from None
    listed = len(pairs) if pairs is not None else sum(map(len, groups or []))
    if text is not None and count is not None and listed != count:
        raise RowError(f"assignment lists {listed} partitions, #PARTITIONS says {count}")
    return {
        "group_id": _group(values, context),
        "consumer_id": _value(values, "CONSUMER-ID"),
        "group_instance_id": _value(values, "GROUP-INSTANCE-ID"),
        "host": _value(values, "HOST"),
        "client_id": _value(values, "CLIENT-ID"),
        "partition_count": count,
        "assignment": (
            [{"topic": t, "partition": p} for t, p in pairs] if pairs is not None else None
        ),
        "subscription": None,
        "subscription_inferred": None,
        "assignment_groups": groups,
        "member_epoch": member_epoch,
        "target_epoch": target_epoch,
        "upgraded": _upgraded(values),
    }


def _upgraded(values: dict[str, str]) -> bool | None:
    """UPGRADED, which 4.x prints only for a group with both classic and consumer members:
    MemberDescription.upgraded() as Java prints it (`true`, `false`), `-` if unknown."""
    text = values.get(UPGRADED)
    if text is None or text in MISSING:
        return None
    if text not in UPGRADED_VALUES:
        raise RowError(f"UPGRADED is {text[:40]!r}, not true, false or '-'")
    return UPGRADED_VALUES[text]


def state_row(values: dict[str, str], context: ParseContext) -> Row:
    """A group_states row from the state view or a group list."""
    line = values.pop(ROW_LINE, "")
    if "COORDINATOR-(ID)" not in values:  # a group list
        return {"group_id": _group(values, context), **ss.list_row(values)}
    coordinator = values["COORDINATOR-(ID)"]
    host, _, ident = coordinator.rpartition(" ")
    # The streams tool's ASSIGNOR (4.4 +) is the group's server-side assignor, as the
    # consumer tool's ASSIGNMENT-STRATEGY is for a consumer-protocol group.
    strategy = _value(values, "ASSIGNMENT-STRATEGY") or _value(values, ss.STREAMS_ASSIGNOR)
    _number(values, ss.SHARE_ASSIGNMENT_EPOCH, INT32)  # not stored; a bad one is damage
    return {
        "group_id": _group(values, context),
        "coordinator_host": host.strip() or None,
        "coordinator_id": _coordinator_id(ident),
        "assignment_strategy": strategy,
        "state": _value(values, "STATE"),
        "member_count": not_negative(_number(values, "#MEMBERS", INT32), "#MEMBERS"),
        "group_type": ss.state_type(list(values), line),
        "group_epoch": _number(values, "GROUP-EPOCH", INT32),
        "target_assignment_epoch": _number(values, "TARGET-ASSIGNMENT-EPOCH", INT32),
    }


def _coordinator_id(ident: str) -> int:
    """The `(3)` of `kafka-3:9092 (3)`: a broker id, an int (split.py found the `(id)`)."""
    match = COORDINATOR_ID.match(ident)
    if match is None:
        raise RowError(f"no coordinator '(id)' in {ident[:40]!r}")
    try:
        return parse_int(match.group(1), "COORDINATOR (ID)", INT32)
    except NumberError as exc:
        raise RowError(str(exc)) from None


ROW_BUILDERS: dict[View, RowBuilder] = {
    OFFSETS_VIEW: offsets_row,
    MEMBERS_VIEW: members_row,
    STATE_VIEW: state_row,
}
TABLES: dict[View, str] = {OFFSETS_VIEW: OFFSETS, MEMBERS_VIEW: MEMBERS, STATE_VIEW: GROUP_STATES}
