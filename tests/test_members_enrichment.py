"""The vectorized members completion against its rules, stated row by row."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from fleet_rebalance.capture.members_enrichment import MEMBERS_SCHEMA, CaptureOffsets

TIMES = [dt.datetime(2026, 11, 20, h, tzinfo=dt.UTC) for h in (2, 3)]
KEY = ("cluster", "group_id", "captured_at")
EXTRA = ("assignment", "subscription", "subscription_inferred")
CONSUMERS = st.sampled_from([None, "m1", "m2", "m3"])
offset_rows = st.fixed_dictionaries(
    {
        "cluster": st.just("c"),
        "group_id": st.sampled_from(["g", "h"]),
        "captured_at": st.sampled_from(TIMES),
        "consumer_id": CONSUMERS,
        "topic": st.sampled_from(["t", "u"]),  # the offsets view always names it
        "partition": st.integers(0, 4),
    }
)
member_rows = st.fixed_dictionaries(
    {
        "cluster": st.just("c"),
        "group_id": st.sampled_from(["g", "h"]),
        "captured_at": st.sampled_from(TIMES),
        "consumer_id": CONSUMERS,
        "assignment": st.one_of(st.none(), st.just([]), st.just([{"topic": "t", "partition": 9}])),
        "assignment_groups": st.one_of(
            st.none(), st.lists(st.lists(st.integers(0, 4), max_size=3), max_size=2)
        ),
        "subscription": st.one_of(st.none(), st.just(["t"])),
        "subscription_inferred": st.sampled_from([None, False, True]),
    }
)


def expected(offsets: list[dict], member: dict) -> dict:
    """The rules of CaptureOffsets.enrich, one row at a time."""
    row = dict(member)
    groups = row.pop("assignment_groups")
    same_key = [o for o in offsets if all(o[c] == member[c] for c in KEY)]
    mine = [o for o in same_key if o["consumer_id"] == member["consumer_id"] is not None]
    if row["assignment"] is None and groups is not None and mine:
        owned = sorted((o["topic"], o["partition"]) for o in mine)
        if sorted(p for group in groups for p in group) == sorted(p for _, p in owned):
            row["assignment"] = [{"topic": t, "partition": p} for t, p in owned]
    topics = sorted({o["topic"] for o in same_key})
    if row["subscription"] is None:
        row["subscription"] = topics or None
        row["subscription_inferred"] = True if topics else None
    elif row["subscription_inferred"] is None:
        row["subscription_inferred"] = False
    return row


@st.composite
def captures(draw) -> tuple[list[dict], list[dict]]:
    """Offsets rows, and members rows of which some list exactly (in any order and
    grouping) or nearly the partitions their consumer owns."""
    offsets = draw(st.lists(offset_rows, max_size=12))
    members = draw(st.lists(member_rows, max_size=8))
    for member in members:
        if not offsets or draw(st.booleans()):
            continue
        owner = draw(st.sampled_from(offsets))
        ident = (*KEY, "consumer_id")
        member.update({c: owner[c] for c in ident}, assignment=None)
        mine = [o["partition"] for o in offsets if all(o[c] == owner[c] for c in ident)]
        numbers = draw(st.permutations(mine)) + draw(st.sampled_from([[], [], [0]]))
        cut = draw(st.integers(0, len(numbers)))
        member["assignment_groups"] = [numbers[:cut], numbers[cut:]]
    return offsets, members


@settings(max_examples=300, derandomize=True, deadline=None)
@given(capture=captures())
def test_enrich_follows_the_row_rules(capture):
    offsets, members = capture
    enriched = CaptureOffsets.of([pa.Table.from_pylist(offsets)] if offsets else []).enrich(
        pa.Table.from_pylist(members, schema=MEMBERS_SCHEMA)
    )
    got = enriched.select([*KEY, "consumer_id", *EXTRA]).to_pylist()
    want = [{k: expected(offsets, m)[k] for k in (*KEY, "consumer_id", *EXTRA)} for m in members]
    assert got == want
