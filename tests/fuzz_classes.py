"""Fuzz classes whose rule needs more than one mutated file and the checker (issue 36).

fuzz_support's checker judges one parse of one capture. These classes judge a variant
against a second run that tells what its outputs must be:

- far dates (item 2): log lines or jsonl snapshots re-dated far from their path's date
  (a log line more than a day, a snapshot any day). Every such line the un-re-dated
  file wrote must be quarantined with a `date mismatch: ...` reason, and none written.
- absurd log end (item 6): a history of offsets captures in which three groups read
  one topic's partitions; one row of one capture gets LOG-END-OFFSET 2^63-1, 9e18, 0,
  ... The row is stored as written or quarantined (the usual checker), and no other
  group's lag_distribution row (offset and time lag, from lag_distribution's Spark-free
  topic_tables) differs from the clean history's.
- compressed (item 8): a capture gzip- or zstd-compressed (one or two members/frames),
  sometimes cut short. Whole, it gives the plain file's rows and accounting; cut, the
  readable lines (as zlib or zstandard read them) are accounted for, the cut line
  quarantined, and the file says why (a quarantine row standing for no line).

A class makes a `Derived` variant from a random.Random; `check` returns its problems.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import re
import zlib
from collections.abc import Callable
from typing import Any

import zstandard
from fuzz_support import (
    CRASH,
    LINES,
    SEEDS,
    VALUE,
    FileOutputs,
    Problem,
    RandomChooser,
    Seed,
    Variant,
    check_file,
    check_variant,
    mutate,
    physical_lines,
    run_capture,
)
from sample_tables import sample_table

from fleet_rebalance.capture.compressed import compression
from fleet_rebalance.capture.paths import parse_capture_path
from fleet_rebalance.capture.result import OK, REJECTED, UNVERIFIED
from fleet_rebalance.metrics.lag_distribution import INPUT_COLUMNS, topic_tables

DATE_MISMATCH = "date mismatch:"


@dataclasses.dataclass(frozen=True)
class Derived(Variant):
    """A class's variant: `reference` is what the target file was before the class's
    own change (un-re-dated, uncompressed), `changed` names what that change touched."""

    reference: bytes = b""
    changed: tuple[Any, ...] = ()

    @property
    def reference_files(self) -> dict[str, bytes]:
        return {**self.seed.files, self.seed.target: self.reference}


def _some_mutations(seed: Seed, rng: Any, longest: int) -> tuple[bytes, list[str]]:
    """Half the time the seed's file as it is, else with fuzz_support's mutations."""
    data = seed.files[seed.target]
    if rng.randrange(2):
        return data, []
    return mutate(data, RandomChooser(rng), seed.kind, longest)


# ----------------------------------------------------------------- far dates (item 2)

# A log line's timestamp (log4j `[2026-11-20 09:40:05,171]`) or a snapshot's captured_at.
DATED = re.compile(rb'(?:^\[|"captured_at": ")(\d{4}-\d{2}-\d{2})', re.MULTILINE)
LOG_FAR_DAYS = (-400, -30, -3, -2, 2, 3, 7, 365)  # a log reaches a day either side
JSONL_FAR_DAYS = (-365, -2, -1, 1, 2, 30)  # a snapshot reaches no other day


def far_dates(rng: Any, longest: int) -> Derived:
    seed = rng.choice(SEEDS["coordinator_log"] + SEEDS["jsonl"])
    data, done = _some_mutations(seed, rng, longest)
    path_date = parse_capture_path(seed.target).captured_at.date()
    days = LOG_FAR_DAYS if seed.kind == "coordinator_log" else JSONL_FAR_DAYS
    stamps = list(DATED.finditer(data))
    if not stamps:
        return Derived(seed, data, (*done, "far_dates(no dated line)"), data)
    how = rng.randrange(3)  # every dated line, one, or some
    if how == 0:
        chosen = stamps
    elif how == 1:
        chosen = [rng.choice(stamps)]
    else:
        chosen = rng.sample(stamps, rng.randrange(1, len(stamps) + 1))
    moved = bytearray(data)
    shifts = []
    for stamp in chosen:
        shift = rng.choice(days)
        new = (path_date + dt.timedelta(days=shift)).isoformat().encode()
        moved[stamp.start(1) : stamp.end(1)] = new
        shifts.append(shift)
    what = f"far_dates({len(chosen)} of {len(stamps)} dated lines, days {sorted(set(shifts))})"
    return Derived(seed, bytes(moved), (*done, what), data)


def check_far_dates(variant: Derived) -> list[Problem]:
    outputs = run_capture(variant.files)
    problems = check_variant(variant.files, outputs)
    if any(p.kind == CRASH for p in problems):
        return problems
    reference = run_capture(variant.reference_files)[variant.seed.target]
    target = outputs[variant.seed.target]
    old, new = physical_lines(variant.reference), physical_lines(variant.data)
    if len(old) != len(new) or reference.crash is not None:
        return problems  # a re-dating never changes the line count; the reference crashed
    written_before = {r["line_number"] for r in _stored(reference)}
    written = {r["line_number"] for r in _stored(target)}
    mismatched = {
        q["line_number"]
        for q in target.rows.get("quarantine", [])
        if q["reason"].startswith(DATE_MISMATCH)
    }
    for number, (before, after) in enumerate(zip(old, new, strict=True), start=1):
        if before == after:
            continue
        if number in written:
            problems.append(
                Problem(VALUE, "far-dated line written", f"{variant.seed.target}: {after[:120]!r}")
            )
        elif number in written_before and number not in mismatched:
            problems.append(
                Problem(
                    LINES,
                    "far-dated line not quarantined with a date mismatch reason",
                    f"{variant.seed.target}: {after[:120]!r}",
                    number,
                )
            )
    return problems


def _stored(outputs: FileOutputs) -> list[dict[str, Any]]:
    return [
        row
        for table, rows in outputs.rows.items()
        if table != "quarantine"
        for row in rows
        if row.get("line_number") is not None
    ]


# ----------------------------------------------------------- absurd log end (item 6)

HISTORY_CLUSTER = "fuzz-lag"
CAPTURE_MINUTES = (0, 5, 10, 15)
SHARED_GROUPS = ("a-readers", "b-readers", "c-readers")  # all read topic orders
OTHER_GROUP = "d-audit"  # reads topic audit only
PARTITIONS = 2
# LOG-END-OFFSET values no partition had (issue 36: 2^63-1 moved other groups' lags).
ABSURD_LOG_ENDS = (2**63 - 1, 9 * 10**18, 2**62, 10**18, 2**63, 10**30, 0, 1, -1)
ABSURDLY_LONG = 2**62
OFFSETS_FORMAT = "{:<16} {:<16} {:<10} {:<15} {:<15} {:<15} {:<24} {:<15} {}"
HEADER = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG")


def _capture_path(minute: int) -> str:
    return f"{HISTORY_CLUSTER}/captures/2026-11-20T10{minute:02d}Z/consumer-groups-offsets.txt"


def _offsets_view(rows: list[tuple[str, str, int, int, int]]) -> bytes:
    """Kafka's describe --offsets view (ConsumerGroupCommand's format: columns padded and
    always one space apart), one block per group."""
    blocks = []
    for group in dict.fromkeys(r[0] for r in rows):
        lines = [OFFSETS_FORMAT.format(*HEADER, "CONSUMER-ID", "HOST", "CLIENT-ID")]
        for g, topic, partition, committed, end in rows:
            if g == group:
                client = f"consumer-{g}-1"
                values = (g, topic, partition, committed, end, end - committed)
                lines.append(OFFSETS_FORMAT.format(*values, client + "-5f1c", "/10.0.0.1", client))
        blocks.append("\n" + "\n".join(lines) + "\n")
    return "".join(blocks).encode()


def lag_history(rng: Any) -> Seed:
    """Captures 5 minutes apart of a partitions' log ends growing at random rates."""
    ends = {("orders", p): rng.randrange(1000, 10**7) for p in range(PARTITIONS)}
    ends[("audit", 0)] = rng.randrange(1000, 10**6)
    files = {}
    for minute in CAPTURE_MINUTES:
        rows = []
        for (topic, partition), end in ends.items():
            groups = SHARED_GROUPS if topic == "orders" else (OTHER_GROUP,)
            for group in groups:
                rows.append((group, topic, partition, end - rng.randrange(0, 300), end))
        files[_capture_path(minute)] = _offsets_view(rows)
        ends = {key: end + rng.randrange(0, 600) for key, end in ends.items()}
    target = rng.choice(sorted(files))
    return Seed("offsets history (3 groups share orders)", "offsets", target, files)


