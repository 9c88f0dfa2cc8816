"""A hostile raw tree for issue 56 ("hostile input, third round: no line fails a night,
nothing is stored partly, alien, cut, twice or negative"): the lab cluster of data/sample
for one date, copied, then given each of the issue's cases as files, with a manifest
(hostile_tree.Manifest) of what ingest must do with each.

Cases changing a file of the clean tree replace its lines in place or cut its end, so
every other line keeps its number; the groups they touch are named. Every other case is
a file of its own: new groups (on topics of their own), or copies of a capture that
must give no row (a damaged one, a compressed copy beside the plain file, bombs).
- A: a streams member whose task partition is 2^31;
- B: a jsonl offset whose lag is 2^63 - 1 (stored, exact everywhere);
- C: a member owning 20,000 partitions (benchmarks/wide_member.py times 200,000);
- bombs: 10 GiB of zeros, 2 GiB of newlines, 1 GiB of one valid row, each a few MB;
- D: a jsonl member with a lone surrogate between two sound snapshots of its group; a
  snapshot with a negative offset (its lag would pass int64);
- E: a gzip copy of a capture with a flipped byte; a zstd export without checksums;
  a zstd export of two checksummed frames, the second damaged;
- F: an offsets view and a topics view cut inside their last value, a members view cut;
- G: a capture's offsets view beside its gzip copy;
- H: START-OFFSET -5, CURRENT-OFFSET -1, #MEMBERS -3, a jsonl offset with topic "".
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
from pathlib import Path

import hostile_tree
import zstandard
from hostile_tree import (
    INCOMPLETE,
    OK,
    REJECTED,
    SKIPPED,
    Expected,
    Manifest,
    physical_lines,
    replace_token,
    unchanged,
)

from fleet_rebalance.capture.result import UNVERIFIED

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
CLUSTER, DAY, CAPTURES = hostile_tree.CLUSTER, hostile_tree.DAY, hostile_tree.CAPTURES
MAX64 = (1 << 63) - 1
MIB = 1 << 20


def capture(at: str, name: str) -> str:
    return f"{CAPTURES}/2026-11-20T{at}Z/{name}"


def export(at: str, name: str = "groups.jsonl") -> str:
    return f"{CLUSTER}/exports/2026-11-20T{at}Z/{name}"


STREAMS_MEMBERS = capture("0500", "streams-groups-members.txt")
STREAMS_GROUP = "lab-streams-enricher"
CUT_OFFSETS = capture("0600", "consumer-groups-offsets.txt")
CUT_MEMBERS = capture("0620", "consumer-groups-members.txt")
CUT_MEMBERS_GROUP = "search-processor-0"  # the group of its last line
CUT_TOPICS = capture("0500", "topics.txt")
SHARE_OFFSETS = capture("0700", "share-groups-offsets.txt")
SHARE_GROUP = "lab-share-workers"
NEGATIVE_OFFSETS = capture("0720", "consumer-groups-offsets.txt")
NEGATIVE_STATE = capture("0740", "consumer-groups-state.txt")
PLAIN_COPY = capture("0800", "consumer-groups-offsets.txt")
GZIP_COPY = PLAIN_COPY + ".gz"
DAMAGED_GZIP = capture("0820", "offsets-copy.txt.gz")
UNCHECKED_ZSTD = export("0840", "groups.jsonl.zst")
DAMAGED_ZSTD = export("0850", "groups.jsonl.zst")
MAX_LAG_EXPORT = export("0900")
SURROGATE_EXPORTS = (export("0920"), export("0940"), export("1000"))
# The compression bombs: name -> (first member's text, the repeated member's
# text, how many): 10 GiB of zeros (10 MB stored), 2 GiB of newlines (2 MB), 1 GiB of
# one valid offsets row (2.6 MB). benchmarks/large_inputs.py --bombs times them.
BOMB_ROW = b"g t 0 10 12 2 c-1 /10.0.0.1 c\n"
BOMBS = {
    "bomb-zeros.gz": (b"", b"\0" * MIB, 10 * 1024),
    "bomb-newlines.gz": (b"", b"\n" * MIB, 2 * 1024),
    "bomb-rows.txt.gz": (
        b"\nGROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n",
        BOMB_ROW * (MIB // len(BOMB_ROW)),
        1024,
    ),
}
BOMBS_AT = "0500"  # the capture they are put in

MAX_LAG_GROUP, MAX_LAG_TOPIC = "hostile-max-lag", "hostile-max-lag-topic"
SURROGATE_GROUP, SURROGATE_TOPIC = "hostile-surrogate", "hostile-surrogate-topic"
NEGATIVE_GROUP = "hostile-negative-offset"
EMPTY_TOPIC_GROUP = "hostile-empty-topic"
WIDE_GROUP, WIDE_TOPIC, WIDE_PARTITIONS = "hostile-wide", "hostile-wide-topic", 20_000
UNCHECKED_GROUP = "hostile-unchecked"
FRAME_GROUPS = ("hostile-frame-1", "hostile-frame-2")
NEW_GROUPS = {
    MAX_LAG_GROUP,
    SURROGATE_GROUP,
    NEGATIVE_GROUP,
    EMPTY_TOPIC_GROUP,
    WIDE_GROUP,
    UNCHECKED_GROUP,
    *FRAME_GROUPS,
}


def copy_clean_tree(dest: Path) -> Path:
    """`dest` holding data/sample's lab cluster of DAY (hostile_tree.copy_clean_tree)."""
    return hostile_tree.copy_clean_tree(dest, SAMPLE)


