"""Our assignors against outputs produced by Kafka's own classes.

tests/data/kafka_assignor_golden.json holds generated group histories (members joining
and leaving, partitions added, stale generations, doubly-claimed partitions, static
members, racks, unicode ids, 1-16 members) and what Apache Kafka (trunk 1eb76443, which
became 4.0) assigned for each. Identical output, not just equivalent, is the contract.
"""

import json
from pathlib import Path

import pytest

from fleet_rebalance.assignors import Subscription, TopicPartition, get_assignor

GOLDEN = json.loads(
    (Path(__file__).parent / "data" / "kafka_assignor_golden.json").read_text(encoding="utf-8")
)


def _case_id(case: dict) -> str:
    return f"{case['assignor']}-{len(case['members'])}m-{len(case['partitions_per_topic'])}t"


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=_case_id)
def test_identical_to_kafka(case):
    subscriptions = {
        member: Subscription(
            topics, [TopicPartition(t, p) for t, p in owned], generation, instance, rack
        )
        for member, topics, owned, generation, instance, rack in case["members"]
    }
    racks = {TopicPartition(t, p): r for t, p, r in case["partition_racks"]} or None
    result = get_assignor(case["assignor"]).assign(
        case["partitions_per_topic"], subscriptions, racks
    )
    expected = {m: sorted(TopicPartition(t, p) for t, p in tps) for m, tps in case["kafka"].items()}
    assert result == expected


def test_golden_set_covers_every_builtin_and_the_interesting_paths():
    assignors = {c["assignor"] for c in GOLDEN["cases"]}
    assert assignors == {"range", "roundrobin", "sticky", "cooperative-sticky", "uniform"}
    assert any(len(c["members"]) > 12 for c in GOLDEN["cases"])  # HashMap resize
    assert any(c["partition_racks"] for c in GOLDEN["cases"])
    assert any(owned for c in GOLDEN["cases"] for _, _, owned, *_ in c["members"])
