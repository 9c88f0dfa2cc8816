"""Compressed captures and logs (issue 36 item 8): gzip and zstd told by their magic
bytes, decompressed as they are read, with the plain file's rows and line accounting;
a cut or damaged stream keeps what was readable and says why; a file larger than a
chunk is parsed a chunk at a time to the rows of a whole-file parse. No Spark."""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import hashlib
import io
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest
import zstandard

from fleet_rebalance.capture import compressed, store
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches, parse_file
from fleet_rebalance.capture.chunks import Budget
from fleet_rebalance.capture.parse import parse_capture, parse_stream
from fleet_rebalance.capture.result import (
    COORDINATOR_EVENTS,
    INCOMPLETE,
    OK,
    REJECTED,
    UNVERIFIED,
    ParseResult,
)
from fleet_rebalance.capture.text import LineStream, decode
from fleet_rebalance.config import ConfigError, load_config
from fleet_rebalance.filesystems import location
from fleet_rebalance.generate.render import GroupView, MemberView, offsets_view

PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample" / "prod-east"
CAPTURE = SAMPLE / "captures" / "2026-11-20T0900Z"
LAB = PROJECT / "tests" / "data" / "lab-4" / "raw-agent" / "lab-4" / "captures"
BROKER_LOG = PROJECT / "tests" / "data" / "broker_logs" / "kafka-3.x-old-coordinator-server.log"
# (relative path as ingest sees it, file): one of each kind.
KINDS = {
    "offsets": (
        "prod-east/captures/2026-11-20T0900Z/o.txt",
        CAPTURE / "consumer-groups-offsets.txt",
    ),
    "members": (
        "prod-east/captures/2026-11-20T0900Z/m.txt",
        CAPTURE / "consumer-groups-members.txt",
    ),
    "state": ("prod-east/captures/2026-11-20T0900Z/s.txt", CAPTURE / "consumer-groups-state.txt"),
    "topics": ("prod-east/captures/2026-11-20T0900Z/t.txt", CAPTURE / "topics.txt"),
    "coordinator_log": ("prod/logs/broker-1/server.log", BROKER_LOG),
    "jsonl": ("lab-4/captures/2026-11-29T075751Z/g.jsonl", LAB / "2026-11-29T075751Z/groups.jsonl"),
}


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zstded(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


COMPRESSORS = {"gzip": gzipped, "zstd": zstded}
OFFSETS_HEADER = (
    b"\nGROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
)


def outcome(result: ParseResult) -> dict:
    """Everything a parse gives the tables and the accounting, but the notes."""
    return {
        "kind": result.kind,
        "status": result.status,
        "rows": {table: result.records(table) for table in {*result.rows, *result.batches}},
        "quarantine": sorted(result.quarantine, key=lambda q: (q["line_number"] or 0, q["reason"])),
        "accounting": (result.lines, result.row_lines, result.quarantined_lines, result.structural),
        "rebalancing": result.rebalancing,
    }


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_compressed_capture_of_each_kind_parses_to_the_plain_files_rows(kind, method):
    """Given a sample capture of each kind, gzip- and zstd-compressed, Then it parses to
    the plain file's rows, quarantine and line accounting, noted as compressed.
    Expected: identical outcomes, rows present, note `read <method>-compressed`."""
    relative, source = KINDS[kind]
    plain_data = source.read_bytes()
    plain = parse_capture(relative, plain_data)
    packed = parse_capture(relative, COMPRESSORS[method](plain_data))
    assert plain.kind == kind
    assert plain.row_count > 0
    assert outcome(packed) == outcome(plain)
    assert packed.notes == plain.notes + Counter({f"read {method}-compressed": 1})
    assert packed.reconciles()


def _without_source(rows: dict[str, list[dict]]) -> dict[str, list[dict]]:
    return {
        t: [{k: v for k, v in r.items() if k != "source_file"} for r in rs]
        for t, rs in rows.items()
    }


def test_detection_is_by_magic_bytes_not_by_name():
    """Given gzip bytes named `.txt` and plain text named `.gz`, Then each is read as
    what its bytes are. Expected: both give the plain file's rows; only the gzip bytes
    are noted as compressed."""
    relative, source = KINDS["offsets"]
    data = source.read_bytes()
    plain = outcome(parse_capture(relative, data))
    as_txt = parse_capture(relative, gzipped(data))  # gzip behind a .txt name
    as_gz = parse_capture(relative + ".gz", data)  # plain text behind a .gz name
    assert outcome(as_txt) == plain
    assert as_txt.notes["read gzip-compressed"] == 1
    assert _without_source(outcome(as_gz)["rows"]) == _without_source(plain["rows"])
    assert "read gzip-compressed" not in as_gz.notes
    assert compressed.compression(b"\x1f\x8b\x08") == "gzip"
    assert compressed.compression(b"\x28\xb5\x2f\xfd") == "zstd"
    assert compressed.compression(b"GROUP TOPIC") is None


def test_concatenated_gzip_members_and_zstd_frames_are_one_stream():
    """Given `cat a.gz b.gz` (and two zstd frames in a row), Then both parts are read,
    as zcat does. Expected: the rows of the two halves of the log together."""
    relative, source = KINDS["coordinator_log"]
    lines = source.read_bytes().splitlines(keepends=True)
    first, second = b"".join(lines[: len(lines) // 2]), b"".join(lines[len(lines) // 2 :])
    whole = outcome(parse_capture(relative, first + second))
    for packer in COMPRESSORS.values():
        assert outcome(parse_capture(relative, packer(first) + packer(second))) == whole
    padded = gzipped(first + second) + b"\x00" * 512  # tape padding after a gzip member
    assert outcome(parse_capture(relative, padded)) == whole


def _rotated_log_tree(tmp_path: Path) -> tuple[Path, str, bytes]:
    """A raw_root holding a rotated, compressed server.log of the sample."""
    plain = SAMPLE / "logs" / "broker-1" / "server.log.2026-11-20-02"
    relative = "prod-east/logs/broker-1/server.log.2026-11-20-02.gz"
    target = tmp_path / relative
    target.parent.mkdir(parents=True)
    packed = gzipped(plain.read_bytes())
    target.write_bytes(packed)
    shutil.copy(plain, tmp_path / "prod-east/logs/broker-1/server.log.2026-11-20-02")
    return tmp_path, relative, packed


def _file(relative: str) -> dict:
    return {"relative": relative, "cluster": "prod-east", "captured_at": None, "group": None}


def test_rotated_server_log_gz_ingests_like_the_plain_log(tmp_path):
    """Given logrotate's server.log.<hour>.gz beside the plain log in a raw_root, When a
    parse task reads both, Then the .gz gives the plain log's coordinator events, its
    summary reconciles, and its sha256 is that of the file as stored (compressed); the
    listing's sniff takes it for a log. Expected: equal event rows."""
    root, relative, packed = _rotated_log_tree(tmp_path)
    raw_root = location(str(root))
    parse = functools.partial(parse_file, raw_root, path_pattern=r"^(?P<cluster>[^/]+)/")
    plain_relative = relative.removesuffix(".gz")
    gz_result, gz_sha = parse(_file(relative), log_timezone="UTC")
    plain_result, _ = parse(_file(plain_relative), log_timezone="UTC")
    assert gz_result.kind == "coordinator_log"
    gz_rows = [
        {k: v for k, v in r.items() if k != "source_file"}
        for r in gz_result.records(COORDINATOR_EVENTS)
    ]
    plain_rows = [
        {k: v for k, v in r.items() if k != "source_file"}
        for r in plain_result.records(COORDINATOR_EVENTS)
    ]
    assert gz_rows == plain_rows and gz_rows
    assert gz_sha == hashlib.sha256(packed).hexdigest() == store.sha256(raw_root, relative)
    raw = store.RawFile.at(relative, len(packed), r"^(?P<cluster>[^/]+)/")
    assert store.sniff(raw_root, raw).is_log is True
    summaries = [
        out
        for table, out in capture_batches(
            [_file(relative)],
            functools.partial(parse, log_timezone="UTC"),
            dt.date(2026, 11, 20),
        )
        if table == FILE_REPORT
    ]
    assert summaries[0]["reconciles"] and summaries[0]["status"] == OK
    assert summaries[0]["rows"] == len(plain_rows)


def _in_units(data: bytes, method: str, cuts: list[int]) -> tuple[bytes, list[int]]:
    """`data` as one gzip member or zstd frame per piece between `cuts` (byte offsets),
    concatenated (how zcat reads them); and each unit's start in the compressed bytes."""
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    packed, starts = b"", []
    for piece in pieces:
        starts.append(len(packed))
        packed += COMPRESSORS[method](piece)
    return packed, starts


def _line_end(data: bytes, share: float) -> int:
    """The offset just past the line end nearest `share` of `data`."""
    return data.index(b"\n", int(len(data) * share)) + 1


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
def test_a_cut_stream_stores_only_the_rows_of_its_verified_units(method):
    """Given a compressed offsets capture (~1 MB) of three gzip members (zstd frames)
    split at line ends, cut inside the third, Then only the rows of the first two
    (verified by their CRC-32 or checksum) are stored, the file is incomplete and a
    whole-file row (standing for no line) names the cut and the bytes not read.
    Expected: the rows of the first two units' text exactly, the accounting holds."""
    relative = "prod-east/captures/2026-11-20T0900Z/consumer-groups-offsets.txt"
    data = _offsets_capture(300, 40)
    cuts = [_line_end(data, 1 / 3), _line_end(data, 2 / 3)]
    packed, starts = _in_units(data, method, cuts)
    result = parse_capture(relative, packed[: (starts[2] + len(packed)) // 2])
    verified = parse_capture(relative, data[: cuts[1]])
    assert 0 < verified.row_count < parse_capture(relative, data).row_count
    assert outcome(result)["rows"] == outcome(verified)["rows"]
    assert result.status == INCOMPLETE
    assert result.reconciles() and result.lines == verified.lines
    reason = result.file_reason
    assert reason is not None and reason.startswith(f"{method} stream cut short")
    assert f"(from byte {cuts[1]}) cannot be verified and are not read" in reason
    assert result.file_lines == 0  # it stands for no line: the lines read are counted


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
def test_a_stream_cut_in_its_only_unit_stores_no_row(method):
    """Given a compressed offsets capture in one gzip member (zstd frame) cut at two
    thirds, Then no row is stored: nothing of it is verified. Expected: incomplete (a
    capture that was there, lost), the reason naming the cut and the bytes decoded but
    not read."""
    relative = "prod-east/captures/2026-11-20T0900Z/consumer-groups-offsets.txt"
    packed = COMPRESSORS[method](_offsets_capture(300, 40))
    result = parse_capture(relative, packed[: len(packed) * 2 // 3])
    assert (result.status, result.row_count, result.lines) == (INCOMPLETE, 0, 0)
    assert result.file_reason is not None and "cannot be verified and are not read" in (
        result.file_reason
    )


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
def test_a_unit_ending_mid_line_has_that_line_quarantined_when_the_next_is_damaged(method):
    """Given two units whose boundary falls just before a row's line end (the row reads
    whole, its end is not verified), the second one damaged (a flipped byte in its
    data), Then the rows of the first unit's whole lines are stored, and its last line
    is quarantined with the damage. Expected: rows of the lines before it, one
    quarantined line naming the verified part's end."""
    relative = "prod-east/captures/2026-11-20T0900Z/consumer-groups-offsets.txt"
    data = _offsets_capture(300, 40)
    cut = _line_end(data, 0.5) - 1
    packed, starts = _in_units(data, method, [cut])
    damaged = bytearray(packed)
    damaged[(starts[1] + len(packed)) // 2] ^= 0x10
    result = parse_capture(relative, bytes(damaged))
    whole_lines = data[:cut].rsplit(b"\n", 1)[0] + b"\n"
    assert outcome(result)["rows"] == outcome(parse_capture(relative, whole_lines))["rows"]
    (line,) = [q for q in result.quarantine if q["line_number"] is not None]
    assert line["line_number"] == result.lines
    assert line["reason"].startswith(f"cut where the verified part ends ({method} stream")
    assert result.status == INCOMPLETE and result.reconciles()


def test_damaged_gzip_names_the_damage_and_never_raises():
    """Given gzip data with flipped bytes, gzip data followed by garbage, and a gzip
    header alone, Then the file is incomplete (a capture lost, in part or whole) with a
    reason naming the damage, and no row of the damaged member is stored. Expected:
    reasons `gzip stream damaged (...)`, `... followed by bytes that are not gzip ...`,
    `... cut short ...`, accounting holds."""
    relative, source = KINDS["offsets"]
    data = source.read_bytes()
    packed = bytearray(gzipped(data))
    for at in range(len(packed) // 2, len(packed) // 2 + 8):
        packed[at] ^= 0xA5
    damaged = parse_capture(relative, bytes(packed))
    assert damaged.reconciles()
    assert (damaged.status, damaged.row_count) == (INCOMPLETE, 0)
    assert damaged.file_reason is not None
    assert damaged.file_reason.startswith("gzip stream damaged")
    trailing = parse_capture(relative, gzipped(data) + b"not gzip at all")
    assert trailing.status == INCOMPLETE
    assert "followed by bytes that are not gzip" in (trailing.file_reason or "")
    assert outcome(trailing)["rows"] == outcome(parse_capture(relative, data))["rows"]
    header_only = parse_capture(relative, gzipped(data)[:6])
    assert (header_only.status, header_only.row_count) == (INCOMPLETE, 0)
    assert header_only.file_reason is not None and "cut short" in header_only.file_reason


def test_zstd_without_its_module_is_refused_with_the_reason(monkeypatch):
    """Given a zstd file and no zstandard module, Then the file is rejected with that
    reason and its sha256 still computed. Expected: status rejected, no rows."""
    monkeypatch.setattr(compressed, "zstandard", None)
    relative, source = KINDS["offsets"]
    packed = zstded(source.read_bytes())
    result, sha = parse_stream(relative, io.BytesIO(packed))
    assert result.status == REJECTED and result.row_count == 0
    assert result.file_reason == (
        "zstd-compressed file: the zstandard module is not installed, not read"
    )
    assert sha == hashlib.sha256(packed).hexdigest()


def _bomb(piece: bytes, members: int, head: bytes = b"") -> bytes:
    """gzip members of `piece`, repeated: a file of a few KiB per member that inflates
    to len(piece) x members bytes (and `head`'s, first)."""
    return (gzipped(head) if head else b"") + gzipped(piece) * members


@pytest.mark.parametrize(
    ("name", "piece", "head"),
    [
        ("zeros", b"\0" * (1 << 20), b""),
        ("newlines", b"\n" * (1 << 20), b""),
        ("one valid row", b"g t 0 10 12 2 - - -\n" * 50_000, OFFSETS_HEADER),
    ],
)
def test_a_compression_bomb_is_refused_as_soon_as_it_passes_the_ratio(name, piece, head):
    """Given 1 GiB of zeros, of newlines, or of one valid offsets row, each in ~1 MB of
    gzip, Then the file is refused once it passes 100 times its compressed size beyond
    64 MiB, not read to its end: rejected, no row, the reason naming the limit and its
    key. Expected: at most 64 MiB + one piece inflated."""
    packed = _bomb(piece, (1 << 30) // len(piece), head)
    result, _ = parse_stream("c/captures/2026-11-20T0900Z/bomb.gz", io.BytesIO(packed))
    assert (result.status, result.row_count, result.lines) == (REJECTED, 0, 0)
    reason = result.file_reason or ""
    assert reason.startswith("gzip stream inflates past 100 times its compressed size")
    assert "(capture.max_inflation_ratio)" in reason and "compression bomb" in reason
    produced = int(reason.split(" gave ")[1].split()[0])
    assert produced <= compressed.INFLATION_FLOOR + compressed.OUT_BYTES + len(piece)


def test_the_absolute_cap_refuses_a_file_that_compresses_plausibly():
    """Given a 2 MB capture of varied rows (about 10x in gzip) and a guard capped at
    1 MiB, Then it is refused by the cap, whatever its ratio; under the default guard
    it parses. Expected: rejected naming capture.max_inflated_mb; ok with rows."""
    data = _offsets_capture(100, 150)
    assert len(data) > 3 << 19  # 1.5 MiB
    packed = gzipped(data)
    relative = "c/captures/2026-11-20T0900Z/o.txt.gz"
    capped = parse_capture(relative, packed, guard=compressed.Guard(1 << 20, 100))
    assert capped.status == REJECTED
    assert "1 MiB (capture.max_inflated_mb)" in (capped.file_reason or "")
    assert parse_capture(relative, packed).row_count > 0


def test_zstd_frames_without_a_checksum_are_unverified():
    """Given a capture as one zstd frame with a checksum, one without, and two frames of
    which one has none, Then all give the plain file's rows; the file is `unverified`
    as soon as a frame has no checksum, with the count in its notes. Expected: ok, then
    unverified (1 frame), unverified (1 frame)."""
    relative, source = KINDS["offsets"]
    data = source.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    checked = zstandard.ZstdCompressor(write_checksum=True)
    unchecked = zstandard.ZstdCompressor(write_checksum=False)
    cases = [
        (checked.compress(data), OK, 0),
        (unchecked.compress(data), UNVERIFIED, 1),
        (checked.compress(data[:half]) + unchecked.compress(data[half:]), UNVERIFIED, 1),
    ]
    plain = outcome(parse_capture(relative, data))["rows"]
    for packed, status, frames in cases:
        result = parse_capture(relative, packed)
        assert (result.status, outcome(result)["rows"]) == (status, plain)
        note = "zstd frames without a checksum (their rows cannot be verified)"
        assert result.notes[note] == frames


def test_a_compression_bomb_is_read_a_bounded_piece_at_a_time():
    """Given 64 MiB of zeros gzip- and zstd-compressed to a few KiB, Then the stream
    yields pieces of bounded size. Expected: no piece above 32 MiB, all bytes out."""
    zeros = b"\x00" * (64 << 20)
    for method, packer in COMPRESSORS.items():
        stream = compressed.Decompressed(iter([packer(zeros)]), method)
        sizes = [len(piece) for piece in stream]
        assert sum(sizes) == len(zeros) and stream.problem is None
        assert max(sizes) <= 32 << 20


def _random_text(rng: random.Random) -> bytes:
    pieces = [b"a", b"bc ", b"\r\n", b"\n", b"\r", b"\xff", b"\xc3\xa9", b"\xe2\x82", b"\t", b""]
    start = rng.choice([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\r"])
    return start + b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 60)))


def test_line_stream_reads_the_lines_decode_reads_whatever_the_blocks():
    """Given 500 seeded random byte strings (CR, CRLF split across blocks, BOMs,
    undecodable bytes) cut into random blocks, Then LineStream gives decode()'s lines
    and undecodable lines. Expected: equal for every case."""
    rng = random.Random(36)
    for _ in range(500):
        data = _random_text(rng)
        cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randrange(0, 6))))
        blocks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        lines, bad = [], {}
        for text in LineStream(iter(blocks), longest=1 << 20):
            bad.update({len(lines) + n: line for n, line in text.undecodable.items()})
            lines += text.lines
        whole = decode(data)
        assert (lines, bad) == (whole.lines, whole.undecodable), data


def test_a_line_longer_than_the_budget_is_cut_and_its_rows_quarantined():
    """Given a jsonl file one line of which is longer than the longest line the budget
    reads (max_memory_mb=1), Then only its start is read: a note and the line's
    quarantine say so, the other lines parse. Expected: 2 snapshots parsed, 1 line
    quarantined, the note naming the cut."""
    relative, source = KINDS["jsonl"]
    good = source.read_bytes().splitlines()[0]
    huge = b'{"group_id": "' + b"x" * (3 << 20) + b'"}'
    result = parse_capture(relative, b"\n".join([good, huge, good]) + b"\n", max_memory_mb=1)
    assert result.lines == 3 and result.row_lines == 2 and result.reconciles()
    assert [q["line_number"] for q in result.quarantine] == [2]
    assert any(note.startswith("line longer than") for note in result.notes)


def _offsets_capture(groups: int, partitions: int) -> bytes:
    rng = random.Random(8)
    views = []
    for g in range(groups):
        members = [
            MemberView(f"consumer-g{g}-{m}-{rng.getrandbits(32):08x}", None, "/10.0.0.1", "c", [])
            for m in range(3)
        ]
        offsets = {}
        for p in range(partitions):
            tp = (f"topic-{g % 5}", p)
            members[p % 3].partitions.append(tp)
            end = rng.randint(10**6, 10**9)
            offsets[tp] = (end - rng.randint(0, 10**4), end)
        views.append(GroupView(f"group-{g}", "Stable", "range", ("k:9092", 1), members, offsets))
    return offsets_view(views, "3.6").encode()


@pytest.mark.parametrize(
    ("groups", "partitions"),
    [(300, 40), (2, 6000)],  # many blocks per chunk; one block longer than a chunk
)
def test_a_file_parsed_in_chunks_gives_the_rows_of_a_whole_file_parse(groups, partitions):
    """Given an offsets capture of ~1 MB, parsed whole and with max_memory_mb=1 (chunks
    of ~87,000 characters): many group blocks, or blocks longer than a chunk (their
    header carried into the next chunk), plain and gzip. Then the rows, quarantine and
    accounting are the whole-file parse's. Expected: equal outcomes, several chunks."""
    relative = "prod-east/captures/2026-11-20T0900Z/consumer-groups-offsets.txt"
    data = _offsets_capture(groups, partitions)
    # A damaged row in the middle, and one right after a chunk-sized block starts.
    lines = data.split(b"\n")
    lines[len(lines) // 2] = b"group-x topic-1 five 1 2 3 - - -"
    data = b"\n".join(lines)
    whole = parse_capture(relative, data)
    assert len(data) > 5 * Budget.of(1).chunk_chars
    for packed in (data, gzipped(data)):
        chunked = parse_capture(relative, packed, max_memory_mb=1)
        assert any(note.startswith("parsed in chunks") for note in chunked.notes)
        assert outcome(chunked) == outcome(whole)
        assert chunked.row_count == whole.row_count > 0
        assert len(whole.quarantine) == 1


def test_a_log_and_topics_parsed_in_chunks_give_the_whole_files_rows():
    """Given the broker log repeated to ~2 MB and a topics capture repeated, parsed
    with max_memory_mb=1, Then their rows and accounting are the whole parse's.
    Expected: equal outcomes."""
    relative, source = KINDS["coordinator_log"]
    data = source.read_bytes() * 40
    assert outcome(parse_capture(relative, data, max_memory_mb=1)) == outcome(
        parse_capture(relative, data)
    )
    relative, source = KINDS["topics"]
    data = source.read_bytes() * 200
    assert len(data) > 2 * Budget.of(1).chunk_chars
    assert outcome(parse_capture(relative, data, max_memory_mb=1)) == outcome(
        parse_capture(relative, data)
    )


def test_max_memory_mb_is_a_capture_conf_key(tmp_path):
    """Given conf files with capture.max_memory_mb unset, 256 and 10, Then the default
    is 512, 256 is taken and 10 refused naming the key. Expected: as said."""
    conf = tmp_path / "c.yaml"
    conf.write_text("capture:\n  log_timezone: UTC\n")
    assert load_config(conf).capture.max_memory_mb == 512
    conf.write_text("capture:\n  max_memory_mb: 256\n")
    assert load_config(conf).capture.max_memory_mb == 256
    conf.write_text("capture:\n  max_memory_mb: 10\n")
    with pytest.raises(ConfigError, match=r"capture\.max_memory_mb: expected MiB from 64"):
        load_config(conf)


@pytest.mark.spark
def test_ingest_of_gzipped_captures_and_logs_gives_the_plain_files_rows(spark, small_fleet):
    """Given a generated fleet hour ingested from plain files, When every file is
    replaced by its gzip (`<name>.gz`) and the date ingested again, Then every bronze
    table holds the same rows (but the source_file's `.gz`) and ingested_files records
    each .gz ok, with the sha256 and size of the file as stored and the note. Expected:
    equal tables."""
    from fleet_rebalance.pipeline import bronze, ingest
    from fleet_rebalance.storage import read_table

    config, raw = small_fleet
    day = dt.date(2026, 11, 20)
    names = [name for name in bronze.TABLES if name != "ingested_files"]

    def rows(name: str) -> list[tuple]:
        frame = read_table(spark, config.table_path(name)).toPandas()
        if "source_file" in frame:
            frame["source_file"] = frame["source_file"].str.removesuffix(".gz")
        return sorted(map(repr, frame.drop(columns=["run_id"], errors="ignore").values.tolist()))

    before = {name: rows(name) for name in names}
    stored = {}
    for path in sorted(p for p in raw.rglob("*") if p.is_file()):
        packed = path.with_name(path.name + ".gz")
        packed.write_bytes(gzipped(path.read_bytes()))
        path.unlink()
        stored[str(packed.relative_to(raw))] = packed.read_bytes()
    ingest.run(spark, config, day)
    assert {name: rows(name) for name in names} == before
    assert sum(map(len, before.values())) > 0
    files = read_table(spark, config.table_path("ingested_files")).collect()
    assert {r["path"] for r in files} == set(stored)
    for r in files:
        data = stored[r["path"]]
        assert (r["status"], r["size"]) == (OK, len(data)), r["path"]
        assert r["sha256"] == hashlib.sha256(data).hexdigest()
        assert "read gzip-compressed: 1" in r["reason"]
