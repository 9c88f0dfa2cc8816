"""The lab's idea of a settled phase (tests/kafka_lab.py: Lab.settle), read on its
recordings: after the orders topic grows, a phase is settled only once every group
reading it owns each new partition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka_lab import ADDED_PARTITIONS, CLASSIC, owned_partitions

RECORDINGS = Path(__file__).parent / "data"
READERS = {*CLASSIC.values(), "lab-static"}


def _offsets_view(lab: str, capture: str) -> str:
    return (
        RECORDINGS / lab / "raw" / lab / "captures" / capture / "consumer-groups-offsets.txt"
    ).read_text()


@pytest.mark.parametrize("lab", ["lab-3.9", "lab-4"])
def test_every_reader_owns_the_grown_topic_only_after_it_grew(lab):
    truth = [
        json.loads(line) for line in (RECORDINGS / lab / "truth.jsonl").read_text().splitlines()
    ]
    grown = next(i for i, row in enumerate(truth) if row["action"] == "add_partitions")
    before = next(r["capture"] for r in reversed(truth[:grown]) if r["action"] == "settled")
    after = next(r["capture"] for r in truth[grown:] if r["action"] == "settled")
    topic, count = ADDED_PARTITIONS
    owned_before = owned_partitions(_offsets_view(lab, before), topic)
    owned_after = owned_partitions(_offsets_view(lab, after), topic)
    assert {g: owned_before[g] for g in READERS} == {g: set(range(count - 2)) for g in READERS}
    assert {g: owned_after[g] for g in READERS} == {g: set(range(count)) for g in READERS}
