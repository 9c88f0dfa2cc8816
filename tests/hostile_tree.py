"""A hostile raw tree for issue 19 ("hostile input: nothing crashes a date, nothing is
silently lost or silently changed"): one cluster of data/sample for one date, copied,
then given every hostile case as files, with a manifest of what ingest must do with
each of them.

Hostile lines are added at the end of a file (or replace a line in place), so every
other line keeps its number: the rows of those lines must be exactly the clean run's.
Each case is either
- a file ingest must not read or cannot date: an ingested_files row with its status
  and reason, and nothing else (no rows, no quarantine);
- lines to quarantine, each with its reason, in a file whose other lines are unchanged;
- rows that must be stored exactly (a new group, a value holding U+2028, a UTF-16
  copy of a capture).
The groups the cases may legitimately change (new groups, the group of the members
capture that lost a line) are `touched`; every other group's silver and gold rows
must equal the clean run's. New groups read topics of their own: a log-end offset is a
fact of the topic partition, which every group reading it shares (time lag is
interpolated from it), so a new group reading `orders` would touch every group that
reads `orders`.
"""

from __future__ import annotations

import codecs
import datetime as dt
import json
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "fleet_v1"
CLUSTER = "lab"
DAY = dt.date(2026, 11, 20)
CAPTURES = f"{CLUSTER}/captures"
LOGS = f"{CLUSTER}/logs"
RUNNING_AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

OK, INCOMPLETE, FAILED_CAPTURE, REJECTED, SKIPPED = (
    "ok",
    "incomplete",
    "failed_capture",
    "rejected",
    "skipped",
)

# Where each case goes (captures of the copied cluster on DAY, or new files).
NUMBERS_OFFSETS = f"{CAPTURES}/2026-11-20T0840Z/consumer-groups-offsets.txt"
DAMAGED_MEMBERS = f"{CAPTURES}/2026-11-20T0920Z/consumer-groups-members.txt"
# Its first row: billing-enricher-4, 4 members at every capture of the day, so a lost
# line replayed as is would be a member leaving and coming back (phantom events).
DAMAGED_LINE = 3
DAMAGED_GROUP = "billing-enricher-4"
COORDINATOR_STATE = f"{CAPTURES}/2026-11-20T0840Z/consumer-groups-state.txt"
LEADER_TOPICS = f"{CAPTURES}/2026-11-20T0800Z/topics.txt"
EXPORT = f"{CLUSTER}/exports/2026-11-20T0930Z/groups.jsonl"
UTF16_OFFSETS = f"{CAPTURES}/2026-11-20T0700Z/consumer-groups-offsets.txt"
RTL_CAPTURE = f"{CAPTURES}/2026-11-20T1000Z"
# The files of that capture the group is added to, by the bronze table they feed.
RTL_FILES = {
    "offsets": f"{RTL_CAPTURE}/consumer-groups-offsets.txt",
    "members": f"{RTL_CAPTURE}/consumer-groups-members.txt",
    "group_states": f"{RTL_CAPTURE}/consumer-groups-state.txt",
}
COORDINATOR_LOG = f"{LOGS}/broker-1/server.log.2026-11-20-02"

FAR_FUTURE = f"{CAPTURES}/9999-12-31T23:59:59-01:00/consumer-groups-offsets.txt"
HOUR_25 = f"{CAPTURES}/2026-11-20T2500Z/consumer-groups-offsets.txt"
FIFO = f"{CAPTURES}/2026-11-20T0950Z/consumer-groups-offsets.txt"
UNREADABLE = f"{CAPTURES}/2026-11-20T0955Z/consumer-groups-state.txt"
ODD = f"{CAPTURES}/2026-11-20T0920Z"  # the capture that gets the odd directory entries
LOOP_A, LOOP_B = f"{ODD}/loop-a.txt", f"{ODD}/loop-b.txt"
DANGLING = f"{ODD}/consumer-groups-topics.txt"
PASSWD = f"{ODD}/passwd.txt"
UNDECODABLE_NAME = b"\xff-offsets.txt"
UNDECODABLE = f"{ODD}/\\xff-offsets.txt"  # as ingested_files spells it (escaped)
HIDDEN = f"{ODD}/.consumer-groups-offsets.txt"

