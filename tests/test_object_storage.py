"""The nightly on local paths whose names need care: it must give exactly the tables of
the plain local run (clean_nightly). The nightly with captures and tables on S3 (moto's
server) is test_cluster.py's, on a standalone cluster, against the same reference."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from cluster_support import assert_same_tables

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline.nightly import report, run_steps

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample"
DAY = dt.date(2026, 11, 20)
# Raw captures are read through pyarrow, tables through Hadoop's filesystems: a percent
# escape in a name (%41) must stay three characters for both.
RAW_NAME = "raw a#b%41'q\"é"
TABLES_NAME = "wh a#b%41%'q\"é"


def test_local_paths_with_spaces_hash_percent_and_quotes_run_the_whole_nightly(
    spark, tmp_path, clean_nightly
):
    raw, tables = tmp_path / RAW_NAME, tmp_path / TABLES_NAME
    shutil.copytree(SAMPLE, raw)
    config = Config(raw_root=str(raw), warehouse=str(tables))
    run_steps(spark, config, DAY)
    lines = report(spark, config, DAY)
    assert lines[-1] == f"report: {tables / 'reports' / '2026-11-20.html'}"
    assert (tables / "reports" / "2026-11-20.html").is_file()
    assert_same_tables(spark, tables, clean_nightly)