ROW = re.compile(rb"^(\S+) +(\S+) +(\d+) +(\d+) +(\d+) +(\d+) ", re.MULTILINE)


def absurd_log_end(rng: Any, longest: int) -> Derived:
    seed = lag_history(rng)
    data = seed.files[seed.target]
    rows = [m for m in ROW.finditer(data) if m.group(2) == b"orders"]
    row = rng.choice(rows)
    end = rng.choice(ABSURD_LOG_ENDS)
    committed = int(row.group(4))
    lag = rng.choice([str(end), str(end - committed), "-"]).encode()
    spelled = str(end).encode()
    line = row.group(0)
    new = (
        line[: row.start(5) - row.start()]
        + spelled
        + b" " * max(1, 16 - len(spelled))
        + lag
        + b" " * max(1, 16 - len(lag))
    )
    moved = data[: row.start()] + new + data[row.end() :]
    what = (
        f"absurd_log_end({row.group(1).decode()} orders-{row.group(3).decode()} "
        f"LOG-END-OFFSET {end} LAG {lag.decode()})"
    )
    changed = (row.group(1).decode(), "orders", int(row.group(3)), end)
    return Derived(seed, moved, (what,), data, changed)


def check_absurd_log_end(variant: Derived) -> list[Problem]:
    """The ingest bars for the changed capture; every lag_distribution row of the other
    groups (and of the changed group's other topics) as the clean history's; a stored
    reading of 2^62 or more in log_end_quarantine (no partition is near that long)."""
    outputs = run_capture({variant.seed.target: variant.data})
    problems = check_variant({variant.seed.target: variant.data}, outputs)
    if problems:
        return problems
    clean, _ = _lag_rows(variant.seed.files)
    dirty, refused = _lag_rows(variant.files)
    group, topic, partition, end = variant.changed
    stored = any(
        (r["group_id"], r["topic"], r["partition"]) == (group, topic, partition)
        for r in outputs[variant.seed.target].rows.get("offsets", [])
    )
    kept_out = {(r["group_id"], r["topic"], r["partition"], r["log_end_offset"]) for r in refused}
    if stored and end >= ABSURDLY_LONG and (group, topic, partition, end) not in kept_out:
        problems.append(
            Problem(VALUE, "an absurd log end stored and not in log_end_quarantine", f"{end}")
        )
    for key in sorted(set(clean) | set(dirty)):
        if key[:2] == (group, topic):
            continue
        if repr(clean.get(key)) != repr(dirty.get(key)):
            problems.append(
                Problem(
                    VALUE,
                    "one absurd offsets row changed another group's lag_distribution",
                    f"{key}: clean {clean.get(key)!r}, with the row {dirty.get(key)!r}"[:600],
                )
            )
    return problems