# New groups: no clean-run group is touched by them.
RTL_GROUP = "rtl-\u202egnissecorp-sredro"
EXPORT_GROUP = "hostile-export-group"
SEPARATOR_GROUP = "hostile-export-line-separator"
SEPARATOR_CLIENT = "exporter\u2028client"  # U+2028 LINE SEPARATOR, inside a JSON string
SEPARATOR_MEMBER = "exporter-ls-1"
EXPORT_TOPIC, RTL_TOPIC = "hostile-export-topic", "rtl-topic"
# What a link out of raw_root would leak if it were followed.
PASSWD_MARK = "root:"


@dataclass
class Expected:
    """What ingest must record for one file of the hostile tree.

    `quarantined`: line number (None: the whole file) -> substrings its quarantine
    reason must hold (case-insensitive); exactly these lines are quarantined.
    `reason`: substrings of ingested_files.reason. `lines`: the file's physical line
    count as ingest must account for it (None for a file not read). `row_lines`: added
    lines that must become rows. `same_rows_as`: a clean file whose rows this file's
    rows must equal (all columns but source_file). `opened`: a file refused after it
    was opened (a compression bomb: hashed, its kind unknown); by default a skipped or
    rejected file is never opened."""

    status: str
    reason: tuple[str, ...] = ()
    quarantined: dict[int | None, tuple[str, ...]] = field(default_factory=dict)
    lines: int | None = None
    row_lines: set[int] = field(default_factory=set)
    same_rows_as: str | None = None
    opened: bool | None = None

    @property
    def read(self) -> bool:
        """Whether rows may come from it."""
        return self.status not in (SKIPPED, REJECTED)

    @property
    def unopened(self) -> bool:
        return not self.read if self.opened is None else not self.opened


@dataclass
class Manifest:
    root: Path
    files: dict[str, Expected]
    # Lines of files the clean tree also has that were added or replaced: the rows of
    # every other line of those files must be the clean run's.
    changed_lines: dict[str, set[int]]
    # (cluster, group_id) whose silver/gold rows may differ from the clean run's.
    touched: set[tuple[str, str]]
    # The group of the members capture that lost a line, and that capture's time.
    incomplete_group: tuple[str, str]
    incomplete_at: dt.datetime
    # Files the clean tree holds whose bytes are unchanged.
    untouched: set[str]
    # The exact quarantined line texts (source_file, line_number) -> line.
    quarantined_text: dict[tuple[str, int], str]
    skipped_cases: list[str]


def copy_clean_tree(dest: Path, sample: Path = SAMPLE) -> Path:
    """`dest` holding one cluster of data/sample: its captures of DAY and all its broker
    logs (those of the day before are read for the lines of DAY they may hold)."""
    day = DAY.isoformat()
    for path in sorted((sample / CAPTURES).iterdir()):
        if path.name.startswith(day):
            shutil.copytree(path, dest / CAPTURES / path.name)
    shutil.copytree(sample / LOGS, dest / LOGS)
    return dest


