"""The group of a block without GROUP column, from the tool's message above it.

The layouts without GROUP column (0.10.2 - 2.2) take the group from the capture path,
else from the tool's own message right above the table, when the file's messages
name one group only: those releases describe one group per run and print `Consumer
group 'x' has no active members.` (or `is rebalancing`, or the --zookeeper offset
errors) just before its table.
"""

from __future__ import annotations

import numpy as np

from fleet_rebalance.capture import tool_messages as msg
from fleet_rebalance.capture.describe.headers import KNOWN_COLUMNS, Header
from fleet_rebalance.capture.text import BLANKS

GROUP_FROM_MESSAGE = "rows without GROUP column attributed to the group the tool's message names:"


def groups_from_messages(
    text_lines: list[str], content: np.ndarray, headers: dict[int, Header]
) -> dict[int, str]:
    """Header line -> group for the blocks the tool's message right above names. Only
    when the file's messages name exactly one group, and for headers whose columns are
    all known (an unknown one may be a damaged GROUP); else the rows keep the path hint."""
    groupless = [
        h
        for h, (view, columns, _) in headers.items()
        if "GROUP" not in columns and set(columns) <= KNOWN_COLUMNS[view]
    ]
    if not groupless:
        return {}
    found = {
        int(i): message
        for i in np.flatnonzero(content)
        if (message := msg.tool_message(text_lines[i].strip(BLANKS))) is not None
    }
    names = {msg.named_group(message) for message in found.values()} - {None}
    if len(names) != 1:
        return {}
    return {h: group for h in groupless if (group := _announced(h, found, text_lines))}


def _announced(header: int, found: dict[int, msg.Found], text_lines: list[str]) -> str | None:
    """The group the nearest message above a header line announces; blank lines, log
    noise and messages naming no group may sit between, nothing else."""
    for index in range(header - 1, -1, -1):
        line = text_lines[index].strip(BLANKS)
        if not line or msg.is_log_noise(line):
            continue
        message = found.get(index)
        group = msg.named_group(message)
        if message is None or (group is not None and not message[0].announces):
            return None
        if group is not None:
            return group
    return None