def _lag_rows(
    files: dict[str, bytes],
) -> tuple[dict[tuple[str, str], dict[str, Any]], list[dict[str, Any]]]:
    """lag_distribution rows by (group, topic) of the history's run date, and its
    log_end_quarantine rows, through the parse task and lag_distribution's per-topic
    call, as the nightly job runs them."""
    samples = []
    run_date = None
    for relative, data in files.items():
        rows = run_capture({relative: data})[relative].rows.get("offsets", [])
        samples += [r for r in rows if r["topic"] is not None and r["partition"] is not None]
        run_date = parse_capture_path(relative).captured_at.date()
    out, refused = {}, []
    for topic in sorted({r["topic"] for r in samples}):
        table = sample_table([r for r in samples if r["topic"] == topic], INPUT_COLUMNS)
        tables = topic_tables(table, run_date)
        for row in tables["lag_distribution"]:
            out[(row["group_id"], row["topic"])] = row
        refused += tables["log_end_quarantine"]
    return out, refused


# --------------------------------------------------------------- compressed (item 8)


def compressed(rng: Any, longest: int) -> Derived:
    kind = rng.choice(sorted(SEEDS))
    seed = rng.choice(SEEDS[kind])
    data, done = _some_mutations(seed, rng, longest)
    cut = rng.randrange(len(data) + 1)
    parts = [data[:cut], data[cut:]] if rng.randrange(2) else [data]
    if rng.randrange(2):
        level = rng.choice([1, 6, 9])
        packed = b"".join(gzip.compress(p, compresslevel=level, mtime=0) for p in parts)
        what = f"gzip(level {level}, {len(parts)} members)"
    else:
        level, checksum = rng.choice([1, 3, 19]), bool(rng.randrange(2))
        packer = zstandard.ZstdCompressor(level=level, write_checksum=checksum)
        packed = b"".join(packer.compress(p) for p in parts)
        what = f"zstd(level {level}, {len(parts)} frames{', checksum' * checksum})"
    done = [*done, what]
    damage = rng.randrange(3)
    if damage == 1:
        at = rng.randrange(len(packed))
        packed = packed[:at]
        done.append(f"cut_compressed(@{at})")
    elif damage == 2:  # issue 56: a flipped byte anywhere (header, data, checksum)
        at, bit = rng.randrange(len(packed)), 1 << rng.randrange(8)
        packed = packed[:at] + bytes([packed[at] ^ bit]) + packed[at + 1 :]
        done.append(f"flip_compressed(@{at} ^{bit:#04x})")
    return Derived(seed, packed, tuple(done), data)