def build_hostile_tree(clean: Path, dest: Path) -> Manifest:
    """A copy of the clean tree `clean` at `dest`, with every hostile case added."""
    shutil.copytree(clean, dest, symlinks=True)
    builder = _Builder(dest)
    builder.offsets_numbers()
    builder.damaged_members()
    builder.coordinator_state()
    builder.topics_leader()
    builder.export()
    builder.path_timestamps()
    builder.odd_entries()
    builder.utf16()
    builder.rtl_group()
    builder.coordinator_log()
    untouched = unchanged(clean, dest, [*builder.changed, UTF16_OFFSETS])
    return Manifest(
        root=dest,
        files=builder.files,
        changed_lines=builder.changed,
        touched={
            (CLUSTER, DAMAGED_GROUP),
            (CLUSTER, RTL_GROUP),
            (CLUSTER, EXPORT_GROUP),
            (CLUSTER, SEPARATOR_GROUP),
        },
        incomplete_group=(CLUSTER, DAMAGED_GROUP),
        incomplete_at=dt.datetime(2026, 11, 20, 9, 20, tzinfo=dt.UTC),
        untouched=untouched,
        quarantined_text=builder.texts,
        skipped_cases=builder.skipped_cases,
    )


def unchanged(clean: Path, dest: Path, changed: Iterable[str]) -> set[str]:
    """The files of the clean tree that the hostile tree built from it holds as they
    were: all but `changed`, checked byte for byte."""
    files = {p.relative_to(clean).as_posix() for p in clean.rglob("*") if p.is_file()}
    untouched = files - set(changed)
    for relative in untouched:
        assert (clean / relative).read_bytes() == (dest / relative).read_bytes(), relative
    return untouched


