"""gzip and zstd captures and logs, told by their magic bytes and read as a stream.

logrotate's `compress` and log shippers write `server.log.1.gz`, the capture agent may
compress what it writes; a name says nothing reliable (`.log` files that are gzip, a
`.gz` that is plain text), so the first bytes decide (RFC 1952 `1f 8b`, RFC 8878
`28 b5 2f fd`). Several gzip members or zstd frames in a row are one stream, as `zcat`
reads them. Output is produced a bounded piece at a time (zstd input is fed in small
slices, gzip output is capped), so a small file that expands to gigabytes never sits
in memory, and one that inflates past its Guard is refused as soon as it does (a bomb).
A stream is checked before it is parsed (Verified): only the bytes of members and
frames that checked out are read, so a cut or damaged stream keeps those, and
`Decompressed.problem` says what went wrong and where. zstd needs the `zstandard`
module; without it a zstd file is refused with that reason.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import IO, Any, Protocol

from fleet_rebalance.config import CaptureConfig

zstandard: ModuleType | None
try:
    import zstandard
except ImportError:  # the file is then refused with the reason, never misread
    zstandard = None

GZIP, ZSTD = "gzip", "zstd"
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
READ_BYTES = 1 << 20
OUT_BYTES = 1 << 20  # most decompressed bytes produced by one step
ZSTD_FEED = 1 << 10  # a zstd block expands at most ~32,000x: 1 KiB in, < 32 MiB out
GZIP_FEED = 1 << 14  # output is capped per step; small slices keep what precedes damage
GZIP_WBITS = 16 + zlib.MAX_WBITS  # gzip header and trailer, CRC-32 and size checked
ZSTD_DESCRIPTOR = 4  # the frame header descriptor's offset in a frame (after the magic)
ZSTD_CHECKSUM_FLAG = 0x04  # its Content_Checksum_flag
INFLATION_FLOOR = 64 << 20  # below this, any compression ratio is plausible


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def compression(head: bytes) -> str | None:
    """gzip, zstd or None (not compressed), from a file's first bytes."""
    if head.startswith(GZIP_MAGIC):
        return GZIP
    if head.startswith(ZSTD_MAGIC):
        return ZSTD
    return None


def missing_module(method: str | None) -> str | None:
    """Why a file compressed with `method` cannot be read here, or None."""
    if method == ZSTD and zstandard is None:
        return "zstd-compressed file: the zstandard module is not installed, not read"
    return None


class Source:
    """The file's bytes as stored, in blocks, hashed and counted as they are read:
    ingested_files.sha256 and size are those of the stored (compressed) file."""

    def __init__(self, stream: Readable, block_bytes: int = READ_BYTES) -> None:
        self.stream, self.block_bytes = stream, block_bytes
        self.digest = hashlib.sha256()
        self.size = 0

    def blocks(self) -> Iterator[bytes]:
        while block := self.stream.read(self.block_bytes):
            self.digest.update(block)
            self.size += len(block)
            yield block

    def drain(self) -> None:
        """Read what is left, for the hash (after a damaged stream or a refusal)."""
        for _ in self.blocks():
            pass

    def sha256(self) -> str:
        return self.digest.hexdigest()


@dataclass(frozen=True)
class Guard:
    """How far a compressed file may inflate before it is refused unread (a compression
    bomb, or no capture): past `max_bytes` decompressed bytes, or past `max_ratio` times
    the compressed bytes read so far once it is past INFLATION_FLOOR (a small file may
    compress as well as it likes)."""

    max_bytes: int
    max_ratio: int

    @classmethod
    def of(cls, max_inflated_mb: int, max_inflation_ratio: int) -> Guard:
        return cls(max_inflated_mb << 20, max_inflation_ratio)

    def refusal(self, method: str, produced: int, consumed: int) -> str | None:
        """Why a stream that inflated `consumed` bytes to `produced` is refused, or None."""
        if produced > self.max_bytes:
            limit = f"{self.max_bytes >> 20} MiB (capture.max_inflated_mb)"
        elif produced > INFLATION_FLOOR and produced > self.max_ratio * max(consumed, 1):
            limit = f"{self.max_ratio} times its compressed size (capture.max_inflation_ratio)"
        else:
            return None
        return (
            f"{method} stream inflates past {limit}: {consumed} compressed bytes gave "
            f"{produced} and more; refused unread as a compression bomb, not a capture"
        )


