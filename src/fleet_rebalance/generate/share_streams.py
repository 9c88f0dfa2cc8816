"""A share group (KIP-932) and a streams group (KIP-1071) on every 4.1 + cluster of a
generated fleet, written as `kafka-share-groups.sh` and `kafka-streams-groups.sh
--describe` views beside the consumer views of each capture (members with `--verbose`,
as the consumer members views are).

A separate step with its own seeded random stream: it reads the fleet's capture times,
cluster names, versions and brokers and changes nothing else, so every other file of a
fleet is byte for byte what it was without it. The layouts are the tools' of the
cluster's release (docs/formats-share-streams.md): 4.1 prints no share LAG, and its
streams tool describes one group only (there is one).

What happens: the share group's three workers read every partition of their topic
(share groups hand one partition to many members); one leaves for two hours and a new
one joins in its place. The streams group's three members hold eight active tasks (two
subtopologies over four partitions) and one standby replica of each; at 03:00 one
restarts (a new member id, the same process and client id) and its tasks move.

The generate job writes them (`./spark-submit.sh generate`, so data/sample has them);
FleetSpec leaves them out unless share_streams is set.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import random
from collections.abc import Sequence
from pathlib import Path

SHARE_GROUP = "lab-share-workers"
SHARE_TOPIC = "share-jobs"
STREAMS_GROUP = "lab-streams-enricher"
STREAMS_TOPIC = "enricher-orders"
PARTITIONS = 4
SUBTOPOLOGIES = ("0", "1")
FILES = (
    "share-groups-offsets.txt",
    "share-groups-members.txt",
    "share-groups-state.txt",
    "streams-groups-offsets.txt",
    "streams-groups-members.txt",
    "streams-groups-state.txt",
)
RELEASES = ("4.1", "4.2", "4.3", "4.4")


@dataclasses.dataclass
class Member:
    member_id: str
    client_id: str
    host: str  # share: the consumer's host; streams: its process id


def _id(rng: random.Random) -> str:
    """A member id as the new coordinator makes them: a Uuid in URL-safe base64."""
    return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")


def _pad(value: str, width: int) -> str:
    return value.ljust(width)


class ShareStreams:
    """The two groups of one cluster, advanced capture by capture."""

    def __init__(self, seed: int, cluster: str, brokers: list[int]) -> None:
        self.rng = random.Random(f"{seed}-share-streams-{cluster}")
        self.cluster = cluster
        self.brokers = brokers
        self.workers = [self._worker(i) for i in range(3)]
        self.epoch = len(self.workers)  # the share group's epoch: one bump per join or leave
        self.spare = self._worker(3)
        self.away: Member | None = None
        self.spso = [self.rng.randint(10_000, 90_000) for _ in range(PARTITIONS)]
        self.streams = [self._streams_member(i) for i in range(3)]
        self.restarted = False

    def _worker(self, index: int) -> Member:
        host = f"/10.42.{index + 1}.{self.rng.randint(2, 250)}"
        return Member(_id(self.rng), f"consumer-{SHARE_GROUP}-{index + 1}", host)

    def _streams_member(self, index: int) -> Member:
        uuid = self.rng.randbytes(16).hex()
        process_id = f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:]}"
        client = f"{STREAMS_GROUP}-{process_id}-StreamThread-1-consumer"
        return Member(_id(self.rng), client, process_id)

    def _restarted(self, member: Member) -> Member:
        """The same instance after a restart: a new member id, the same process id (Kafka
        Streams keeps it in its state directory's kafka-streams-process-metadata), so the
        same client id."""
        return Member(_id(self.rng), member.client_id, member.host)

    def advance(self, at: dt.datetime, start: dt.datetime) -> None:
        """Move to capture time `at`: records acknowledged, members in and out."""
        for p in range(PARTITIONS):
            self.spso[p] += self.rng.randint(400, 1_600)
        hours = (at - start).total_seconds() / 3600
        if 5 <= hours < 7 and self.away is None and len(self.workers) == 3:
            self.away = self.workers.pop(1)
            self.epoch += 1
        elif hours >= 7 and self.away is not None:
            self.workers.append(self.spare)
            self.away = None
            self.epoch += 1
        if hours >= 5 and not self.restarted:
            self.streams[2] = self._restarted(self.streams[2])
            self.restarted = True

    def share_views(self, version: str) -> dict[str, str]:
        """The share tool's offsets, members (--verbose) and state views."""
        g = max(15, len(SHARE_GROUP))
        t = max(15, len(SHARE_TOPIC))
        lag = version != "4.1"
        header = f"\n{_pad('GROUP', g)} {_pad('TOPIC', t)} {_pad('PARTITION', 10)} "
        header += f"{_pad('START-OFFSET', 13)} LAG" if lag else "START-OFFSET"
        rows = []
        for p in range(PARTITIONS):
            row = f"\n{_pad(SHARE_GROUP, g)} {_pad(SHARE_TOPIC, t)} {_pad(str(p), 10)} "
            backlog = self.rng.randint(0, 40)
            row += f"{_pad(str(self.spso[p]), 13)} {backlog}" if lag else str(self.spso[p])
            rows.append(row)
        offsets = header + "".join(rows) + "\n"
        members = sorted(self.workers, key=lambda m: m.member_id)
        m = max(15, *(len(x.member_id) for x in members))
        h = max(15, *(len(x.host) for x in members))
        c = max(15, *(len(x.client_id) for x in members))
        assignment = f"{SHARE_TOPIC}:" + ",".join(str(p) for p in range(PARTITIONS))
        # --members --verbose, as the fleet's consumer members views are captured: its
        # MEMBER-EPOCH column is what tells a share group's members from a consumer
        # group's (the plain layout is both tools'). Every member is at the group's epoch.
        member_view = (
            f"\n{_pad('GROUP', g)} {_pad('CONSUMER-ID', m)} {_pad('HOST', h)} "
            f"{_pad('CLIENT-ID', c)} {_pad('#PARTITIONS', 12)} {_pad('MEMBER-EPOCH', 13)} "
            "ASSIGNMENT"
        )
        for x in members:
            member_view += (
                f"\n{_pad(SHARE_GROUP, g)} {_pad(x.member_id, m)} {_pad(x.host, h)} "
                f"{_pad(x.client_id, c)} {_pad(str(PARTITIONS), 12)} "
                f"{_pad(str(self.epoch), 13)} {assignment}"
            )
        broker = self.brokers[len(SHARE_GROUP) % len(self.brokers)]
        coordinator = f"kafka-{broker}.{self.cluster}.example.net:9092  ({broker})"
        cw = max(25, len(coordinator))
        state = (
            f"\n{_pad('GROUP', g)} {_pad('COORDINATOR (ID)', cw)} {_pad('STATE', 15)} #MEMBERS"
            f"\n{_pad(SHARE_GROUP, g)} {_pad(coordinator, cw)} {_pad('Stable', 15)} "
            f"{len(members)}\n"
        )
        return {
            "share-groups-offsets.txt": offsets,
            "share-groups-members.txt": member_view + "\n",
            "share-groups-state.txt": state,
        }

    def tasks(self) -> dict[str, tuple[list[tuple[str, int]], list[tuple[str, int]]]]:
        """{member id: (active tasks, standby tasks)}: tasks dealt round-robin over the
        members sorted by id, each task's standby on the next member."""
        members = sorted(self.streams, key=lambda x: x.member_id)
        held: dict[str, tuple[list[tuple[str, int]], list[tuple[str, int]]]] = {
            x.member_id: ([], []) for x in members
        }
        tasks = [(sub, p) for sub in SUBTOPOLOGIES for p in range(PARTITIONS)]
        for n, task in enumerate(tasks):
            held[members[n % len(members)].member_id][0].append(task)
            held[members[(n + 1) % len(members)].member_id][1].append(task)
        return held

    def streams_views(self) -> dict[str, str]:
        """The streams tool's offsets, members and state views (4.1 layouts)."""
        g = max(15, len(STREAMS_GROUP))
        t = max(15, len(STREAMS_TOPIC))
        offsets = f"{_pad('GROUP', g)} {_pad('TOPIC', t)} {_pad('PARTITION', 10)} OFFSET-LAG\n"
        for p in range(PARTITIONS):
            lag = self.rng.randint(0, 120)
            row = f"{_pad(STREAMS_GROUP, g)} {_pad(STREAMS_TOPIC, t)} {_pad(str(p), 10)}"
            offsets += f"{row} {lag}\n"
        members = self.streams
        m = max(15, *(len(x.member_id) for x in members))
        h = max(15, *(len(x.host) for x in members))
        c = max(15, *(len(x.client_id) for x in members))
        held = self.tasks()
        view = (
            f"{_pad('GROUP', g)} {_pad('MEMBER', m)} {_pad('PROCESS', h)} "
            f"{_pad('CLIENT-ID', c)} ASSIGNMENTS\n"
        )
        for x in members:
            active, standby = held[x.member_id]
            view += (
                f"{_pad(STREAMS_GROUP, g)} {_pad(x.member_id, m)} {_pad(x.host, h)} "
                f"{_pad(x.client_id, c)} {_kind('ACTIVE', active)}{_kind('STANDBY', standby)}\n"
            )
        broker = self.brokers[len(STREAMS_GROUP) % len(self.brokers)]
        coordinator = f"kafka-{broker}.{self.cluster}.example.net:9092 ({broker})"
        cw = max(25, len(coordinator))
        state = (
            f"{_pad('GROUP', g)} {_pad('COORDINATOR (ID)', cw)} {_pad('STATE', 25)} #MEMBERS\n"
            f"{_pad(STREAMS_GROUP, g)} {_pad(coordinator, cw)} {_pad('Stable', 25)} "
            f"{len(members)}\n"
        )
        return {
            "streams-groups-offsets.txt": offsets,
            "streams-groups-members.txt": view,
            "streams-groups-state.txt": state,
        }


def _kind(name: str, tasks: list[tuple[str, int]]) -> str:
    """`prepareTaskType`: `KIND: ` then `<subtopology>:[<p>,<p>]; ` per subtopology."""
    if not tasks:
        return ""
    by_sub: dict[str, list[int]] = {}
    for sub, p in tasks:
        by_sub.setdefault(sub, []).append(p)
    body = "".join(
        f"{sub}:[{','.join(str(p) for p in sorted(ps))}]; " for sub, ps in sorted(by_sub.items())
    )
    return f"{name}: {body}"


def write_share_streams(
    seed: int,
    start: dt.datetime,
    captures: Sequence[tuple[dt.datetime, str, str, list[int]]],
    out: Path,
) -> int:
    """Write the share and streams views of every capture (time, cluster, version,
    brokers) whose cluster runs 4.1 or later into its capture folder; the file count."""
    groups: dict[str, ShareStreams] = {}
    written = 0
    for at, cluster, version, brokers in captures:
        if version not in RELEASES:
            continue
        if cluster not in groups:
            groups[cluster] = ShareStreams(seed, cluster, sorted(brokers))
        else:
            groups[cluster].advance(at, start)
        folder = out / cluster / "captures" / at.strftime("%Y-%m-%dT%H%MZ")
        folder.mkdir(parents=True, exist_ok=True)
        views = {**groups[cluster].share_views(version), **groups[cluster].streams_views()}
        for name, text in views.items():
            (folder / name).write_text(text, encoding="utf-8")
            written += 1
    return written
