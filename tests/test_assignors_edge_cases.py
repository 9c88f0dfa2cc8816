import pytest
from assignor_checks import check_valid, spread, subs

from fleet_rebalance.assignors import (
    AssignorInputError,
    PluginError,
    Subscription,
    TopicPartition,
    available_assignors,
    get_assignor,
)
from fleet_rebalance.assignors.uniform import uuid_bits

ALL = available_assignors()


def test_available_assignors_and_protocols():
    assert ALL == ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform"]
    protocols = {name: get_assignor(name).protocol for name in ALL}
    assert protocols == {
        "range": "eager",
        "roundrobin": "eager",
        "sticky": "eager",
        "cooperative-sticky": "cooperative",
        "uniform": "cooperative",
    }
    assert all(get_assignor(n).name == n for n in ALL)


def test_unknown_name_is_a_value_error():
    with pytest.raises(ValueError, match=r"unknown assignor 'stiky'"):
        get_assignor("stiky")


@pytest.mark.parametrize("name", ALL)
def test_no_members(name):
    assert get_assignor(name).assign({"t": 3}, {}) == {}


@pytest.mark.parametrize("name", ALL)
def test_members_subscribed_to_nothing_get_nothing(name):
    group = subs({"a": [], "b": []})
    assert get_assignor(name).assign({"t": 3}, group) == {"a": [], "b": []}


@pytest.mark.parametrize("name", ALL)
def test_zero_partition_and_missing_topics_are_skipped(name):
    group = subs({"a": ["empty", "gone", "t"], "b": ["empty", "gone", "t"]})
    result = get_assignor(name).assign({"empty": 0, "t": 2}, group)
    check_valid(result, {"empty": 0, "t": 2}, group)