def readable(packed: bytes) -> tuple[bytes, bool]:
    """What zlib or zstandard read of a (maybe cut or damaged) gzip or zstd stream of
    members or frames that each read to their end and checked out (a member cut short
    or failing its check is never verified, so none of its bytes count: issue 56), and
    whether the stream was read to its end."""
    method = compression(packed)
    out, rest = [], packed
    while rest:
        if method == "gzip":
            if not rest.startswith(b"\x1f\x8b") and not rest.strip(b"\x00"):
                break  # zero padding after the last member, as zcat reads it
            reader: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
        else:
            reader = zstandard.ZstdDecompressor().decompressobj()
        try:
            piece = reader.decompress(rest)
        except (zlib.error, zstandard.ZstdError):
            return b"".join(out), False
        if not reader.eof:
            return b"".join(out), False
        out.append(piece)
        rest = reader.unused_data
    return b"".join(out), True


def check_compressed(variant: Derived) -> list[Problem]:
    if compression(variant.data) is None:  # cut inside the magic bytes: a plain file
        return check_variant(variant.files, run_capture(variant.files))
    outputs = run_capture(variant.files)
    target = outputs[variant.seed.target]
    if target.crash is not None:
        return check_variant(variant.files, outputs)
    plain, whole = readable(variant.data)
    if whole:  # all of it, or cut between two members or frames: a shorter whole file
        files = {**variant.seed.files, variant.seed.target: plain}
        return check_variant(files, outputs) + _same_as_plain(
            files, variant.seed.target, target, variant.data
        )
    problems = []
    whole_rows = [q for q in target.rows.get("quarantine", []) if q["line_number"] is None]
    if not whole_rows and target.summary and target.summary["status"] != REJECTED:
        problems.append(Problem(LINES, "cut compressed file without a reason", "no file row"))
    if target.summary is not None and target.summary["status"] != REJECTED:
        target = _without_file_rows(target)
    return problems + check_file(plain, target)


def _without_file_rows(target: FileOutputs) -> FileOutputs:
    """The outputs without the damage's file row."""
    quarantine = [q for q in target.rows.get("quarantine", []) if q["line_number"] is not None]
    return dataclasses.replace(target, rows={**target.rows, "quarantine": quarantine})


SUMMARY_FIELDS = ("kind", "status", "lines", "parsed_lines", "structural", "rows")


def _same_as_plain(
    files: dict[str, bytes], relative: str, target: FileOutputs, packed: bytes
) -> list[Problem]:
    """The plain file's outcome; a zstd file with a frame without checksum is
    `unverified` where the plain one is ok (issue 56)."""
    plain = run_capture(files)[relative]
    problems = []
    if plain.summary and target.summary:
        expected = dict(plain.summary)
        if expected["status"] == OK and _unchecked_frames(packed):
            expected["status"] = UNVERIFIED
        for field in SUMMARY_FIELDS:
            if expected.get(field) != target.summary.get(field):
                problems.append(
                    Problem(
                        VALUE,
                        f"compressed file's {field} differs from the plain file's",
                        f"{target.summary.get(field)!r}, plain {expected.get(field)!r}",
                    )
                )
    for table in sorted(set(plain.rows) | set(target.rows)):
        if repr(plain.rows.get(table, [])) != repr(target.rows.get(table, [])):
            problems.append(
                Problem(VALUE, f"compressed file's {table} rows differ from the plain file's", "")
            )
    return problems


def _unchecked_frames(packed: bytes) -> bool:
    """Whether a zstd stream holds a frame without a checksum (what `zstd -lv` says)."""
    if compression(packed) != "zstd":
        return False
    rest = packed
    while rest:
        if not zstandard.get_frame_parameters(rest).has_checksum:
            return True
        reader = zstandard.ZstdDecompressor().decompressobj()
        reader.decompress(rest)
        rest = reader.unused_data
    return False


# ------------------------------------------------------------------------- classes


@dataclasses.dataclass(frozen=True)
class FuzzClass:
    name: str
    item: int  # issue 36's numbered case
    make: Callable[[Any, int], Derived]
    check: Callable[[Derived], list[Problem]]


CLASSES = {
    c.name: c
    for c in (
        FuzzClass("far dates", 2, far_dates, check_far_dates),
        FuzzClass("absurd log end", 6, absurd_log_end, check_absurd_log_end),
        FuzzClass("compressed", 8, compressed, check_compressed),
    )
}
