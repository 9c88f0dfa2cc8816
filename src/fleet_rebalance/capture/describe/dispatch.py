"""A describe file's lines sorted into the bulk paths and the per-line path.

Lines are classified in bulk: blank lines, headers (each line's header is the latest
one above it) and rows of a common layout, which Arrow's kernels convert a layout at a
time (bulk_offsets.py, bulk_members.py). Every other line (other views and shapes,
messages, tool errors, rows the bulk pass rejects) takes the per-line path, in line
order, with its own header; a blank line or a header ends a tool error's stack trace.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.context import ParseContext
from fleet_rebalance.capture.describe.bulk_members import BulkMembers
from fleet_rebalance.capture.describe.bulk_offsets import BulkOffsets
from fleet_rebalance.capture.describe.bulk_view import BulkView
from fleet_rebalance.capture.describe.headers import (
    HEADER_START,
    MEMBERS_VIEW,
    OFFSETS_VIEW,
    Header,
    View,
    header_of,
    note_unknown,
)
from fleet_rebalance.capture.describe.message_groups import (
    GROUP_FROM_MESSAGE,
    groups_from_messages,
)
from fleet_rebalance.capture.describe.per_line import LineState
from fleet_rebalance.capture.result import ParseResult
from fleet_rebalance.capture.text import BLANKS

Layout = tuple[View, tuple[str, ...], str | None]  # view, columns, group of a block


def parse_describe(text_lines: list[str], result: ParseResult, context: ParseContext) -> None:
    """Parse a describe capture's lines into `result`: bulk where the layout allows,
    line by line otherwise, the quarantine in line order."""
    count = len(text_lines)
    if not count:
        return
    lines = pa.array(text_lines, pa.string())
    stripped = pc.utf8_trim(lines, BLANKS)
    blank = pc.equal(stripped, "").to_numpy(zero_copy_only=False)
    # Bulk kernels split on any whitespace, row_tokens on spaces and tabs: lines with
    # other characters than printable ASCII, spaces and tabs take the per-line path.
    plain = pc.invert(pc.match_substring_regex(stripped, r"[^\x20-\x7e\t]"))
    plain = plain.to_numpy(zero_copy_only=False)
    maybe = pc.match_substring_regex(stripped, HEADER_START).to_numpy(zero_copy_only=False)
    state = LineState(result, context)
    bulk: dict[View, BulkView] = {
        OFFSETS_VIEW: BulkOffsets(result, context),
        MEMBERS_VIEW: BulkMembers(result, context),
    }
    is_header = np.zeros(count, dtype=bool)
    headers: dict[int, Header] = {}
    for index in np.flatnonzero(maybe).tolist():
        header = header_of(text_lines[index])
        if header is not None:
            is_header[index] = True
            headers[index] = header
            note_unknown(header, result)
    result.structural += int(blank.sum()) + len(headers)
    warned = pc.match_substring(stripped, "is rebalancing.").to_numpy(zero_copy_only=False)
    positions = np.arange(count)
    header_at = np.maximum.accumulate(np.where(is_header, positions, -1))
    # 3.8/3.9 print each offsets line as "\n" + line (FORMATS 1.2): what follows an
    # offsets row (the next block's header, or a group's rebalancing warning) comes with
    # no blank line between, and the file's last row ends without a newline as printed.
    offsets_headers = [h for h, header in headers.items() if header.view == OFFSETS_VIEW]
    offsets_row = ~(blank | is_header | warned) & np.isin(header_at, offsets_headers)
    result.open_end |= bool(np.any((is_header[1:] | warned[1:]) & offsets_row[:-1]))
    result.rebalancing = {
        group
        for index in np.flatnonzero(warned)
        if (group := msg.rebalancing_group(text_lines[index].strip(BLANKS))) is not None
    }
    segment = np.cumsum(blank | is_header)
    content = ~(blank | is_header)
    named = {} if context.get("group") else groups_from_messages(text_lines, content, headers)
    for group in named.values():
        result.notes[f"{GROUP_FROM_MESSAGE} {group!r}"] += 1
    by_layout: dict[Layout, list[int]] = {}
    for h, (view, columns, comma) in headers.items():
        group = named.get(h, context.get("group"))
        layout = bulk[view].layout_for(columns, comma, group) if view in bulk else None
        if layout:
            by_layout.setdefault((view, layout, group), []).append(h)
    bulk_headers = [h for owners in by_layout.values() for h in owners]
    eligible = content & plain & np.isin(header_at, bulk_headers)
    rejected: set[int] = set()
    for (view, layout, group), owners in by_layout.items():
        rows = np.flatnonzero(eligible & np.isin(header_at, owners))
        if len(rows):
            rejected |= bulk[view].convert(
                layout, group, pa.array(rows + 1, pa.int32()), stripped.take(pa.array(rows))
            )
    per_line = sorted(
        set(np.flatnonzero(content & ~eligible).tolist()) | {number - 1 for number in rejected}
    )
    previous_segment = None
    contexts: dict[int, ParseContext] = {
        h: {**context, "group": group} for h, group in named.items()
    }
    for index in per_line:
        owner = int(header_at[index])
        state.use(headers.get(owner), owner, contexts.get(owner, context))
        if segment[index] != previous_segment:
            state.in_error = False
            previous_segment = segment[index]
        raw = text_lines[index]
        state.line(index + 1, raw, raw.strip(BLANKS))
    state.tasks.finish(result.notes)
    result.quarantine.sort(key=lambda q: q["line_number"] or 0)
