"""Describe headers: which view a header line starts and the columns it names.

Kafka pads each group's block to its own widths, so columns are mapped from the
block's header line, never from fixed positions; 0.9's header is comma-separated.
The share and streams tools' headers and the group lists are recognised here too.
"""

from __future__ import annotations

import functools
from typing import Literal, NamedTuple

from fleet_rebalance.capture import share_streams as ss
from fleet_rebalance.capture.result import ParseResult

View = Literal["offsets", "members", "state"]
OFFSETS_VIEW: View = "offsets"
MEMBERS_VIEW: View = "members"
STATE_VIEW: View = "state"
# Columns the offsets view must have for the bulk path (GROUP may come from the path).
OFFSETS_REQUIRED = (
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
)
KNOWN_COLUMNS: dict[View, set[str]] = {
    OFFSETS_VIEW: {"GROUP", *OFFSETS_REQUIRED, "OWNER", "LEADER-EPOCH", *ss.OFFSETS_COLUMNS},
    MEMBERS_VIEW: {
        "GROUP",
        "CONSUMER-ID",
        "GROUP-INSTANCE-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        "ASSIGNMENT",
        "CURRENT-EPOCH",
        "CURRENT-ASSIGNMENT",
        "TARGET-EPOCH",
        "TARGET-ASSIGNMENT",
        "UPGRADED",
        *ss.MEMBERS_COLUMNS,
    },
    STATE_VIEW: {
        "GROUP",
        "COORDINATOR-(ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "#MEMBERS",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        *ss.STATE_COLUMNS,
    },
}
# Every header starts with one of these words: a cheap test before header_view.
HEADER_WORDS = ("GROUP", "TOPIC", "COORDINATOR", "CONSUMER-ID")
HEADER_START = rf"^(?:{'|'.join(HEADER_WORDS)})"


class Header(NamedTuple):
    """A header line's view and columns, and whether it is 0.9's comma-separated one."""

    view: View
    columns: list[str]
    comma: bool


def header_view(line: str) -> tuple[View, list[str]] | None:
    """(view, column names) when line is a describe header; 0.9's is comma-separated."""
    # Kafka pads each group's block to its own widths: cached on the words, not the line.
    header = _header_view(" ".join(line.split()))
    return None if header is None else (header[0], list(header[1]))


def header_of(line: str) -> Header | None:
    """header_view with the comma flag the row splitter needs."""
    found = header_view(line)
    return None if found is None else Header(found[0], found[1], ", " in line.strip())


@functools.lru_cache(maxsize=1024)
def _header_view(text: str) -> tuple[View, tuple[str, ...]] | None:
    if ", " in text and text.startswith("GROUP, TOPIC"):
        columns = [c.strip().replace(" ", "-") for c in text.split(",")]
    else:
        columns = text.replace("COORDINATOR (ID)", "COORDINATOR-(ID)").split()
    names = set(columns)
    if "#PARTITIONS" in names and "CONSUMER-ID" in names:
        return MEMBERS_VIEW, tuple(columns)
    if {ss.STREAMS_MEMBER, "PROCESS", "CLIENT-ID"} <= names:
        return MEMBERS_VIEW, tuple(columns)
    if "COORDINATOR-(ID)" in names:
        return STATE_VIEW, tuple(columns)
    if {"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET"} <= names:
        return OFFSETS_VIEW, tuple(columns)
    if {"TOPIC", "PARTITION"} <= names and names & {ss.SHARE_OFFSETS, ss.STREAMS_OFFSETS}:
        return OFFSETS_VIEW, tuple(columns)
    if ss.is_list_header(columns):  # group lists feed group_states: the state kind
        return STATE_VIEW, tuple(columns)
    return None


def note_unknown(header: Header, result: ParseResult) -> None:
    """A column no release prints is kept by name; the note shows a newer layout."""
    for column in header.columns:
        if column not in KNOWN_COLUMNS[header.view]:
            result.notes[f"unknown {header.view} column {column} (kept by name)"] += 1
