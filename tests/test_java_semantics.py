"""The Java behaviour Kafka's assignors rely on, against values Java itself gives."""

from hypothesis import given, settings
from hypothesis import strategies as st

from fleet_rebalance.assignors.java import (
    JavaHashMap,
    hashmap_order,
    java_abs,
    member_order,
    string_hash,
    string_key,
    topic_partition_hash,
)


def test_string_hash_matches_java_including_overflow_and_utf16():
    # Values from FORMATS.md section 4 (Java's String.hashCode).
    assert string_hash("hello") == 99162322
    assert string_hash("orders-processor") == 633927594
    assert string_hash("payments-ledger") == -2129785847
    assert string_hash("polygenelubricants") == -(1 << 31)
    assert string_hash("") == 0
    # A supplementary character hashes as its two UTF-16 code units (0xD83D, 0xDE00).
    assert string_hash("\U0001f600") == 31 * 0xD83D + 0xDE00


def test_coordinator_partition_uses_utils_abs():
    assert java_abs(string_hash("orders-processor")) % 50 == 44
    assert java_abs(string_hash("payments-ledger")) % 50 == 47
    assert java_abs(string_hash("polygenelubricants")) % 50 == 0


def test_string_order_is_utf16_code_units_not_code_points():
    # U+FF61 sorts after U+1F600 by code point but before it in UTF-16 (0xD83D < 0xFF61).
    assert sorted(["\uff61", "\U0001f600"], key=string_key) == ["\U0001f600", "\uff61"]


def test_topic_partition_hash_is_kafkas():
    assert topic_partition_hash("orders", 3) == 31 * (31 + 3) + string_hash("orders")


def test_colliding_keys_keep_insertion_order():
    # "Aa" and "BB" share hashCode 2112, so they share a bucket.
    assert string_hash("Aa") == string_hash("BB")
    assert hashmap_order(["BB", "Aa"], string_hash) == ["BB", "Aa"]
    assert hashmap_order(["Aa", "BB"], string_hash) == ["Aa", "BB"]


def test_member_order_is_the_hashmaps_each_time_it_is_asked():
    # Remembered per list of members; each caller gets its own list to change.
    members = {"BB": 1, "c-2": 2, "Aa": 3}
    first = member_order(members)
    assert first == hashmap_order(list(members), string_hash)
    first.clear()
    assert member_order(members) == hashmap_order(list(members), string_hash)
    assert member_order(["Aa", "BB"]) == ["Aa", "BB"]  # another list, its own order


def test_resize_reorders_by_bucket():
    assert hashmap_order(range(99, -1, -1), lambda i: i) == list(range(100))
    # 13 keys overflow the 16-bucket table (threshold 12): 16 and 32 split apart.
    keys = [16, 0, 32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert hashmap_order(keys[:12], lambda i: i)[:3] == [16, 0, 32]
    assert hashmap_order(keys, lambda i: i)[:4] == [0, 32, 1, 2]


def test_nine_keys_in_one_bucket_of_a_small_table_force_a_resize():
    # Java resizes instead of treeifying a bin while the table has fewer than 64 buckets.
    keys = [0, 16, 32, 48, 64, 80, 96, 112, 128]
    assert hashmap_order(keys, lambda i: i) == [0, 32, 64, 96, 128, 16, 48, 80, 112]
    assert hashmap_order(keys[:8], lambda i: i) == keys[:8]


def test_removal_keeps_the_order_of_the_rest():
    table = JavaHashMap(lambda i: i)
    for key in (1, 17, 33, 2):
        table.add(key)
    table.remove(17)
    assert list(table) == [1, 33, 2]
    assert table.first() == 1


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 4096).map(lambda i: i * 16), st.integers(-(1 << 31), (1 << 31) - 1)
        ),
        max_size=200,
    ),
    st.sampled_from([1, 16, 64]),
)
def test_fast_order_equals_the_incremental_model(keys, capacity):
    table = JavaHashMap(lambda i: i, capacity)
    for key in keys:
        table.add(key)
    assert hashmap_order(keys, lambda i: i, capacity) == list(table)


@settings(max_examples=300, deadline=None)
@given(
    st.sets(
        st.one_of(st.integers(0, 70_000), st.integers(0, 64).map(lambda i: i * 16)),
        min_size=1,
        max_size=120,
    )
)
def test_the_uniform_assignors_partition_set_order_is_hashsets(partitions):
    # A member's owned partitions as `new HashSet<>(collection)` iterates them: the
    # uniform port's shortcut must agree with the HashMap model on every set.
    from fleet_rebalance.assignors.uniform import _copy_capacity, _int_set_order

    ordered = sorted(partitions)
    expected = hashmap_order(ordered, lambda i: i, _copy_capacity(len(ordered)))
    assert _int_set_order(list(partitions)) == expected
