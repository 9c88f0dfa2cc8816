"""seeds/001's replica placement tables, literally."""

import pytest

from fleet_rebalance.generate.replicas import (
    ReplicaAssignmentError,
    add_partitions,
    assign_replicas_to_brokers,
    rack_alternated_brokers,
)

TEN_RF3 = {
    0: [0, 1, 2],
    1: [1, 2, 3],
    2: [2, 3, 4],
    3: [3, 4, 0],
    4: [4, 0, 1],
    5: [0, 2, 3],
    6: [1, 3, 4],
    7: [2, 4, 0],
    8: [3, 0, 1],
    9: [4, 1, 2],
}


def test_brokers_0_to_4_ten_partitions_rf3_start_0():
    assert assign_replicas_to_brokers(range(5), 10, 3, fixed_start_index=0) == TEN_RF3


def test_more_partitions_bump_the_shift_again():
    """seeds/001's "11 partitions" run prints p-0..p-11 (12 rows); p-10 and p-11 use shift 2."""
    result = assign_replicas_to_brokers(range(5), 12, 3, fixed_start_index=0)
    assert result == {**TEN_RF3, 10: [0, 3, 4], 11: [1, 4, 0]}


def test_rf4_appends_one_replica_to_each_rf3_list():
    result = assign_replicas_to_brokers(range(5), 10, 4, fixed_start_index=0)
    assert result == {
        0: [0, 1, 2, 3],
        1: [1, 2, 3, 4],
        2: [2, 3, 4, 0],
        3: [3, 4, 0, 1],
        4: [4, 0, 1, 2],
        5: [0, 2, 3, 4],
        6: [1, 3, 4, 0],
        7: [2, 4, 0, 1],
        8: [3, 0, 1, 2],
        9: [4, 1, 2, 3],
    }
    assert all(result[p][:3] == TEN_RF3[p] for p in TEN_RF3)


def test_unordered_broker_list_with_shift_3_positions_by_list_index():
    result = assign_replicas_to_brokers(
        [1, 2, 0, 4, 3], 10, 3, fixed_start_index=0, next_replica_shift=3
    )
    assert result == {
        0: [1, 3, 2],
        1: [2, 1, 0],
        2: [0, 2, 4],
        3: [4, 0, 3],
        4: [3, 4, 1],
        5: [1, 2, 0],
        6: [2, 0, 4],
        7: [0, 4, 3],
        8: [4, 3, 1],
        9: [3, 1, 2],
    }


def test_add_partitions_restarts_from_sorted_brokers():
    """Existing p-0 [0, 2, 3], p-1 [1, 3, 0] (made from list {0,1,4,2,3}); adding one gives
    p-2 [2, 3, 4], not the [4, 0, 1] the original list would have given."""
    assert add_partitions([4, 3, 2, 1, 0], {0: [0, 2, 3], 1: [1, 3, 0]}, 1) == {2: [2, 3, 4]}
    original = assign_replicas_to_brokers(
        [0, 1, 4, 2, 3], 3, 3, fixed_start_index=0, next_replica_shift=2
    )
    assert original == {0: [0, 2, 3], 1: [1, 3, 0], 2: [4, 0, 1]}


def test_rack_aware_alternates_racks_and_spreads_replicas():
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    assert rack_alternated_brokers(racks) == [0, 2, 4, 1, 3, 5]
    result = assign_replicas_to_brokers(racks, 6, 3, fixed_start_index=0)
    assert result == {
        0: [0, 2, 4],
        1: [2, 4, 1],
        2: [4, 1, 3],
        3: [1, 3, 5],
        4: [3, 5, 0],
        5: [5, 0, 2],
    }
    assert all(len({racks[b] for b in replicas}) == 3 for replicas in result.values())


def test_seeded_random_start_matches_java_util_random():
    # java.util.Random(42).nextInt(5) twice gives 0 then 3 (checked with jshell).
    assert assign_replicas_to_brokers(range(5), 2, 2, seed=42) == (
        assign_replicas_to_brokers(range(5), 2, 2, fixed_start_index=0, next_replica_shift=3)
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((range(3), 0, 1), "Number of partitions must be larger than 0."),
        ((range(3), 3, 0), "Replication factor must be larger than 0."),
        ((range(3), 3, 4), "Replication factor: 4 larger than available brokers: 3."),
        (({0: "a", 1: None}, 2, 1), "Not all brokers have rack information"),
    ],
)
def test_invalid_requests_use_kafkas_messages(args, message):
    with pytest.raises(ReplicaAssignmentError, match=message.replace(".", r"\.")):
        assign_replicas_to_brokers(*args)
