"""kafka-consumer-groups.sh / kafka-topics.sh output, per release
(shared/FORMATS.md): 3.6 (Scala tool), 3.9 (Java port) and 4.1 (KIP-1099)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

MISSING = "-"
# The releases whose output is rendered: 3.6 (Scala tool), 3.9 (Java port), 4.1 (KIP-1099).
KafkaVersion = Literal["3.6", "3.9", "4.1"]


@dataclass
class MemberView:
    member_id: str
    instance_id: str | None
    host: str
    client_id: str
    partitions: list[tuple[str, int]]
    epoch: int = 0


@dataclass
class GroupView:
    group: str
    state: str  # Stable, Empty, PreparingRebalance, ...
    strategy: str  # selected protocol / server assignor
    coordinator: tuple[str, int]  # ("kafka-1.prod:9092", 1)
    members: list[MemberView]
    offsets: dict[tuple[str, int], tuple[int | None, int]] = field(default_factory=dict)
    kip848: bool = False


@dataclass(frozen=True)
class TopicView:
    """One topic as kafka-topics.sh --describe prints it."""

    topic_id: str
    replicas: dict[int, list[int]]  # partition -> replica brokers, the leader first
    isr: dict[int, list[int]]  # partition -> in-sync replicas


def _pad(value: str, width: int) -> str:
    return value.ljust(width)


def offsets_view(groups: Iterable[GroupView], version: KafkaVersion) -> str:
    out: list[str] = []
    for g in sorted(groups, key=lambda g: g.group):
        owned = {tp: m for m in g.members for tp in m.partitions}
        rows: list[tuple[tuple[str, int], MemberView | None]] = []
        for m in sorted((m for m in g.members if m.partitions), key=lambda m: -len(m.partitions)):
            for tp in sorted(m.partitions, key=lambda tp: tp[1]):
                rows.append((tp, m))
        rows += [(tp, None) for tp in sorted(g.offsets) if tp not in owned]
        message = _message(g, version)
        if message:
            out.append(message)
        if not rows:
            continue
        topics = [tp[0] for tp, _ in rows]
        cids = [m.member_id if m else MISSING for _, m in rows]
        hosts = [m.host if m else MISSING for _, m in rows]
        gw, tw = max(15, len(g.group)), max(15, *map(len, topics))
        cw, hw = max(15, *map(len, cids)), max(15, *map(len, hosts))
        header = (
            f"{_pad('GROUP', gw)} {_pad('TOPIC', tw)} {_pad('PARTITION', 10)} "
            f"{_pad('CURRENT-OFFSET', 15)} {_pad('LOG-END-OFFSET', 15)} {_pad('LAG', 15)} "
            f"{_pad('CONSUMER-ID', cw)} {_pad('HOST', hw)} CLIENT-ID"
        )
        lines = [header]
        for (topic, partition), owner in rows:
            current, end = g.offsets.get((topic, partition), (None, 0))
            lag = MISSING if current is None else str(end - current)
            lines.append(
                f"{_pad(g.group, gw)} {_pad(topic, tw)} {_pad(str(partition), 10)} "
                f"{_pad(MISSING if current is None else str(current), 15)} "
                f"{_pad(str(end), 15)} {_pad(lag, 15)} "
                f"{_pad(owner.member_id if owner else MISSING, cw)}"
                f" {_pad(owner.host if owner else MISSING, hw)} "
                f"{owner.client_id if owner else MISSING}"
            )
        out.append(_block(lines, open_end=version == "3.9"))
    return "".join(out)


def members_view(groups: Iterable[GroupView], version: KafkaVersion) -> str:
    out: list[str] = []
    for g in sorted(groups, key=lambda g: g.group):
        message = _message(g, version)
        if message:
            out.append(message)
        static = any(m.instance_id for m in g.members)
        if not g.members:
            if version == "3.9":  # header printed outside the if: a bare header line
                out.append(_block([_members_header(g, static, version, 15, 15, 17, 15, 15)]))
            continue
        gw = max(15, len(g.group))
        cw = max(15, *(len(m.member_id) for m in g.members))
        iw = max(17, *(len(m.instance_id or MISSING) for m in g.members))
        hw = max(15, *(len(m.host) for m in g.members))
        lw = max(15, *(len(m.client_id) for m in g.members))
        lines = [_members_header(g, static, version, gw, cw, iw, hw, lw)]
        for m in g.members:
            cols = [_pad(g.group, gw), _pad(m.member_id, cw)]
            if static:
                cols.append(_pad(m.instance_id or MISSING, iw))
            cols += [_pad(m.host, hw), _pad(m.client_id, lw), _pad(str(len(m.partitions)), 15)]
            line = " ".join(cols) + " "
            if version == "4.1":
                text = _kip1099(m.partitions)
                epoch = str(m.epoch) if g.kip848 else MISSING
                line += (
                    f"{_pad(epoch, 15)} {_pad(text, 20)} {_pad(epoch, 15)} "
                    f"{text if g.kip848 else MISSING}"
                )
            else:
                line += _assignment_text(m.partitions, version)
            lines.append(line)
        out.append(_block(lines))
    return "".join(out)


def _members_header(
    g: GroupView, static: bool, version: KafkaVersion, gw: int, cw: int, iw: int, hw: int, lw: int
) -> str:
    cols = [_pad("GROUP", gw), _pad("CONSUMER-ID", cw)]
    if static:
        cols.append(_pad("GROUP-INSTANCE-ID", iw))
    cols += [_pad("HOST", hw), _pad("CLIENT-ID", lw), _pad("#PARTITIONS", 15)]
    header = " ".join(cols) + " "
    if version == "4.1":
        return header + (
            f"{_pad('CURRENT-EPOCH', 15)} {_pad('CURRENT-ASSIGNMENT', 20)} "
            f"{_pad('TARGET-EPOCH', 15)} TARGET-ASSIGNMENT"
        )
    return header + "ASSIGNMENT"


def _by_topic(partitions: list[tuple[str, int]]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for topic, p in partitions:
        grouped.setdefault(topic, []).append(p)
    return grouped


def _assignment_text(partitions: list[tuple[str, int]], version: KafkaVersion) -> str:
    if not partitions:
        return MISSING
    by_topic = _by_topic(partitions)
    if version == "3.9":  # topic dropped, partitions sorted as strings
        return ", ".join(
            "(" + ",".join(sorted(map(str, ps))) + ")" for _, ps in sorted(by_topic.items())
        )
    return ", ".join(sorted(f"{t}({','.join(map(str, sorted(ps)))})" for t, ps in by_topic.items()))


def _kip1099(partitions: list[tuple[str, int]]) -> str:
    if not partitions:
        return MISSING
    return ";".join(
        f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(_by_topic(partitions).items())
    )


def state_view(groups: Iterable[GroupView], version: KafkaVersion) -> str:
    out: list[str] = []
    for g in sorted(groups, key=lambda g: g.group):
        message = _message(g, version)
        if message:
            out.append(message)
        host, ident = g.coordinator
        coordinator = f"{host}  ({ident})" if version in ("3.9", "4.1") else f"{host} ({ident})"
        strategy = g.strategy if g.state == "Stable" or g.kip848 else ""
        if version == "4.1":
            gw, cw = max(15, len(g.group)), max(25, len(coordinator))
            header = (
                f"{_pad('GROUP', gw)} {_pad('COORDINATOR (ID)', cw)} "
                f"{_pad('ASSIGNMENT-STRATEGY', 20)} {_pad('STATE', 20)} #MEMBERS"
            )
            row = (
                f"{_pad(g.group, gw)} {_pad(coordinator, cw)} {_pad(strategy or '-', 20)} "
                f"{_pad(g.state, 20)} {len(g.members)}"
            )
        else:  # the coordinator's width applied to GROUP: misaligned when it is long
            w = max(25, len(coordinator))
            header = (
                f"{_pad('GROUP', w)} {_pad('COORDINATOR (ID)', 25)} "
                f"{_pad('ASSIGNMENT-STRATEGY', 20)} {_pad('STATE', 15)} #MEMBERS"
            )
            row = (
                f"{_pad(g.group, w)} {_pad(coordinator, 25)} {_pad(strategy, 20)} "
                f"{_pad(g.state, 15)} {len(g.members)}"
            )
        out.append("\n" + header + "\n" + row + "\n")
    return "".join(out)


def _message(g: GroupView, version: KafkaVersion) -> str:
    if g.state == "Empty":
        return f"\nConsumer group '{g.group}' has no active members.\n"
    if g.state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
        return f"\nWarning: Consumer group '{g.group}' is rebalancing.\n"
    return ""


def _block(lines: list[str], open_end: bool = False) -> str:
    """A group's block: a blank line, then its lines. `open_end`: 3.8/3.9's offsets
    view, printf("\n" + fmt) per line, with no newline after the last row (their
    members view ends each row with println(), as every other release)."""
    if open_end:
        return "".join("\n" + line for line in lines)
    return "\n" + "\n".join(lines) + "\n"


def topics_view(topics: dict[str, TopicView], version: KafkaVersion) -> str:
    """kafka-topics.sh --describe of `topics` (by name) as `version` prints it."""
    lines = []
    for name, topic in topics.items():
        topic_id, replicas, isr = topic.topic_id, topic.replicas, topic.isr
        rf = len(replicas[0]) if replicas else 0
        lines.append(
            f"Topic: {name}\tTopicId: {topic_id}\tPartitionCount: {len(replicas)}\t"
            f"ReplicationFactor: {rf}\tConfigs: segment.bytes=1073741824"
        )
        elr = "\tElr: \tLastKnownElr: " if version in ("3.9", "4.1") else ""
        for p in sorted(replicas):
            leader = isr[p][0] if isr[p] else "none"
            lines.append(
                f"\tTopic: {name}\tPartition: {p}\tLeader: {leader}\t"
                f"Replicas: {','.join(map(str, replicas[p]))}\t"
                f"Isr: {','.join(map(str, isr[p]))}{elr}"
            )
    return "\n".join(lines) + "\n"