class Decompressed:
    """The decompressed bytes of `blocks`, in pieces of at most about OUT_BYTES.
    Iterating ends early, without raising, where the stream is cut or damaged (then
    `problem` names the damage), where `guard` refuses it (`refused`), or at `limit`
    bytes. `verified` counts the bytes up to the end of the last unit whose integrity
    was checked, or that ended complete: a gzip member (CRC-32 and size checked) or a
    zstd frame (its checksum checked when it has one; `unchecked` counts the frames
    without, whose bytes nothing can verify)."""

    def __init__(
        self,
        blocks: Iterator[bytes],
        method: str,
        *,
        guard: Guard | None = None,
        limit: int | None = None,
    ) -> None:
        self.blocks, self.method = blocks, method
        self.guard, self.limit = guard, limit
        self.problem: str | None = None
        self.refused: str | None = None
        self.produced = self.verified = self.consumed = self.unchecked = 0

    def __iter__(self) -> Iterator[bytes]:
        pieces = self._gzip() if self.method == GZIP else self._zstd()
        try:
            for piece, unit_ends in pieces:
                if self.limit is not None and self.produced + len(piece) >= self.limit:
                    if self.limit > self.produced:
                        yield piece[: self.limit - self.produced]
                    self.produced = self.verified = self.limit
                    return
                self.produced += len(piece)
                if unit_ends:
                    self.verified = self.produced
                if self.guard is not None:
                    self.refused = self.guard.refusal(self.method, self.produced, self.consumed)
                    if self.refused is not None:
                        return
                if piece:
                    yield piece
        except zlib.error as exc:
            self.problem = self._damage(f"damaged ({exc})")
        except Exception as exc:
            if zstandard is None or not isinstance(exc, zstandard.ZstdError):
                raise
            self.problem = self._damage(f"damaged ({exc})")

    def _damage(self, what: str) -> str:
        return (
            f"{self.method} stream {what} after {self.produced} decompressed bytes: "
            "the rest of the file is unreadable"
        )

    def _slices(self, size: int) -> Iterator[bytes]:
        """The input in small slices: damage found in a slice loses only its output."""
        for block in self.blocks:
            for start in range(0, len(block), size):
                piece = block[start : start + size]
                self.consumed += len(piece)
                yield piece

    def _gzip(self) -> Iterator[tuple[bytes, bool]]:
        decoder: Any = zlib.decompressobj(GZIP_WBITS)
        data, more = b"", False
        for piece in self._slices(GZIP_FEED):
            data += piece
            while data or more:
                if decoder.eof:  # another member follows, or zero padding, or garbage
                    if len(data) < len(GZIP_MAGIC) and GZIP_MAGIC.startswith(data):
                        break  # wait for the next block
                    if not data.startswith(GZIP_MAGIC):
                        if data.strip(b"\x00"):
                            self.problem = self._damage("followed by bytes that are not gzip")
                            return
                        data = b""
                        break
                    decoder = zlib.decompressobj(GZIP_WBITS)
                out = decoder.decompress(data, OUT_BYTES)
                data = decoder.unused_data if decoder.eof else decoder.unconsumed_tail
                more = len(out) == OUT_BYTES and not decoder.eof  # output may be pending
                if out or decoder.eof:
                    yield out, decoder.eof
                if not out and not data:
                    break
        while more:
            out = decoder.decompress(data, OUT_BYTES)
            data, more = decoder.unconsumed_tail, len(out) == OUT_BYTES and not decoder.eof
            yield out, decoder.eof
        if not decoder.eof:
            self.problem = self._damage("cut short (no end-of-stream marker)")
        elif data.strip(b"\x00"):
            self.problem = self._damage("followed by bytes that are not gzip")

    def _zstd(self) -> Iterator[tuple[bytes, bool]]:
        assert zstandard is not None  # missing_module() refused the file before
        decoder = zstandard.ZstdDecompressor().decompressobj()
        fed, head = False, b""  # the frame's first bytes: its descriptor says if checksummed
        for piece in self._slices(ZSTD_FEED):
            while piece:
                if decoder.eof:  # the next frame
                    decoder, head = zstandard.ZstdDecompressor().decompressobj(), b""
                if len(head) <= ZSTD_DESCRIPTOR:
                    head += piece[: ZSTD_DESCRIPTOR + 1]
                out = decoder.decompress(piece)
                fed = True
                piece = decoder.unused_data if decoder.eof else b""
                if decoder.eof and not _checksummed(head):
                    self.unchecked += 1
                if out or decoder.eof:
                    yield out, decoder.eof
        if fed and not decoder.eof:
            self.problem = self._damage("cut short (its last frame is incomplete)")


