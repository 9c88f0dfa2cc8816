"""Numbers in captures, read the way Kafka printed them (DESIGN.md, "Quality bars").

Kafka prints integers with Java's `toString`: ASCII digits, a minus sign for negatives,
no plus sign, no leading zero, no separator. Python's `int()` is laxer (`+7`, `1_0`,
` 7`, fullwidth and Arabic-Indic digits), so a corrupted value would be stored as a
different number; anything but Kafka's spelling, or a value its column cannot hold, is
refused here and its line quarantined with the reason.
"""

from __future__ import annotations

import re
from typing import TypeVar

INT32 = 32
INT64 = 64
CANONICAL = re.compile(r"(?:0|-?[1-9][0-9]*)\Z", re.ASCII)
Count = TypeVar("Count", bound=int | None)


class NumberError(ValueError):
    """The message is the quarantine reason."""


def parse_int(text: str, column: str, bits: int = INT64) -> int:
    """`text` as an integer of a `bits`-bit signed column, or NumberError."""
    if not CANONICAL.match(text):
        raise NumberError(f"{column} is not a number: {_shown(text)}")
    value = int(text)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise NumberError(f"{column} {_shown(text)} does not fit a {bits}-bit integer column")
    return value


def check_int(value: object, column: str, bits: int = INT64) -> int:
    """A number already typed (a JSON value) in range of its column, or NumberError.
    JSON's true/false and 3.0 are not integers."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise NumberError(f"{column} is not an integer: {_shown(repr(value))}")
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise NumberError(f"{column} {_shown(str(value))} does not fit a {bits}-bit integer column")
    return value


def not_negative(value: Count, column: str) -> Count:
    """An offset, lag or count as Kafka prints it: `-` (None here) when unknown, never
    a negative number; NumberError for one."""
    if value is not None and value < 0:
        raise NumberError(
            f"negative {column} {value}: Kafka prints '-' for an unknown value, "
            "never a negative number"
        )
    return value


def _shown(text: str, most: int = 40) -> str:
    return repr(text if len(text) <= most else text[:most] + "...")
