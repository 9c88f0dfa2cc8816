"""The worked examples of seeds/000 and seeds/003 as literal expected outputs."""

from assignor_checks import kept, subs

from fleet_rebalance.assignors import Subscription, TopicPartition, get_assignor


def tps(*names: str) -> list[TopicPartition]:
    return sorted(TopicPartition(n.split("P")[0], int(n.split("P")[1])) for n in names)


FOUR_TOPICS = {"T0": 2, "T1": 2, "T2": 2, "T3": 2}
INITIAL = {
    "C0": tps("T0P0", "T1P1", "T3P0"),
    "C1": tps("T0P1", "T2P0", "T3P1"),
    "C2": tps("T1P0", "T2P1"),
}


def test_range_four_partitions_three_consumers():
    """Given t0 with 4 partitions and C0..C2, Then C0 gets the extra one.
    Expected: C0 [0, 1], C1 [2], C2 [3]."""
    result = get_assignor("range").assign(
        {"t0": 4}, subs({"C0": ["t0"], "C1": ["t0"], "C2": ["t0"]})
    )
    assert result == {"C0": tps("t0P0", "t0P1"), "C1": tps("t0P2"), "C2": tps("t0P3")}


def test_range_two_topics_then_a_third_consumer_seeds_003():
    members = {"consumer1": ["topic1", "topic2"], "consumer2": ["topic1", "topic2"]}
    two = get_assignor("range").assign({"topic1": 3, "topic2": 3}, subs(members))
    assert two == {
        "consumer1": tps("topic1P0", "topic1P1", "topic2P0", "topic2P1"),
        "consumer2": tps("topic1P2", "topic2P2"),
    }
    members["consumer3"] = ["topic1", "topic2"]
    three = get_assignor("range").assign({"topic1": 3, "topic2": 3}, subs(members))
    assert three == {
        "consumer1": tps("topic1P0", "topic2P0"),
        "consumer2": tps("topic1P1", "topic2P1"),
        "consumer3": tps("topic1P2", "topic2P2"),
    }


def test_roundrobin_and_sticky_agree_on_the_first_assignment():
    group = subs({c: list(FOUR_TOPICS) for c in ("C0", "C1", "C2")})
    assert get_assignor("roundrobin").assign(FOUR_TOPICS, group) == INITIAL
    assert get_assignor("sticky").assign(FOUR_TOPICS, group) == INITIAL


def test_c1_leaves_roundrobin_keeps_3_sticky_keeps_5():
    """Given the initial assignment and C1 leaving, Then roundrobin re-deals everything
    while sticky keeps every surviving owner's partitions.
    Expected: kept 3 vs 5. (seeds/000 prints C0 T0P0 T1P1 T3P0 T2P0 for sticky; Kafka 4.x's
    constrained path deals T0P1 to C0 and T2P0 to C2 - same 5 partitions kept.)"""
    after = {c: Subscription(list(FOUR_TOPICS), INITIAL[c], 1) for c in ("C0", "C2")}
    roundrobin = get_assignor("roundrobin").assign(FOUR_TOPICS, after)
    assert roundrobin == {
        "C0": tps("T0P0", "T1P0", "T2P0", "T3P0"),
        "C2": tps("T0P1", "T1P1", "T2P1", "T3P1"),
    }
    sticky = get_assignor("sticky").assign(FOUR_TOPICS, after)
    assert sticky == {
        "C0": tps("T0P0", "T0P1", "T1P1", "T3P0"),
        "C2": tps("T1P0", "T2P0", "T2P1", "T3P1"),
    }
    assert (kept(INITIAL, roundrobin), kept(INITIAL, sticky)) == (3, 5)


UNEQUAL = {"T0": 1, "T1": 2, "T2": 3}
UNEQUAL_SUBS = {"C0": ["T0"], "C1": ["T0", "T1"], "C2": ["T0", "T1", "T2"]}


def test_unequal_subscriptions_before_and_after_c0_leaves():
    roundrobin = get_assignor("roundrobin").assign(UNEQUAL, subs(UNEQUAL_SUBS))
    assert roundrobin == {
        "C0": tps("T0P0"),
        "C1": tps("T1P0"),
        "C2": tps("T1P1", "T2P0", "T2P1", "T2P2"),
    }
    sticky = get_assignor("sticky").assign(UNEQUAL, subs(UNEQUAL_SUBS))
    assert sticky == {
        "C0": tps("T0P0"),
        "C1": tps("T1P0", "T1P1"),
        "C2": tps("T2P0", "T2P1", "T2P2"),
    }
    survivors = {m: Subscription(UNEQUAL_SUBS[m], sticky[m], 1) for m in ("C1", "C2")}
    rr_after = get_assignor("roundrobin").assign(UNEQUAL, survivors)
    assert rr_after == {"C1": tps("T0P0", "T1P1"), "C2": tps("T1P0", "T2P0", "T2P1", "T2P2")}
    sticky_after = get_assignor("sticky").assign(UNEQUAL, survivors)
    assert sticky_after == {"C1": tps("T0P0", "T1P0", "T1P1"), "C2": tps("T2P0", "T2P1", "T2P2")}
    assert kept(sticky, sticky_after) == 5


def test_cooperative_consumer3_joins_revokes_first_then_assigns():
    """seeds/000: consumer1 owns T0P0, T0P2, consumer2 T0P1; consumer3 joins.
    Round 1 takes T0P2 from consumer1 without giving it to anyone; round 2 hands it over."""
    coop = get_assignor("cooperative-sticky")
    assert coop.protocol == "cooperative"
    group = {
        "consumer1": Subscription(["T0"], tps("T0P0", "T0P2"), 5),
        "consumer2": Subscription(["T0"], tps("T0P1"), 5),
        "consumer3": Subscription(["T0"]),
    }
    first = coop.assign({"T0": 3}, group)
    assert first == {"consumer1": tps("T0P0"), "consumer2": tps("T0P1"), "consumer3": []}
    second = coop.assign({"T0": 3}, {m: Subscription(["T0"], first[m], 6) for m in group})
    assert second == {"consumer1": tps("T0P0"), "consumer2": tps("T0P1"), "consumer3": tps("T0P2")}