DEFAULT_GUARD = Guard.of(CaptureConfig().max_inflated_mb, CaptureConfig().max_inflation_ratio)


class Verified:
    """A compressed stream read once and inflated twice: first to check it (every gzip
    member's CRC-32 and size, every zstd frame's end and checksum) and against `guard`,
    its stored bytes copied to `spool` as they are read (a SpooledTemporaryFile: in
    memory up to its size, then on local disk); then again from the spool, up to the
    end of the last unit that checked out, for the parse. So no row is ever read from
    bytes a damaged unit decoded, and memory stays bounded whatever the file's size."""

    def __init__(self, blocks: Iterator[bytes], method: str, guard: Guard, spool: IO[bytes]):
        self.method, self.spool = method, spool
        self.check = Decompressed(self._spooled(blocks), method, guard=guard)
        for _ in self.check:
            pass

    def _spooled(self, blocks: Iterator[bytes]) -> Iterator[bytes]:
        for block in blocks:
            self.spool.write(block)
            yield block

    @property
    def refused(self) -> str | None:
        return self.check.refused

    @property
    def problem(self) -> str | None:
        """What the check found wrong: damage, or bytes decoded past the last unit that
        checked out (then not read)."""
        check = self.check
        if check.problem is None:
            return None
        unverified = check.produced - check.verified
        if not unverified:
            return check.problem
        return (
            f"{check.problem}; the {unverified} bytes decoded after its last sound "
            f"{'member' if self.method == GZIP else 'frame'} (from byte {check.verified}) "
            "cannot be verified and are not read"
        )

    def text(self) -> Iterator[bytes]:
        """The verified bytes, decompressed again from the spool."""
        self.spool.seek(0)
        blocks = iter(lambda: self.spool.read(READ_BYTES), b"")
        return iter(Decompressed(blocks, self.method, limit=self.check.verified))


def _checksummed(frame: bytes) -> bool:
    """Whether a zstd frame's header (RFC 8878 3.1.1.1) says a checksum ends it; a
    skippable frame (magic 0x184D2A5?) holds no data to check."""
    if frame[:4] != ZSTD_MAGIC:
        return True
    return len(frame) > ZSTD_DESCRIPTOR and bool(frame[ZSTD_DESCRIPTOR] & ZSTD_CHECKSUM_FLAG)


def opened_head(head: bytes, complete: bool, limit: int) -> tuple[bytes, bool]:
    """A file's first bytes as its text starts: decompressed (at most `limit` bytes)
    when they are gzip or zstd; and whether that is the whole text. What cannot be
    decompressed (no zstandard module, damage) is returned as it is, to be judged
    binary."""
    method = compression(head)
    if method is None or missing_module(method):
        return head, complete
    stream = Decompressed(iter([head]), method)
    out = bytearray()
    for piece in stream:
        out += piece
        if len(out) >= limit:
            return bytes(out[:limit]), False
    if not out:
        return head, complete
    return bytes(out), complete and stream.problem is None
