"""A capture's bytes as lines, the one way every parser and the log sniffing see them.

Lines end at `\\r\\n`, `\\n` or a lone `\\r` (classic Mac OS and some terminal
recorders end lines with CR only: read at `\\n` alone such a file is one long line and
loses every row). str.splitlines would also break at `\\v`, `\\f`, `\\x1c`-`\\x1e`,
`\\x85`, U+2028 and U+2029, turning one exporter's line into fragments and counting
lines the file does not have. Tokens of the tabular views are
separated by spaces and tabs only, Kafka's padding; any other character is part of a
value. Text is UTF-8, or UTF-16/UTF-32 when a byte-order mark says so (Windows
terminals and PowerShell redirections write those). Bytes that do not decode are kept
as lone surrogates, so the lines holding them can be quarantined with their bytes
shown instead of being stored with U+FFFD in place of what was there. LineStream gives
the same lines from a file's bytes in blocks, so a large file is never whole in memory.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# Longest first: UTF-32-LE's mark starts with UTF-16-LE's.
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
UNDECODABLE = re.compile("[\udc00-\udcff]")  # bytes _escape_bytes could not decode
SURROGATE = re.compile("[\ud800-\udfff]")  # no Unicode text holds one (JSON's \\udc80 can)
# Control characters that text captures do not hold (tab, LF, VT, FF, CR are text).
CONTROL = re.compile("[\x00-\x08\x0e-\x1f]")
# Characters no Kafka tool or log4j line prints inside a value (tab and line ends are
# layout): in an id or a message they are damage, never part of the value.
UNPRINTED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
SEPARATOR = re.compile(r"[ \t]+")
BLANKS = " \t"
BINARY_SHARE = 0.1  # more control characters than this: not a text capture
HEAD_CHARS = 1 << 16


@dataclass(frozen=True)
class Text:
    lines: list[str]
    encoding: str
    # Lines holding bytes that did not decode (1-based), spelled with \xNN escapes.
    undecodable: dict[int, str]
    # Lines longer than a stream's `longest` (1-based): `lines` holds their first
    # `longest` characters, the rest is not read.
    cut: set[int] = field(default_factory=set)


def decode(data: bytes) -> Text:
    """The file's lines; undecodable bytes are U+FFFD in `lines`."""
    encoding, start = "utf-8", 0
    for bom, name in BOMS:
        if data.startswith(bom):
            encoding, start = name, len(bom)
            break
    lines = split_lines(data[start:].decode(encoding, errors="fleet-escape"))
    return Text(lines, encoding, _mark_undecodable(lines))


def _mark_undecodable(lines: list[str]) -> dict[int, str]:
    """The lines holding undecodable bytes, escaped; in `lines` those become U+FFFD.
    An ASCII line holds none (CPython knows a str is ASCII without reading it), and
    nearly every capture line is ASCII: the regex reads only the others."""
    bad = {}
    for number, line in enumerate(lines, start=1):
        if not line.isascii() and UNDECODABLE.search(line):
            bad[number] = UNDECODABLE.sub(lambda m: f"\\x{ord(m[0]) - 0xDC00:02x}", line)
            lines[number - 1] = UNDECODABLE.sub("\ufffd", line)
    return bad


class LineStream:
    """A file's lines as decode() reads them, from its bytes in blocks: one Text per
    block, so a file is never whole in memory. A line longer than `longest` characters
    keeps its first `longest` and is noted in Text.cut (a 200 MB line with no end is
    not held). `encoding` and `bom` are known once the first Text is out."""

    def __init__(self, blocks: Iterable[bytes], longest: int) -> None:
        self.blocks, self.longest = iter(blocks), longest
        self.encoding, self.bom = "utf-8", False
        self._pending = ""
        self._cutting = False  # inside a line cut at `longest`: skip to its end
        self.unterminated = False  # the last line has no line end (known at the end)

    def __iter__(self) -> Iterator[Text]:
        head = b""
        for block in self.blocks:  # a byte-order mark is up to 4 bytes
            head += block
            if len(head) >= 4:
                break
        for bom, name in BOMS:
            if head.startswith(bom):
                self.encoding, self.bom, head = name, True, head[len(bom) :]
                break
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="fleet-escape")
        pieces = itertools.chain([head], self.blocks)
        for piece in pieces:
            text = self._text(decoder.decode(piece), final=False)
            if text.lines:
                yield text
        text = self._text(decoder.decode(b"", final=True), final=True)
        if text.lines:
            yield text

    def _text(self, decoded: str, final: bool) -> Text:
        text = self._pending + decoded
        if final:
            self.unterminated = not text.endswith(("\n", "\r")) if text else False
        end = len(text) - (not final and text.endswith("\r"))  # may be half of a \r\n
        cut = len(text) if final else max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
        lines = split_lines(text[:cut])
        self._pending = text[cut:]
        if self._cutting and lines:  # the end of a line already cut: left out
            lines.pop(0)
            self._cutting = False
        cut_lines = set()
        if lines and max(map(len, lines)) > self.longest:  # read whole in one block
            for index, line in enumerate(lines):
                if len(line) > self.longest:
                    lines[index] = line[: self.longest]
                    cut_lines.add(index + 1)
        if self._cutting or len(self._pending) > self.longest:
            if not self._cutting:
                lines.append(self._pending[: self.longest])
                cut_lines.add(len(lines))
            # A last \r may be half of a \r\n: kept to end the cut line.
            self._pending = "\r" if self._pending.endswith("\r") else ""
            self._cutting = not final
        return Text(lines, self.encoding, _mark_undecodable(lines), cut_lines)


def _escape_bytes(error: UnicodeError) -> tuple[str, int]:
    """Every undecodable byte as U+DC00 + byte (surrogateescape leaves out bytes below
    0x80, which a broken UTF-16 text has plenty of)."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(chr(0xDC00 + b) for b in bad), error.end


codecs.register_error("fleet-escape", _escape_bytes)


def split_lines(text: str) -> list[str]:
    """Lines ended by `\\r\\n`, `\\n` or a lone `\\r`; a last line without one."""
    if not text:
        return []
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def control_share(lines: list[str]) -> tuple[int, int]:
    """(control characters, characters) in the first HEAD_CHARS of the text."""
    seen = total = 0
    for line in lines:
        part = line[: HEAD_CHARS - total]
        seen += len(CONTROL.findall(part))
        total += len(part) + 1
        if total >= HEAD_CHARS:
            break
    return seen, total


def tokens(line: str, most: int = -1) -> list[str]:
    """A tabular row's values: separated by spaces and tabs only. With `most`, at most
    that many splits: the rest of the line is the last value, verbatim."""
    stripped = line.strip(BLANKS)
    return SEPARATOR.split(stripped, maxsplit=max(most, 0)) if stripped else []
