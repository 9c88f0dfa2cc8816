"""Text as the report shows it, in the page and the terminal alike: a group id comes from
hostile input, and an invisible character in it could make it pose as another."""

from __future__ import annotations

# Invisible characters str.isprintable() lets through (they are marks or letters):
# variation selectors, the combining grapheme joiner, Hangul and Khmer fillers.
INVISIBLE = frozenset(
    {
        0x034F,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x3164,
        0xFFA0,
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    }
)


class Shown(str):
    """Text visible() has already spelled out (then cut or wrapped to fit): the page
    escapes it but does not spell it out twice."""


def visible(value: object) -> str:
    """value with every control, format (bidi overrides and isolates such as U+202E,
    zero-width characters), separator other than the space, private-use, unassigned or
    otherwise invisible character spelled out as \\uXXXX, and a backslash doubled, so an
    id that spells out \\u202e itself stays distinct. The page applies it to every value
    it writes (templating), then escapes it."""
    return "".join(_visible(c) for c in str(value))


def _visible(c: str) -> str:
    if c == "\\":
        return "\\\\"
    code = ord(c)
    if c.isprintable() and code not in INVISIBLE:
        return c
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
