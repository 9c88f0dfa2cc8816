"""Which groups an incomplete members capture lost lines of (pure: no Spark).

A members capture with a quarantined line is `incomplete` (DESIGN.md, ingested_files):
replaying it as is would show the member of that line leaving at the capture and coming
back at the next one, two phantom rebalances. Its groups that lost lines are a gap in
that capture instead; every other group of the capture replays as usual.

The bronze tables keep no header or blank lines, so a quarantined line is attributed
from what they do keep. `kafka-consumer-groups.sh --describe --members` prints each
group's members as one contiguous block (a header line, its rows, a blank line before
the next group), so a lost line sits between parsed rows of its file:
- the nearest parsed rows above and below it belong to one group: that group;
- at a block boundary (two groups, or rows on one side only): the candidate whose group
  id is the lost line's first whitespace-separated token, else every candidate.
Attributing too many groups only skips that capture for them (a gap is harmless: the
next capture shows where the group ended up); attributing too few would bring back
the phantom events. A group whose every line was lost has no rows at that capture and
so is a gap already: it need not be (and cannot always be) named. A quarantine row
without a line number stands for the whole file: every group of the capture is a gap.

Example: a file whose parsed rows are group a's at lines 2, 3, 5 and group b's at 8, 9:
- line 4 lost (between a@3 and a@5): a, whatever its first token;
- line 6 lost, `a  c-9 /10.0.0.7 ...` (between a@5 and b@8): a;
- line 7 lost, `b#  c-4 ...` (a mangled group id between a@5 and b@8): a and b;
- line 10 lost (below b@9, nothing after it): b.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

QuarantinedLine = tuple[str, int | None, str | None]  # source_file, line_number, line
ParsedRow = tuple[str, int | None, str]  # source_file, line_number, group_id


def lost_groups(
    quarantined: Iterable[QuarantinedLine], parsed: Iterable[ParsedRow]
) -> dict[str, frozenset[str] | None]:
    """Per source file of `quarantined`, the groups it lost lines of, or None when a
    whole-file quarantine row (line_number None) makes the whole capture a gap.

    `parsed` are the members rows of those files, in any order."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for source_file, line_number, group_id in parsed:
        if line_number is not None:
            rows.setdefault(source_file, []).append((line_number, group_id))
    files = {f: _File(sorted(r)) for f, r in rows.items()}
    lost: dict[str, frozenset[str] | None] = {}
    for source_file, line_number, line in quarantined:
        if line_number is None:
            lost[source_file] = None
            continue
        known = lost.get(source_file, frozenset())
        if known is None:
            continue
        owners = files.get(source_file, _EMPTY).owners(line_number, line)
        lost[source_file] = known | owners
    return lost


class _File:
    """One file's parsed rows by line number."""

    def __init__(self, rows: list[tuple[int, str]]) -> None:
        self.numbers = [n for n, _ in rows]
        self.groups = [g for _, g in rows]

    def owners(self, line_number: int, line: str | None) -> frozenset[str]:
        above = bisect.bisect_left(self.numbers, line_number) - 1
        below = bisect.bisect_right(self.numbers, line_number)
        candidates = {self.groups[i] for i in (above, below) if 0 <= i < len(self.groups)}
        if len(candidates) <= 1:
            return frozenset(candidates)
        token = _first_token(line)
        return frozenset({token} if token in candidates else candidates)


def _first_token(line: str | None) -> str | None:
    words = (line or "").split(maxsplit=1)
    return words[0] if words else None


_EMPTY = _File([])
