"""sql --engine duckdb against the Spark path: the README's queries give the same rows
over one nightly of data/sample, and Spark-only SQL is refused in one line."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import shutil
from pathlib import Path

import pytest

from fleet_rebalance.config import Config
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.sql.statements import split_statements

PROJECT = Path(__file__).resolve().parent.parent
# ./spark-submit.sh sql "..." examples, and ```sql blocks, of the README.
COMMAND_QUERY = re.compile(r'\./spark-submit\.sh sql "\s*(SELECT.*?)"', re.DOTALL)
SQL_BLOCK = re.compile(r"```sql\n(.*?)```", re.DOTALL)


def readme_queries() -> list[str]:
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    queries = COMMAND_QUERY.findall(text) + SQL_BLOCK.findall(text)
    return [" ".join(q.split()) for q in queries if "..." not in q]  # not "SELECT ...; ..."


def test_the_readme_has_queries_to_compare():
    queries = readme_queries()
    assert len(queries) >= 5
    assert any("LEFT ANTI JOIN" in q for q in queries)


@pytest.fixture(scope="module")
def config(sample_nightlies) -> Config:
    """data/sample's two dates (the session's): clean_nightly's path holds a %-escape,
    which deltalake cannot open (test_a_warehouse_under_a_percent_escape_is_refused...)."""
    return sample_nightlies.config


@pytest.fixture
def small(tmp_path) -> Config:
    """Two small Delta tables written by deltalake (no Spark): group_health partitioned
    by date, with a UTC timestamp, an array and NULLs; and recommendations."""
    import pyarrow as pa
    from deltalake import write_deltalake

    stamp = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
    health = pa.table(
        {
            "date": pa.array([dt.date(2026, 11, 20), dt.date(2026, 11, 20), dt.date(2026, 11, 21)]),
            "cluster": ["c1", "c1", "c2"],
            "group_id": ["g1", "g2", "g1"],
            "severity": pa.array([2, None, 0], pa.int32()),
            "attention": pa.array([["7 rebalances", "skew"], [], None], pa.list_(pa.string())),
            "worst_status_at": pa.array([stamp, None, stamp], pa.timestamp("us", tz="UTC")),
            "change_kind": ["keep", "assignor", "keep"],
        }
    )
    write_deltalake(str(tmp_path / "group_health"), health, partition_by=["date"])
    write_deltalake(str(tmp_path / "recommendations"), pa.table({"group_id": ["g1"]}))
    (tmp_path / "not_a_table").mkdir()
    return Config(warehouse=str(tmp_path))


def spark_csv(spark, config: Config, query: str) -> str:
    from fleet_rebalance.pipeline import sql

    tables = sql.register_views(spark, config)
    out = io.StringIO()
    sql.run_statements(spark, split_statements(query), "csv", 1000, tables, config.warehouse, out)
    return out.getvalue()


def duckdb_csv(config: Config, query: str, fmt: str = "csv", max_rows: int = 1000) -> str:
    from fleet_rebalance.sql import duckdb_engine as sql_duckdb

    out = io.StringIO()
    sql_duckdb.run_statements(config, split_statements(query), fmt, max_rows, out)
    return out.getvalue()


@pytest.mark.spark
@pytest.mark.parametrize("query", readme_queries())
def test_readme_queries_give_the_same_rows_on_both_engines(spark, config, query):
    """Same header, same rows (as a multiset: rows tied under an ORDER BY may come in
    either order) and, where the query orders them by a column it shows, the same
    order of that column. Under a LIMIT, rows tied with the last one may differ: which
    of them make the cut is either engine's choice."""
    expected = list(csv.reader(io.StringIO(spark_csv(spark, config, query))))
    got = list(csv.reader(io.StringIO(duckdb_csv(config, query))))
    assert got[0] == expected[0]
    assert len(got) == len(expected)
    order = re.search(r"ORDER BY (?:\w+\.)?(\w+)", query)
    if not (order and order.group(1) in expected[0]):
        assert sorted(got[1:]) == sorted(expected[1:])
        return
    column = expected[0].index(order.group(1))
    assert [r[column] for r in got[1:]] == [r[column] for r in expected[1:]]
    cut = expected[-1][column] if " LIMIT " in query else None
    assert sorted(r for r in got[1:] if cut is None or r[column] != cut) == sorted(
        r for r in expected[1:] if cut is None or r[column] != cut
    )