@pytest.mark.parametrize("name", ALL)
def test_more_members_than_partitions(name):
    group = subs({f"m{i}": ["t"] for i in range(7)})
    result = get_assignor(name).assign({"t": 3}, group)
    check_valid(result, {"t": 3}, group)
    assert sorted(len(v) for v in result.values()) == [0, 0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("name", ALL)
def test_unicode_and_long_ids(name):
    members = {"消费者-1": ["订单"], "é" * 300: ["订单"], "\U0001f600": ["订单"]}
    result = get_assignor(name).assign({"订单": 6}, subs(members))
    check_valid(result, {"订单": 6}, subs(members))
    assert spread(result) == 0


@pytest.mark.parametrize("name", ALL)
def test_ten_thousand_members(name):
    group = subs({f"consumer-{i:05d}": ["orders", "audit"] for i in range(10_000)})
    result = get_assignor(name).assign({"orders": 12_000, "audit": 8_000}, group)
    check_valid(result, {"orders": 12_000, "audit": 8_000}, group)
    if name != "range":
        assert spread(result) == 0


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("count", [-1, 2.5, True, "3"])
def test_invalid_partition_counts_are_clear_errors(name, count):
    with pytest.raises(
        AssignorInputError,
        match=r"partitions_per_topic\['t'\] must be a "
        r"non-negative int",
    ):
        get_assignor(name).assign({"t": count}, subs({"a": ["t"]}))


@pytest.mark.parametrize("name", ALL)
def test_owned_partitions_of_unknown_topics_or_past_the_count_are_ignored(name):
    owned = [TopicPartition("gone", 0), TopicPartition("t", 9), TopicPartition("t", 0)]
    group = {"a": Subscription(["t"], owned, 3), "b": Subscription(["t"], [], 3)}
    result = get_assignor(name).assign({"t": 2}, group)
    check_valid(result, {"t": 2}, group)


def test_subscription_rejects_a_bare_string():
    with pytest.raises(TypeError, match=r"not the string 'orders'"):
        Subscription("orders")


def test_non_subscription_values_are_clear_errors():
    with pytest.raises(AssignorInputError, match=r"subscriptions\['a'\] must be a Subscription"):
        get_assignor("range").assign({"t": 1}, {"a": ["t"]})


@pytest.mark.parametrize(
    ("topics_a", "topics_b", "owned", "counts", "message"),
    [
        (["t"], ["t"], ("t", 0), {"t": 2}, r"t-0 is owned by both"),
        # Heterogeneous: "a" no longer subscribes to u but still owns u-0, as "b" does.
        (["t"], ["u"], ("u", 0), {"t": 2, "u": 2}, r"u-0 is owned by both 'a' and 'b'"),
        # Homogeneous, and nobody subscribes to u any more.
        (["t"], ["t"], ("u", 0), {"t": 2, "u": 1}, r"u-0 is owned by both 'a' and 'b'"),
    ],
)
def test_uniform_refuses_a_partition_owned_twice(topics_a, topics_b, owned, counts, message):
    group = {
        "a": Subscription(topics_a, [TopicPartition(*owned)]),
        "b": Subscription(topics_b, [TopicPartition(*owned)]),
    }
    with pytest.raises(AssignorInputError, match=message):
        get_assignor("uniform").assign(counts, group)


def test_uniform_counts_a_partition_listed_twice_by_its_owner_once():
    # Kafka holds a member's partitions in a Set: "a" owns one partition, as "b" will
    # after u-0, and the tie for t-1 goes to the first member.
    group = {
        "a": Subscription(["t"], [TopicPartition("t", 0), TopicPartition("t", 0)]),
        "b": Subscription(["t", "u"]),
    }
    result = get_assignor("uniform").assign({"t": 2, "u": 1}, group)
    assert result == {
        "a": [TopicPartition("t", 0), TopicPartition("t", 1)],
        "b": [TopicPartition("u", 0)],
    }
    group["a"] = Subscription(["t"], [TopicPartition("t", 0)])
    assert get_assignor("uniform").assign({"t": 2, "u": 1}, group) == result


def test_uniform_drops_what_a_homogeneous_member_cannot_own_any_more():
    # Listed twice, past the topic's end, of a deleted topic, of a topic nobody
    # subscribes to: the answer is the one for what it really holds.
    listed = [TopicPartition(*tp) for tp in [("t", 2), ("t", 2), ("t", 9), ("gone", 0), ("u", 0)]]
    group = {"a": Subscription(["t"], listed), "b": Subscription(["t"])}
    result = get_assignor("uniform").assign({"t": 3, "u": 1}, group)
    # KAFKA-18688: "a" would take its extra one from the unowned, so "b" gets it.
    assert result == {
        "a": [TopicPartition("t", 2)],
        "b": [TopicPartition("t", 0), TopicPartition("t", 1)],
    }
    group["a"] = Subscription(["t"], [TopicPartition("t", 2)])
    assert get_assignor("uniform").assign({"t": 3, "u": 1}, group) == result


def test_sticky_revokes_a_partition_claimed_twice_in_one_generation(caplog):
    group = {
        "a": Subscription(["t"], [TopicPartition("t", 0)], 4),
        "b": Subscription(["t"], [TopicPartition("t", 0), TopicPartition("t", 1)], 4),
    }
    result = get_assignor("cooperative-sticky").assign({"t": 2}, group)
    assert "claiming the same TopicPartition t-0 in the same generation 4" in caplog.text
    # t-0 changes hands this round (nobody may own it until it is revoked everywhere).
    assert TopicPartition("t", 0) not in result["a"] + result["b"]
    assert result["b"] == [TopicPartition("t", 1)]


def test_higher_generation_wins_a_contested_partition():
    group = {
        "old": Subscription(["t"], [TopicPartition("t", 0)], 3),
        "new": Subscription(["t"], [TopicPartition("t", 0)], 5),
    }
    result = get_assignor("sticky").assign({"t": 2}, group)
    assert result == {"new": [TopicPartition("t", 0)], "old": [TopicPartition("t", 1)]}


def test_range_static_members_sort_first_by_instance_id():
    group = {
        "a-uuid": Subscription(["t"]),
        "z-uuid": Subscription(["t"], group_instance_id="b"),
        "m-uuid": Subscription(["t"], group_instance_id="a"),
    }
    result = get_assignor("range").assign({"t": 3}, group)
    assert result == {
        "m-uuid": [TopicPartition("t", 0)],
        "z-uuid": [TopicPartition("t", 1)],
        "a-uuid": [TopicPartition("t", 2)],
    }


def test_range_rack_aware_prefers_local_replicas_within_quota():
    """KIP-881: r1 members take r1-only partitions; quotas still hold."""
    racks = {TopicPartition("t", p): (["r1"] if p % 2 == 0 else ["r2"]) for p in range(4)}
    group = {"a": Subscription(["t"], rack="r1"), "b": Subscription(["t"], rack="r2")}
    result = get_assignor("range").assign({"t": 4}, group, racks)
    assert result == {
        "a": [TopicPartition("t", 0), TopicPartition("t", 2)],
        "b": [TopicPartition("t", 1), TopicPartition("t", 3)],
    }
    plain = get_assignor("range").assign({"t": 4}, group)
    assert plain["a"] == [TopicPartition("t", 0), TopicPartition("t", 1)]


def test_example_plugin_loads_and_is_valid():
    path = "fleet_rebalance.assignors.examples.random_assignor:RandomAssignor"
    plugin = get_assignor(path)
    assert (plugin.name, plugin.protocol) == ("random", "eager")
    group = subs({"a": ["t"], "b": ["t", "u"]})
    result = plugin.assign({"t": 5, "u": 3}, group)
    check_valid(result, {"t": 5, "u": 3}, group)
    assert result == get_assignor(path).assign({"t": 5, "u": 3}, group)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_pkg.mod:Cls", r"module 'no_such_pkg.mod' not found"),
        ("fleet_rebalance.assignors.examples.random_assignor:Nope", r"has no class 'Nope'"),
        ("fleet_rebalance.assignors.types:TopicPartition", r"TopicPartition\(\) failed"),
        ("fleet_rebalance.assignors.java:JavaHashMap", r"failed"),
        ("fleet_rebalance.config:Config", r"Config has no 'name'"),
        (":Cls", r"expected 'package.module:ClassName'"),
    ],
)
def test_plugin_errors_name_what_is_missing(path, message):
    with pytest.raises(PluginError, match=message):
        get_assignor(path)