def physical_lines(data: bytes) -> list[str]:
    """The lines DESIGN.md counts: split on `\\n` only (a `\\r` before it dropped), text
    UTF-8 or as its byte-order mark says."""
    encoding = "utf-8"
    for bom, name in (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            encoding, data = name, data[len(bom) :]
            break
    text = data.decode(encoding, errors="surrogateescape")
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def replace_token(line: str, index: int, value: str) -> str:
    """`line` with its index-th whitespace-separated value replaced, padding kept."""
    spans = [m.span() for m in re.finditer(r"[^ \t]+", line)]
    start, end = spans[index]
    return line[:start] + value + line[end:]


class _Builder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, Expected] = {}
        self.changed: dict[str, set[int]] = {}
        self.texts: dict[tuple[str, int], str] = {}
        self.skipped_cases: list[str] = []

    # ------------------------------------------------------------------ helpers

    def lines(self, relative: str) -> list[str]:
        return physical_lines((self.root / relative).read_bytes())

    def append(self, relative: str, new_lines: list[str]) -> list[int]:
        """Lines added at the end of the file; their numbers."""
        path = self.root / relative
        data = path.read_bytes()
        assert data.endswith(b"\n"), relative  # so the first added line is a line of its own
        first = len(physical_lines(data)) + 1
        path.write_bytes(data + "".join(f"{line}\n" for line in new_lines).encode("utf-8"))
        numbers = list(range(first, first + len(new_lines)))
        self.changed.setdefault(relative, set()).update(numbers)
        return numbers

    def expect_lines(
        self,
        relative: str,
        cases: list[tuple[str, tuple[str, ...]]],
        *,
        status: str = OK,
        reason: tuple[str, ...] = ("quarantined",),
    ) -> None:
        """Each (line, reason substrings) appended and quarantined."""
        numbers = self.append(relative, [line for line, _ in cases])
        expected = self.files.setdefault(relative, Expected(status=status, reason=reason))
        for number, (line, why) in zip(numbers, cases, strict=True):
            expected.quarantined[number] = why
            self.texts[(relative, number)] = line
        expected.lines = len(self.lines(relative))

    # ------------------------------------------------------------------ cases

    def offsets_numbers(self) -> None:
        """Offsets rows of the file's last group whose PARTITION or CURRENT-OFFSET is
        no number Kafka prints, or does not fit the column."""
        last = self.lines(NUMBERS_OFFSETS)[-1]
        partition, current = 2, 3
        cases = [
            (replace_token(last, partition, "2147483648"), ("PARTITION", "2147483648")),
            (
                replace_token(last, current, "9223372036854775808"),
                ("CURRENT-OFFSET", "9223372036854775808"),
            ),
            (replace_token(last, partition, "+7"), ("PARTITION", "+7")),
            (replace_token(last, partition, "1_0"), ("PARTITION", "1_0")),
            (replace_token(last, partition, "\uff11"), ("PARTITION", "\uff11")),  # fullwidth 1
            (replace_token(last, partition, "\u0661"), ("PARTITION", "\u0661")),  # Arabic-Indic 1
        ]
        self.expect_lines(NUMBERS_OFFSETS, cases)

    def damaged_members(self) -> None:
        """One byte of a member's #PARTITIONS turned into a letter, in place: the
        capture is incomplete and that group's replay must show no phantom event."""
        path = self.root / DAMAGED_MEMBERS
        lines = self.lines(DAMAGED_MEMBERS)
        header = lines[DAMAGED_LINE - 2].split()
        line = lines[DAMAGED_LINE - 1]
        assert line.split()[0] == DAMAGED_GROUP, line
        index = header.index("#PARTITIONS")
        start = [m.start() for m in re.finditer(r"[^ \t]+", line)][index]
        assert line[start].isdigit(), line
        damaged = line[:start] + "x" + line[start + 1 :]
        lines[DAMAGED_LINE - 1] = damaged
        path.write_bytes("".join(f"{text}\n" for text in lines).encode("utf-8"))
        self.changed.setdefault(DAMAGED_MEMBERS, set()).add(DAMAGED_LINE)
        self.texts[(DAMAGED_MEMBERS, DAMAGED_LINE)] = damaged
        self.files[DAMAGED_MEMBERS] = Expected(
            status=INCOMPLETE,
            reason=("#PARTITIONS",),
            quarantined={DAMAGED_LINE: ("#PARTITIONS",)},
            lines=len(lines),
        )

    def coordinator_state(self) -> None:
        """A state block for an existing group whose coordinator id is past 2^63."""
        lines = self.lines(COORDINATOR_STATE)
        header, row = lines[-2], lines[-1]
        bad = re.sub(r"\(\d+\)", "(9223372036854775808)", row)
        self.append(COORDINATOR_STATE, ["", header])  # structural: a blank line, a header
        self.expect_lines(COORDINATOR_STATE, [(bad, ("9223372036854775808",))])

    def topics_leader(self) -> None:
        """A partition line whose leader is past 2^31."""
        line = next(x for x in self.lines(LEADER_TOPICS) if "\tPartition: 0\t" in x)
        bad = re.sub(r"\tLeader: \d+\t", "\tLeader: 2147483648\t", line)
        self.expect_lines(LEADER_TOPICS, [(bad, ("Leader", "2147483648"))])

    def export(self) -> None:
        """A jsonl export: three snapshots of existing groups whose values have the
        wrong JSON type (quarantined whole), one valid snapshot of a new group, and one
        of another new group whose client_id holds U+2028 (one line, value intact)."""
        member = {
            "member_id": "hostile-export-1",
            "group_instance_id": None,
            "client_id": "hostile-export-1",
            "host": "/10.2.0.41",
            "subscription": [EXPORT_TOPIC],
            "assignment": [[EXPORT_TOPIC, 0], [EXPORT_TOPIC, 1]],
        }
        offsets = [
            {"topic": EXPORT_TOPIC, "partition": p, "current_offset": 10, "log_end_offset": 12}
            for p in (0, 1)
        ]
        snapshots: list[tuple[dict, tuple[str, ...] | None]] = [
            ({"group_id": DAMAGED_GROUP, "state": "Stable", "members": "abc"}, ("members",)),
            (
                {
                    "group_id": "orders-archiver-2",
                    "state": "Stable",
                    "members": [{**member, "subscription": EXPORT_TOPIC}],
                },
                ("subscription",),
            ),
            (
                {
                    "group_id": "search-enricher-0",
                    "state": "Stable",
                    "members": [member],
                    "offsets": [{**offsets[0], "partition": 3.7}],
                },
                ("partition", "3.7"),
            ),
            (
                {
                    "group_id": EXPORT_GROUP,
                    "state": "Stable",
                    "assignment_strategy": "range",
                    "coordinator": {"host": "kafka-1.lab.example.net:9092", "id": 1},
                    "members": [member],
                    "offsets": offsets,
                },
                None,
            ),
            (
                {
                    "group_id": SEPARATOR_GROUP,
                    "state": "Stable",
                    "assignment_strategy": "range",
                    "coordinator": {"host": "kafka-1.lab.example.net:9092", "id": 1},
                    "members": [
                        {**member, "member_id": SEPARATOR_MEMBER, "client_id": SEPARATOR_CLIENT}
                    ],
                    "offsets": offsets,
                },
                None,
            ),
        ]
        # ensure_ascii=False writes U+2028 as the character itself, not as \u2028.
        lines = [json.dumps(s, ensure_ascii=False) for s, _ in snapshots]
        assert "\u2028" in lines[-1]
        path = self.root / EXPORT
        path.parent.mkdir(parents=True)
        path.write_bytes("".join(f"{line}\n" for line in lines).encode("utf-8"))
        expected = Expected(status=OK, reason=("quarantined",), lines=len(lines))
        for number, (line, (_, why)) in enumerate(zip(lines, snapshots, strict=True), start=1):
            if why is None:
                expected.row_lines.add(number)
            else:
                expected.quarantined[number] = why
                self.texts[(EXPORT, number)] = line
        self.files[EXPORT] = expected

    def path_timestamps(self) -> None:
        """Valid captures whose path timestamp names no instant: year 10000 once in
        UTC, hour 25."""
        source = self.root / NUMBERS_OFFSETS.replace("0840Z", "0820Z")
        for relative, stamp in (
            (FAR_FUTURE, "9999-12-31T23:59:59-01:00"),
            (HOUR_25, "2026-11-20T2500Z"),
        ):
            (self.root / relative).parent.mkdir(parents=True)
            shutil.copy(source, self.root / relative)
            self.files[relative] = Expected(
                status=REJECTED, reason=("no capture time in the path", stamp)
            )

    def odd_entries(self) -> None:
        """Entries ingest must not read: a FIFO, an unreadable file, links that loop,
        dangle or lead out of raw_root, a name that is not UTF-8, a hidden file."""
        fifo = self.root / FIFO
        fifo.parent.mkdir(parents=True)
        os.mkfifo(fifo)  # no writer ever: opening it would block for good
        self.files[FIFO] = Expected(status=SKIPPED, reason=("FIFO",))
        if RUNNING_AS_ROOT:
            # chmod 000 does not stop root from reading: the case cannot be built here.
            self.skipped_cases.append("unreadable file (running as root)")
        else:
            unreadable = self.root / UNREADABLE
            unreadable.parent.mkdir(parents=True)
            shutil.copy(self.root / COORDINATOR_STATE.replace("0840Z", "0820Z"), unreadable)
            unreadable.chmod(0)
            self.files[UNREADABLE] = Expected(status=SKIPPED, reason=("permission denied",))
        (self.root / LOOP_A).symlink_to("loop-b.txt")
        (self.root / LOOP_B).symlink_to("loop-a.txt")
        self.files[LOOP_A] = Expected(status=SKIPPED, reason=("loop",))
        self.files[LOOP_B] = Expected(status=SKIPPED, reason=("loop",))
        (self.root / DANGLING).symlink_to("missing-topics.txt")
        self.files[DANGLING] = Expected(status=SKIPPED, reason=("dangling",))
        (self.root / PASSWD).symlink_to("/etc/passwd")
        self.files[PASSWD] = Expected(status=SKIPPED, reason=("outside raw_root",))
        source = self.root / NUMBERS_OFFSETS.replace("0840Z", "0820Z")
        shutil.copy(source, os.path.join(os.fsencode(self.root / ODD), UNDECODABLE_NAME))
        self.files[UNDECODABLE] = Expected(status=SKIPPED, reason=("UTF-8",))
        shutil.copy(source, self.root / HIDDEN)
        self.files[HIDDEN] = Expected(status=SKIPPED, reason=("hidden",))

    def utf16(self) -> None:
        """A capture re-encoded as UTF-16 with a byte-order mark: the same rows."""
        path = self.root / UTF16_OFFSETS
        text = path.read_bytes().decode("utf-8")
        path.write_bytes(text.encode("utf-16"))  # BOM, then the machine's byte order
        self.files[UTF16_OFFSETS] = Expected(
            status=OK, lines=len(physical_lines(path.read_bytes())), same_rows_as=UTF16_OFFSETS
        )

    def rtl_group(self) -> None:
        """A new group whose id holds U+202E, in one capture's offsets, members and
        state views (blocks appended in each file's own layout)."""
        member = "rtl-member-1-6f1c2a9e-0d3b-4c57-9a51-2b7d8e4f6a10"
        client = "consumer-rtl-1"
        host = "/10.2.0.77"
        offsets = RTL_FILES["offsets"]
        header = next(x for x in self.lines(offsets) if x.startswith("GROUP"))
        # A huge lag puts the group first in the report's worst-lag chart.
        rows = [
            f"{RTL_GROUP} {RTL_TOPIC} {p} 1000 5000000001000 5000000000000 {member} {host} {client}"
            for p in (0, 1)
        ]
        self._rows(offsets, ["", header, *rows])
        members = RTL_FILES["members"]
        header = next(x for x in self.lines(members) if x.startswith("GROUP"))
        assert header.split()[-4:] == [
            "CURRENT-EPOCH",
            "CURRENT-ASSIGNMENT",
            "TARGET-EPOCH",
            "TARGET-ASSIGNMENT",
        ], header
        self._rows(
            members, ["", header, f"{RTL_GROUP} {member} {host} {client} 2 - {RTL_TOPIC}:0,1 - -"]
        )
        state = RTL_FILES["group_states"]
        header = next(x for x in self.lines(state) if x.startswith("GROUP"))
        self._rows(
            state,
            ["", header, f"{RTL_GROUP} kafka-1.lab.example.net:9092  (1) range Stable 1"],
        )

    def _rows(self, relative: str, lines: list[str]) -> None:
        """Lines appended (blank and header structural, the rest rows)."""
        numbers = self.append(relative, lines)
        expected = self.files.setdefault(relative, Expected(status=OK))
        expected.row_lines |= {
            n for n, line in zip(numbers, lines, strict=True) if line.startswith(RTL_GROUP)
        }
        expected.lines = len(self.lines(relative))

    def coordinator_log(self) -> None:
        """Coordinator lines, otherwise valid, with a generation `1_0` and a broker id
        past 2^31, at the end of a broker log of the day."""
        prefix = "[GroupCoordinator id={broker} topic=__consumer_offsets partition=15]"
        logger = "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
        group = "orders-archiver-2"
        cases = [
            (
                f"[2026-11-20 02:58:00,000] INFO {prefix.format(broker=1)} Stabilized group "
                f"{group} generation 1_0 with 4 members. {logger}",
                ("generation", "1_0"),
            ),
            (
                f"[2026-11-20 02:59:00,000] INFO {prefix.format(broker=2147483648)} Preparing to "
                f"rebalance group {group} in state PreparingRebalance with old generation 9 "
                "(reason: removing member consumer-orders-archiver-2-6-dff3e462-eaea-6e49-c55a-"
                f"9d0c4fe95b66 on heartbeat expiration). {logger}",
                ("2147483648",),
            ),
        ]
        self.expect_lines(COORDINATOR_LOG, cases)
