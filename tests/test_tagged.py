"""The packed form a stage hands its tables' rows to Spark in: each table's rows come
back whole, in the table's schema, whatever the stage's batches looked like."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from fleet_rebalance.pipeline import tagged

TABLES = {
    "a": pa.schema([("cluster", pa.string()), ("n", pa.int64())]),
    "b": pa.schema([("cluster", pa.string()), ("at", pa.timestamp("us", tz="UTC"))]),
}


def unpacked(table: pa.Table, name: str) -> list[dict]:
    rows = table.filter(pc.equal(table.column(tagged.TABLE), name))
    batches = list(tagged.unpacked(rows.column(tagged.BATCH).combine_chunks()))
    assert all(batch.schema == TABLES[name] for batch in batches)
    assert sum(rows.column(tagged.ROWS).to_pylist()) == sum(b.num_rows for b in batches)
    return [row for batch in batches for row in batch.to_pylist()]


def test_tables_pack_into_their_rows_in_their_schemas():
    tables = {
        "a": pa.Table.from_batches(
            [
                pa.record_batch({"cluster": ["c1"], "n": pa.array([1], pa.int64())}),
                pa.record_batch({"cluster": ["c3"], "n": pa.array([3], pa.int64())}),
            ]
        ),
        "b": pa.Table.from_pylist([{"cluster": "c2", "at": None}], TABLES["b"]),
    }
    packed = tagged.packed_tables(tables)
    assert packed.num_rows == 2  # a table's batches travel as one
    assert unpacked(packed, "a") == [{"cluster": "c1", "n": 1}, {"cluster": "c3", "n": 3}]
    assert [row["cluster"] for row in unpacked(packed, "b")] == ["c2"]


def test_a_batch_without_a_column_packs_it_null():
    batch = pa.record_batch({"cluster": ["c1"]})
    packed = pa.Table.from_batches([tagged.packed(tagged.conformed(batch, TABLES["b"]), "b")])
    assert unpacked(packed, "b") == [{"cluster": "c1", "at": None}]


def test_no_tables_pack_into_no_rows():
    assert tagged.packed_tables({}).num_rows == 0
