"""gzip and zstd captures and logs, told by their magic bytes and read as a stream.

logrotate's `compress` and log shippers write `server.log.1.gz`, the capture agent may
compress what it writes; a name says nothing reliable (`.log` files that are gzip, a
`.gz` that is plain text), so the first bytes decide (RFC 1952 `1f 8b`, RFC 8878
`28 b5 2f fd`). Several gzip members or zstd frames in a row are one stream, as `zcat`
reads them. Output is produced a bounded piece at a time (zstd input is fed in small
slices, gzip output is capped), so a small file that expands to gigabytes never sits
in memory. A stream that is cut or damaged ends where it stops being readable: the
bytes before are kept, and `Decompressed.problem` says what went wrong and where.
zstd needs the `zstandard` module; without it a zstd file is refused with that reason.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Protocol

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


class Decompressed:
    """The decompressed bytes of `blocks`, in pieces of at most about OUT_BYTES.
    Iterating ends early, without raising, where the stream is cut or damaged;
    `problem` then names the damage (None for a sound stream)."""

    def __init__(self, blocks: Iterator[bytes], method: str) -> None:
        self.blocks, self.method = blocks, method
        self.problem: str | None = None
        self.produced = 0

    def __iter__(self) -> Iterator[bytes]:
        pieces = self._gzip() if self.method == GZIP else self._zstd()
        try:
            for piece in pieces:
                self.produced += len(piece)
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
                yield block[start : start + size]

    def _gzip(self) -> Iterator[bytes]:
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
                if out:
                    yield out
                elif not data:
                    break
        while more:
            out = decoder.decompress(data, OUT_BYTES)
            data, more = decoder.unconsumed_tail, len(out) == OUT_BYTES and not decoder.eof
            yield out
        if not decoder.eof:
            self.problem = self._damage("cut short (no end-of-stream marker)")
        elif data.strip(b"\x00"):
            self.problem = self._damage("followed by bytes that are not gzip")

    def _zstd(self) -> Iterator[bytes]:
        assert zstandard is not None  # missing_module() refused the file before
        decoder = zstandard.ZstdDecompressor().decompressobj()
        fed = False
        for piece in self._slices(ZSTD_FEED):
            while piece:
                if decoder.eof:  # the next frame
                    decoder = zstandard.ZstdDecompressor().decompressobj()
                out = decoder.decompress(piece)
                fed = True
                piece = decoder.unused_data if decoder.eof else b""
                if out:
                    yield out
        if fed and not decoder.eof:
            self.problem = self._damage("cut short (its last frame is incomplete)")


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
