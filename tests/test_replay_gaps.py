"""Which groups an incomplete members capture lost lines of (replay/gaps.py, no Spark)."""

from __future__ import annotations

from pathlib import Path

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.replay.gaps import lost_groups

PROJECT = Path(__file__).resolve().parent.parent
FILE = "lab/captures/2026-11-20T0100Z/consumer-groups-members.txt"

# Line numbers of a members capture laid out as Kafka prints it (blank line, header,
# rows per group): a at 3-5, b at 8-9, d (one member) at 12, c at 15-16.
ROWS = {3: "a", 4: "a", 5: "a", 8: "b", 9: "b", 12: "d", 15: "c", 16: "c"}


def parsed(lost: set[int], rows: dict[int, str] = ROWS, source_file: str = FILE):
    """The members rows the ingest kept: every row line except the lost ones."""
    return [(source_file, n, g) for n, g in rows.items() if n not in lost]


def row_line(group: str, member: str = "c-1") -> str:
    return f"{group} {member} /10.2.5.98      consumer-{group}-1 x               4   t:0"


def test_a_line_in_the_middle_of_a_block_is_that_groups():
    """Given a's middle row lost (its rows above and below are a's)
    Then only a is a gap, even with a mangled first token.
    Expected: {FILE: {a}}."""
    for line in (row_line("a"), "\x00garbage"):
        assert lost_groups([(FILE, 4, line)], parsed({4})) == {FILE: frozenset({"a"})}


def test_the_first_line_of_a_block_goes_to_the_group_it_names():
    """Given b's first row lost: a's row above, b's row below, the line starts with `b`
    Expected: {b}."""
    assert lost_groups([(FILE, 8, row_line("b"))], parsed({8})) == {FILE: frozenset({"b"})}


def test_the_last_line_of_a_block_and_of_the_file():
    """Given b's last row lost (b above, d below) and c's last row, the file's last line
    (only c above)
    Expected: {b, c}."""
    lost = [(FILE, 9, row_line("b")), (FILE, 16, row_line("c", "c-2"))]
    assert lost_groups(lost, parsed({9, 16})) == {FILE: frozenset({"b", "c"})}


def test_the_first_line_of_the_file():
    """Given a's first row lost, nothing parsed above it
    Expected: {a}."""
    assert lost_groups([(FILE, 3, row_line("a"))], parsed({3})) == {FILE: frozenset({"a"})}


def test_a_group_whose_only_line_was_lost_makes_its_neighbours_gaps():
    """Given d's only row lost: b above, c below, and no row of d left to match its name
    Then d has no row at that capture (a gap by itself) and both neighbours are named,
    the conservative answer.
    Expected: {b, c}."""
    assert lost_groups([(FILE, 12, row_line("d"))], parsed({12})) == {FILE: frozenset({"b", "c"})}


def test_a_single_group_file_whose_only_line_was_lost_names_nobody():
    """Given a file whose only row was lost
    Expected: the file with no group (its group has no rows there: a gap already)."""
    assert lost_groups([(FILE, 3, row_line("a"))], []) == {FILE: frozenset()}


def test_two_adjacent_groups_losing_the_lines_at_their_boundary():
    """Given a's last row and b's first row lost (a@4 and b@9 are the nearest rows of both)
    Then each line goes to the group it names.
    Expected: {a, b}."""
    lost = [(FILE, 5, row_line("a", "c-3")), (FILE, 8, row_line("b"))]
    assert lost_groups(lost, parsed({5, 8})) == {FILE: frozenset({"a", "b"})}


def test_a_mangled_first_token_at_a_boundary_names_both_candidates():
    """Given b's first row lost with its group id mangled (`b` -> `b#`), or empty
    Expected: {a, b}."""
    for line in (row_line("b#"), "", None):
        assert lost_groups([(FILE, 8, line)], parsed({8})) == {FILE: frozenset({"a", "b"})}


def test_a_whole_file_quarantine_row_makes_the_whole_capture_a_gap():
    """Given a quarantine row without a line number, before or after line rows
    Expected: {FILE: None} (every group of the capture)."""
    whole = (FILE, None, "")
    line = (FILE, 4, row_line("a"))
    assert lost_groups([whole, line], parsed({4})) == {FILE: None}
    assert lost_groups([line, whole], parsed({4})) == {FILE: None}


def test_files_are_attributed_independently():
    """Given line 8 lost in two files: b's row in one, in the other between x and y
    Then the rows of one file never decide for another.
    Expected: {FILE: {b}, other: {x, y}}."""
    other = "lab/captures/2026-11-20T0120Z/consumer-groups-members.txt"
    rows = parsed({8}) + parsed(set(), {7: "x", 9: "y"}, other)
    lost = [(FILE, 8, row_line("b")), (other, 8, row_line("z"))]
    assert lost_groups(lost, rows) == {FILE: frozenset({"b"}), other: frozenset({"x", "y"})}


def test_the_parsers_own_rows_and_quarantine_of_a_corrupted_sample_capture():
    """Given data/sample's lab 01:00 members capture with the #PARTITIONS of
    fraud-archiver-3's first member (the first row of its block) changed to a letter
    Then the parser quarantines that line and keeps billing-enricher-4's rows above it.
    Expected: {FILE: {fraud-archiver-3}}."""
    text = (PROJECT / "tests" / "data" / "fleet_v1" / FILE).read_text()
    lines = text.split("\n")
    number = next(
        n for n, line in enumerate(lines, start=1) if line.startswith("fraud-archiver-3 ")
    )
    assert lines[number - 2].startswith("GROUP ")  # the first row of its block
    words = lines[number - 1].split()
    lines[number - 1] = lines[number - 1].replace(f" {words[4]} ", " x ", 1)
    result = parse_capture(FILE, "\n".join(lines).encode())
    quarantined = [(FILE, q["line_number"], q["line"]) for q in result.quarantine]
    rows = [(FILE, r["line_number"], r["group_id"]) for r in result.records("members")]
    assert [q[1] for q in quarantined] == [number]
    assert lost_groups(quarantined, rows) == {FILE: frozenset({"fraud-archiver-3"})}