def test_sticky_reproduces_kafkas_empty_subscription_quirk():
    """Kafka seeds "all subscriptions equal" from the first non-empty subscription, so when
    a member subscribed to nothing comes first in the leader's HashMap the constrained path
    deals it partitions. Kafka 4.0's StickyAssignor returns exactly this (checked against
    its classes); we reproduce it rather than silently differ."""
    group = {"a": Subscription([]), "b": Subscription(["t"]), "c": Subscription(["t"])}
    result = get_assignor("sticky").assign({"t": 4}, group)
    assert result == {
        "a": [TopicPartition("t", 0), TopicPartition("t", 3)],
        "b": [TopicPartition("t", 1)],
        "c": [TopicPartition("t", 2)],
    }


def test_topic_ids_are_read_as_kafkas_uuid_strings():
    assert uuid_bits("AAAAAAAAAAAAAAAAAAAAAQ") == (0, 1)  # Uuid.ONE_UUID
    assert uuid_bits("_____________________w") == (-1, -1)  # signed, as Java's longs
    assert uuid_bits("N86Ry94fwbDqa0TxMENt1w") == (
        int.from_bytes(bytes.fromhex("37ce91cbde1fc1b0"), "big", signed=True),
        int.from_bytes(bytes.fromhex("ea6b44f130436dd7"), "big", signed=True),
    )
    for junk in ("", "orders", "AAAAAAAAAAAAAAAAAAAAAQ==", "AAAAAAAAAAAAAAAAAAAA", "!" * 22):
        assert uuid_bits(junk) is None
    # A topic whose id cannot be read is keyed by its name, as without ids.
    group = {m: Subscription(["clicks", "orders"]) for m in ("a", "b")}
    uniform = get_assignor("uniform")
    assert uniform.assign({"clicks": 3, "orders": 3}, group, topic_ids={"clicks": "x"}) == (
        uniform.assign({"clicks": 3, "orders": 3}, group)
    )