@pytest.mark.spark
def test_every_format_prints_the_same_text_on_both_engines(spark, config):
    """Timestamps, arrays, NULLs and numbers print as the Spark path prints them."""
    from fleet_rebalance.pipeline import sql

    query = (
        "SELECT cluster, group_id, topic, partition, worst_status_at, lag_p99 FROM "
        "consumer_status JOIN lag_distribution USING (date, cluster, group_id, topic) "
        "ORDER BY date, cluster, group_id, topic, partition LIMIT 7;"
        "SELECT cluster, group_id, attention, severity FROM group_health "
        "ORDER BY date, cluster, group_id LIMIT 5"
    )
    tables = sql.register_views(spark, config)
    for fmt in ("table", "csv", "json", "markdown"):
        out = io.StringIO()
        statements = split_statements(query)
        sql.run_statements(spark, statements, fmt, 3, tables, config.warehouse, out)
        assert duckdb_csv(config, query, fmt, 3) == out.getvalue(), fmt


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "SELECT count(*) FROM group_health VERSION AS OF 0",
            'DuckDB: Parser Error: syntax error at or near "AS" (time travel (VERSION AS OF, '
            "TIMESTAMP AS OF) is Delta's SQL on Spark; or run it with --engine spark)",
        ),
        (
            "SELECT 1;\nDESCRIBE HISTORY group_health",
            "statement 2 of 2 (line 2): DuckDB: Parser Error: syntax error at or near "
            '"group_health" (DESCRIBE HISTORY and DESCRIBE DETAIL are Delta\'s SQL on Spark; '
            "or run it with --engine spark)",
        ),
        (
            'SELECT cluster FROM group_health WHERE change_kind = "keep"',
            'DuckDB: Binder Error: Referenced column "keep" not found in FROM clause!',
        ),
    ],
)
def test_spark_only_sql_is_one_line_naming_the_difference(small, query, expected):
    with pytest.raises(JobFailed) as caught:
        duckdb_csv(small, query)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(expected)
    assert message.endswith("or run it with --engine spark)")


def test_an_unknown_table_lists_the_tables_there_are(small, tmp_path_factory):
    with pytest.raises(JobFailed) as caught:
        duckdb_csv(small, "SELECT * FROM nope")
    assert str(caught.value) == (
        "DuckDB: Catalog Error: Table with name nope does not exist! "
        "Tables: group_health, recommendations."
    )
    empty = Config(warehouse=str(tmp_path_factory.mktemp("empty")))
    with pytest.raises(JobFailed, match=r"exist! No table has been written under .*empty"):
        duckdb_csv(empty, "SELECT * FROM recommendations")


def test_a_warehouse_under_a_percent_escape_is_refused_in_one_line(small, tmp_path):
    """deltalake opens "wh a%41" as "wh aA" and finds no table there, on a local path as
    under an object key: the engine says so before any statement. A '%' that escapes
    nothing reads as any other character (conftest's clean_nightly lives under both)."""
    for warehouse in (str(tmp_path / "wh a%41"), "s3://bucket/wh a%41"):
        with pytest.raises(JobFailed) as refused:
            duckdb_csv(Config(warehouse=warehouse), "SELECT 1")
        assert str(refused.value) == (
            f"--engine duckdb cannot read the warehouse {warehouse}: the deltalake package "
            "decodes the %-escape in its path once more than the store's names hold; run it "
            "with --engine spark (the default)"
        )
    percent = tmp_path / "at 100%"
    shutil.copytree(small.warehouse, percent)
    query = "SELECT group_id FROM recommendations"
    assert duckdb_csv(Config(warehouse=str(percent)), query) == "group_id\r\ng1\r\n"


def test_only_the_tables_a_statement_names_are_opened(small, monkeypatch):
    from fleet_rebalance.sql import duckdb_engine as sql_duckdb

    opened = []
    original = sql_duckdb.Warehouse._dataset

    def dataset(self, name):
        opened.append(name)
        return original(self, name)

    monkeypatch.setattr(sql_duckdb.Warehouse, "_dataset", dataset)
    text = duckdb_csv(small, "SELECT count(*) AS n FROM recommendations; SELECT 1 AS one")
    assert opened == ["recommendations"]
    assert text == "n\r\n1\r\n\none\r\n1\r\n"  # a blank line between results


def test_duckdb_prints_values_as_the_spark_path_does(small):
    """A UTC timestamp as Spark's collect gives it (naive, this process's local time;
    UTC here), an array as JSON, NULL as NULL; a partition filter; SET and CREATE VIEW
    print nothing, as on Spark."""
    query = (
        "SET threads = 1; CREATE TEMP VIEW h AS SELECT * FROM group_health;"
        "SELECT group_id, severity, attention, worst_status_at FROM h "
        "WHERE date = DATE'2026-11-20' ORDER BY group_id"
    )
    stamp = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC).astimezone().replace(tzinfo=None)
    assert duckdb_csv(small, query, "table").splitlines() == [
        "+----------+----------+--------------------------+---------------------+",
        "| group_id | severity | attention                | worst_status_at     |",
        "+----------+----------+--------------------------+---------------------+",
        f'| g1       | 2        | ["7 rebalances", "skew"] | {stamp} |',
        "| g2       | NULL     | []                       | NULL                |",
        "+----------+----------+--------------------------+---------------------+",
    ]
    assert duckdb_csv(small, query, "json").splitlines()[0] == (
        f'{{"group_id": "g1", "severity": 2, "attention": ["7 rebalances", "skew"], '
        f'"worst_status_at": "{stamp}"}}'
    )


def test_spark_s_left_anti_join_runs_as_duckdb_s_anti_join(small):
    query = (
        "SELECT h.group_id FROM group_health h LEFT ANTI JOIN recommendations r "
        "ON h.group_id = r.group_id WHERE h.change_kind != 'LEFT ANTI JOIN'"
    )
    assert duckdb_csv(small, query) == "group_id\r\ng2\r\n"
