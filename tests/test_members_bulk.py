"""The members view's bulk path gives exactly the rows, quarantine and line accounting of
the per-line path, whatever the row: it only takes rows whose reading leaves no doubt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.capture.describe import bulk_members

CAPTURE = "prod-east/captures/2026-11-20T0910Z/consumer-groups-members.txt"
LAYOUTS = {
    "3.6 static": "GROUP CONSUMER-ID GROUP-INSTANCE-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT",
    "3.6": "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT",
    "not verbose": "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS",
    "4.x": "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT "
    "TARGET-EPOCH TARGET-ASSIGNMENT",
    "4.x mixed": "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT "
    "TARGET-EPOCH TARGET-ASSIGNMENT UPGRADED",
    "1.1 no group": "CONSUMER-ID HOST CLIENT-ID #PARTITIONS ASSIGNMENT",
}
TOPICS = st.sampled_from(["orders", "audit", "a.b-c_d", "t:x", "t;y", "é"])
NUMBERS = st.one_of(
    st.integers(0, 99).map(str),
    st.sampled_from(["", "007", "2147483647", "2147483648", "99999999999", "١", "-1"]),
)

EPOCHS = st.sampled_from(["-", "0", "7", "-1", "-0", "07", "2147483648", "x"])


@st.composite
def assignment_text(draw) -> str:
    spelling = draw(st.sampled_from(["kip", "scala", "topicless", "dash", "junk"]))
    items = draw(st.lists(st.tuples(TOPICS, st.lists(NUMBERS, min_size=1, max_size=4)), max_size=3))
    separator = draw(st.sampled_from([", ", ",", ",  ", " , "]))
    if spelling == "kip":
        return ";".join(f"{t}:{','.join(p)}" for t, p in items) or "-"
    if spelling == "scala":
        return separator.join(f"{t}({','.join(p)})" for t, p in items) or "-"
    if spelling == "topicless":
        return separator.join(f"({','.join(p)})" for _, p in items) or "-"
    if spelling == "dash":
        return "-"
    return draw(st.sampled_from(["none", "()", "orders()", "(1", "orders(1)x", "a:", "x y"]))


def _listed(text: str) -> int:
    numbers = text.replace("(", ",").replace(")", ",").replace(":", ",").replace(";", ",")
    return sum(1 for token in numbers.split(",") if token.strip().isdigit())


@st.composite
def members_row(draw, layout: str) -> str:
    values = {
        "GROUP": draw(st.sampled_from(["billing", "-", "g1"])),
        "CONSUMER-ID": draw(st.sampled_from(["c-1-8a3f", "-", "unknown"])),
        "GROUP-INSTANCE-ID": draw(st.sampled_from(["i-1", "-", "none"])),
        "HOST": draw(st.sampled_from(["/10.0.0.1", "-"])),
        "CLIENT-ID": draw(st.sampled_from(["c-1", "-", ""])),
        "CURRENT-EPOCH": draw(EPOCHS),
        "TARGET-EPOCH": draw(EPOCHS),
        "UPGRADED": draw(st.sampled_from(["true", "false", "-", "True", "yes"])),
        "TARGET-ASSIGNMENT": "-",
    }
    text = draw(assignment_text())
    values["ASSIGNMENT"] = values["CURRENT-ASSIGNMENT"] = text
    listed = _listed(text)
    values["#PARTITIONS"] = draw(
        st.sampled_from([str(listed), str(listed), "-", str(listed + 1), "x", "٣", "0"])
    )
    row = [values[c] for c in layout.split()]
    return "  ".join(v if v != "" else "-" for v in row) + draw(st.sampled_from(["", "   "]))


@st.composite
def members_file(draw) -> str:
    blocks = []
    for _ in range(draw(st.integers(1, 3))):
        layout = LAYOUTS[draw(st.sampled_from(sorted(LAYOUTS)))]
        rows = draw(st.lists(members_row(layout), min_size=1, max_size=5))
        blocks.append("\n".join([layout, *rows]))
    return "\n\n".join(blocks) + "\n"


def _parse(text: str, bulk: bool):
    with pytest.MonkeyPatch.context() as patch:
        if not bulk:
            patch.setattr(bulk_members.BulkMembers, "layout_for", lambda *_: None)
        # The group in the path: 1.1's layout has no GROUP column.
        result = parse_capture(
            "prod-east/g1/2026-11-20T0910Z/members.txt",
            text.encode(),
            path_pattern=r"^(?P<cluster>[^/]+)/(?P<group>[^/]+)/",
        )
    assert result.reconciles(), result.reconciliation()
    return (
        result.records("members"),
        result.quarantine,
        result.structural,
        result.row_lines,
        result.status,
    )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(text=members_file())
def test_bulk_and_per_line_paths_read_every_row_alike(text):
    assert _parse(text, True) == _parse(text, False)


def test_bulk_path_reads_each_spelling():
    text = "\n".join(
        [
            LAYOUTS["3.6"],
            "g  c-1  /h  c  3  audit(2), orders(0,10)",
            "g  c-2  /h  c  2  (1,10)",
            "g  c-3  /h  c  0  -",
            LAYOUTS["4.x"],
            "g  c-4  /h  c  3  -  audit:2;orders:0,10  -  -",
            "",
        ]
    )
    result = parse_capture(CAPTURE, text.encode())
    assert result.batches["members"] and "members" not in result.rows  # all in bulk
    rows = {r["consumer_id"]: r for r in result.records("members")}
    pairs = [{"topic": "audit", "partition": 2}] + [
        {"topic": "orders", "partition": p} for p in (0, 10)
    ]
    assert rows["c-1"]["assignment"] == rows["c-4"]["assignment"] == pairs
    assert (rows["c-2"]["assignment"], rows["c-2"]["assignment_groups"]) == (None, [[1, 10]])
    assert (rows["c-3"]["assignment"], rows["c-3"]["partition_count"]) == ([], 0)


def test_bulk_path_reads_the_kip_848_epochs_and_upgraded():
    text = "\n".join(
        [
            LAYOUTS["4.x mixed"],
            "g  c-1  /h  c  1  3  audit:2  4  audit:2  false",
            "g  c-2  /h  c  0  4  -  4  audit:1  true",
            "g  c-3  /h  c  0  -  -  -  -  -",
            LAYOUTS["4.x"],
            "g  c-4  /h  c  1  6  audit:0  6  audit:0",
            "",
        ]
    )
    result = parse_capture(CAPTURE, text.encode())
    assert "members" not in result.rows  # all in bulk
    rows = {
        r["consumer_id"]: (r["member_epoch"], r["target_epoch"], r["upgraded"])
        for r in result.records("members")
    }
    assert rows == {
        "c-1": (3, 4, False),
        "c-2": (4, 4, True),
        "c-3": (None, None, None),
        "c-4": (6, 6, None),
    }
    assert _parse(text, True) == _parse(text, False)


def test_a_bad_upgraded_value_is_quarantined_with_the_reason():
    text = LAYOUTS["4.x mixed"] + "\ng  c-1  /h  c  0  3  -  3  -  yes\n"
    for bulk in (True, False):
        records, quarantine, *_ = _parse(text, bulk)
        assert records == []
        assert [q["reason"] for q in quarantine] == ["UPGRADED is 'yes', not true, false or '-'"]