def build_unit_tree(clean: Path, dest: Path) -> Manifest:
    """A copy of the clean tree `clean` at `dest`, with every case of issue 56 added."""
    shutil.copytree(clean, dest)
    builder = _Builder(dest)
    builder.streams_task_partition()
    builder.cut_ends()
    builder.negatives()
    builder.copies()
    builder.zstd_exports()
    builder.exports()
    builder.bombs()
    untouched = unchanged(clean, dest, builder.changed)
    return Manifest(
        root=dest,
        files=builder.files,
        changed_lines=builder.changed,
        touched={(CLUSTER, group) for group in builder.touched | NEW_GROUPS},
        incomplete_group=(CLUSTER, STREAMS_GROUP),
        incomplete_at=dt.datetime(2026, 11, 20, 5, tzinfo=dt.UTC),
        untouched=untouched,
        quarantined_text=builder.texts,
        skipped_cases=[],
    )


def bomb(head: bytes, piece: bytes, members: int) -> bytes:
    """gzip members of `piece` (after one of `head`): a few KB each, whatever they hold."""
    first = gzip.compress(head, mtime=0) if head else b""
    return first + gzip.compress(piece, compresslevel=9, mtime=0) * members


def flipped(data: bytes, at: int) -> bytes:
    damaged = bytearray(data)
    damaged[at] ^= 0x5A
    return bytes(damaged)


