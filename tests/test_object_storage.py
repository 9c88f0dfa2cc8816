"""The nightly on local paths whose names need care. The session's clean_nightly runs on
captures and into tables in directories named RAW_NAME and TABLES_NAME (conftest), so
every test of the sample's tables (ground truth, causes, recommendations, group health,
faults, maintain) checks the rows such paths give; here, what the paths alone decide.
`sql --engine duckdb` refuses such a warehouse (test_sql_fast). The nightly with
captures and tables on S3 (moto's server) is test_cluster.py's, on a standalone cluster,
against the same reference."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import RAW_NAME, TABLES_NAME

from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline.nightly import report
from fleet_rebalance.storage.versions import delta_tables

pytestmark = pytest.mark.spark
DAY = dt.date(2026, 11, 20)


def test_local_paths_with_spaces_hash_percent_and_quotes_run_the_whole_nightly(
    spark, clean_nightly, sample_nightlies
):
    """The tables a plain path's nightly writes, each under its own name, and the report
    at the path the user gave, printed as given."""
    raw = clean_nightly.parent / RAW_NAME
    assert clean_nightly.name == TABLES_NAME and raw.is_dir()
    plain = location(sample_nightlies.config.warehouse)
    assert delta_tables(location(str(clean_nightly))) == delta_tables(plain)
    lines = report(spark, Config(raw_root=str(raw), warehouse=str(clean_nightly)), DAY)
    assert lines[-1] == f"report: {clean_nightly / 'reports' / '2026-11-20.html'}"
    assert (clean_nightly / "reports" / "2026-11-20.html").is_file()
