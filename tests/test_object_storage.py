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
from fleet_rebalance.pipeline.nightly import StepFailed, report, run_steps

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
SAMPLE = PROJECT / "data" / "sample"
DAY = dt.date(2026, 11, 20)
# Raw captures are read through pyarrow, which takes any name; delta-rs misreads a
# table path holding a percent escape (see the refusal test below), a lone % is fine.
RAW_NAME = "raw a#b%41'q\"é"
TABLES_NAME = "wh a#b%'q\"é"


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


def test_a_table_path_delta_rs_would_misread_is_refused_before_anything_is_written(spark, tmp_path):
    config = Config(raw_root=str(SAMPLE), warehouse=str(tmp_path / "wh%41"))
    with pytest.raises(StepFailed, match=r"wh%41/.*percent escape such as %41"):
        run_steps(spark, config, DAY)
    assert not (tmp_path / "whA").exists()
    assert not any((tmp_path / "wh%41").glob("*/_delta_log"))