class _Builder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, Expected] = {}
        self.changed: dict[str, set[int]] = {}
        self.texts: dict[tuple[str, int], str] = {}
        self.touched: set[str] = set()

    def lines(self, relative: str) -> list[str]:
        return physical_lines((self.root / relative).read_bytes())

    def write(self, relative: str, data: bytes) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def replace_line(
        self, relative: str, number: int, line: str, why: tuple[str, ...], status: str = OK
    ) -> None:
        """Line `number` replaced in place by `line`, which must be quarantined; its
        group (the line's first value) touched."""
        lines = self.lines(relative)
        lines[number - 1] = line
        self.write(relative, "".join(f"{text}\n" for text in lines).encode())
        self._quarantined(relative, number, line, why, status, len(lines))

    def cut_end(self, relative: str, keep: str, why: tuple[str, ...], status: str = OK) -> None:
        """The file cut inside its last line, which becomes `keep` with no line end."""
        lines = self.lines(relative)
        assert lines[-1].startswith(keep) and lines[-1] != keep, (relative, keep)
        lines[-1] = keep
        self.write(relative, "\n".join(lines).encode())
        self._quarantined(relative, len(lines), keep, why, status, len(lines))

    def _quarantined(
        self, relative: str, number: int, line: str, why: tuple[str, ...], status: str, lines: int
    ) -> None:
        self.changed.setdefault(relative, set()).add(number)
        self.texts[(relative, number)] = line
        expected = self.files.setdefault(relative, Expected(status=status, reason=why))
        expected.quarantined[number] = why
        expected.lines = lines
        if not line.lstrip().startswith("Topic:"):
            self.touched.add(line.split()[0])

    # ------------------------------------------------------------------ cases

    def streams_task_partition(self) -> None:
        """A: a streams member's task partition at 2^31, in place."""
        lines = self.lines(STREAMS_MEMBERS)
        number, line = next(
            (n, x) for n, x in enumerate(lines, start=1) if x.startswith(STREAMS_GROUP)
        )
        bad = line.replace("ACTIVE: 0:[", "ACTIVE: 0:[2147483648,", 1)
        assert bad != line
        self.replace_line(
            STREAMS_MEMBERS, number, bad, ("task partition", "2147483648"), INCOMPLETE
        )

    def cut_ends(self) -> None:
        """F: an offsets view cut inside its last CLIENT-ID and a topics view inside its
        last ISR (either would parse as a shorter value), a members view inside its last
        row; none ends with its line end."""
        last = self.lines(CUT_OFFSETS)[-1]
        self.cut_end(CUT_OFFSETS, last[:-4], ("without its line end",))
        last = self.lines(CUT_TOPICS)[-1]
        isr = last.index("\tIsr: ") + len("\tIsr: ")
        self.cut_end(CUT_TOPICS, last[: last.index(",", isr)], ("without its line end",))
        last = self.lines(CUT_MEMBERS)[-1]
        assert last.split()[0] == CUT_MEMBERS_GROUP, last
        self.cut_end(CUT_MEMBERS, last[: len(last) // 2], ("missing column",), INCOMPLETE)

    def negatives(self) -> None:
        """H: START-OFFSET -5, CURRENT-OFFSET -1 (its lag the log end + 1), #MEMBERS -3."""
        number, line = self._row(SHARE_OFFSETS)
        bad = replace_token(line, 3, "-5")
        self.replace_line(SHARE_OFFSETS, number, bad, ("negative START-OFFSET", "-5"))
        number, line = self._row(NEGATIVE_OFFSETS)
        end = int(line.split()[4])
        bad = replace_token(replace_token(line, 3, "-1"), 5, str(end + 1))
        self.replace_line(NEGATIVE_OFFSETS, number, bad, ("negative CURRENT-OFFSET", "-1"))
        number, line = self._row(NEGATIVE_STATE)
        bad = replace_token(line, len(line.split()) - 1, "-3")
        self.replace_line(NEGATIVE_STATE, number, bad, ("negative #MEMBERS", "-3"))

    def _row(self, relative: str) -> tuple[int, str]:
        """The file's first row (the line after its first header)."""
        lines = self.lines(relative)
        header = next(n for n, x in enumerate(lines, start=1) if x.startswith("GROUP"))
        return header + 1, lines[header]

    def copies(self) -> None:
        """G: a capture's offsets view beside its gzip copy (read once); E: another
        capture's offsets view gzipped under another name with a byte flipped in its
        data (nothing of it verified: no row)."""
        plain = (self.root / PLAIN_COPY).read_bytes()
        self.write(GZIP_COPY, gzip.compress(plain, mtime=0))
        self.files[GZIP_COPY] = Expected(status=SKIPPED, reason=("compressed copy",))
        source = self.root / DAMAGED_GZIP.replace(
            "offsets-copy.txt.gz", "consumer-groups-offsets.txt"
        )
        packed = gzip.compress(source.read_bytes(), mtime=0)
        self.write(DAMAGED_GZIP, flipped(packed, len(packed) // 2))
        why = ("gzip stream", "unreadable")
        self.files[DAMAGED_GZIP] = Expected(
            status=INCOMPLETE, reason=why, quarantined={None: why}, lines=0
        )

    def zstd_exports(self) -> None:
        """E: an export in zstd frames without checksums (stored, `unverified`), and one
        of two checksummed frames whose second is damaged (the first's rows only)."""
        line = json.dumps(_snapshot(UNCHECKED_GROUP, "0840", "hostile-unchecked-topic"))
        packed = zstandard.ZstdCompressor(write_checksum=False).compress(f"{line}\n".encode())
        self.write(UNCHECKED_ZSTD, packed)
        self.files[UNCHECKED_ZSTD] = Expected(
            status=UNVERIFIED, reason=("checksum",), lines=1, row_lines={1}
        )
        checked = zstandard.ZstdCompressor(write_checksum=True)
        frames = [
            checked.compress(f"{json.dumps(_snapshot(g, '0850', f'{g}-topic'))}\n".encode())
            for g in FRAME_GROUPS
        ]
        second = flipped(frames[1], len(frames[1]) // 2)
        self.write(DAMAGED_ZSTD, frames[0] + second)
        why = ("zstd stream", "unreadable")
        self.files[DAMAGED_ZSTD] = Expected(
            status=INCOMPLETE, reason=why, quarantined={None: why}, lines=1, row_lines={1}
        )

    def exports(self) -> None:
        """B, C, D, H: jsonl exports of new groups."""
        max_lag = _snapshot(MAX_LAG_GROUP, "0900", MAX_LAG_TOPIC)
        max_lag["offsets"] = [
            {"topic": MAX_LAG_TOPIC, "partition": 0, "current_offset": 0, "log_end_offset": MAX64}
        ]
        self._export(MAX_LAG_EXPORT, [(max_lag, None)])
        negative = _snapshot(NEGATIVE_GROUP, "0920", "hostile-negative-topic", partitions=3)
        negative["offsets"][1].update(current_offset=-1, log_end_offset=MAX64)
        empty = _snapshot(EMPTY_TOPIC_GROUP, "0920", "hostile-empty-topic-topic")
        empty["offsets"][0]["topic"] = ""
        first, torn, last = SURROGATE_EXPORTS
        self._export(
            first,
            [
                (_snapshot(SURROGATE_GROUP, "0920", SURROGATE_TOPIC, members=2), None),
                (negative, ("negative current_offset", "-1")),
                (empty, ("topic",)),
            ],
        )
        broken = _snapshot(SURROGATE_GROUP, "0940", SURROGATE_TOPIC, members=2)
        broken["members"][1]["client_id"] = "c-2\udc80"
        self._export(torn, [(broken, ("lone surrogate", "client_id"))])
        wide = _snapshot(WIDE_GROUP, "1000", WIDE_TOPIC)
        wide["members"][0]["assignment"] = [[WIDE_TOPIC, p] for p in range(WIDE_PARTITIONS)]
        wide["offsets"] = []
        self._export(
            last,
            [(_snapshot(SURROGATE_GROUP, "1000", SURROGATE_TOPIC, members=2), None), (wide, None)],
        )

    def _export(self, relative: str, snapshots: list[tuple[dict, tuple[str, ...] | None]]) -> None:
        """A jsonl file of `snapshots`, each with the reason it is quarantined, or None."""
        # ensure_ascii: a lone surrogate written as its JSON escape, `\\udc80`.
        lines = [json.dumps(s, ensure_ascii=True) for s, _ in snapshots]
        self.write(relative, "".join(f"{line}\n" for line in lines).encode())
        expected = Expected(status=OK, lines=len(lines))
        for number, (line, (_, why)) in enumerate(zip(lines, snapshots, strict=True), start=1):
            if why is None:
                expected.row_lines.add(number)
            else:
                expected.quarantined[number] = why
                expected.reason = ("quarantined",)
                self.texts[(relative, number)] = line
        self.files[relative] = expected

    def bombs(self) -> None:
        """BOMBS, each refused unread once it passes 100 times its stored size."""
        why = ("compression bomb", "capture.max_inflation_ratio")
        for name, parts in BOMBS.items():
            relative = capture(BOMBS_AT, name)
            self.write(relative, bomb(*parts))
            self.files[relative] = Expected(
                status=REJECTED, reason=why, quarantined={None: why}, opened=True
            )


def _snapshot(group: str, at: str, topic: str, *, members: int = 1, partitions: int = 2) -> dict:
    """A sound jsonl snapshot of a new group reading a topic of its own at 2026-11-20
    `at`: each member one partition (the last member the rest), each partition's
    offsets."""
    names = [f"{group}-{m}" for m in range(1, members + 1)]
    owned = {name: [] for name in names}
    for p in range(partitions):
        owned[names[min(p, members - 1)]].append(p)
    return {
        "group_id": group,
        "captured_at": f"2026-11-20T{at[:2]}:{at[2:]}:00Z",
        "state": "Stable",
        "assignment_strategy": "range",
        "coordinator": {"host": "kafka-1.lab.example.net:9092", "id": 1},
        "members": [
            {
                "member_id": name,
                "client_id": f"c-{m}",
                "host": f"/10.9.0.{m}",
                "subscription": [topic],
                "assignment": [[topic, p] for p in owned[name]],
            }
            for m, name in enumerate(names, start=1)
        ],
        "offsets": [
            {
                "topic": topic,
                "partition": p,
                "current_offset": 100 + p,
                "log_end_offset": 110 + p,
                "consumer_id": names[min(p, members - 1)],
            }
            for p in range(partitions)
        ],
    }
