"""The nightly where the data lives: raw captures and tables on S3 (moto's server, a
real S3 API on 127.0.0.1), and local paths whose names need care. Each run must give
exactly the tables of the plain local run (clean_nightly)."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from cluster_support import assert_same_tables, storage_options, upload_sample

from fleet_rebalance.config import Config, StorageConfig
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


def test_the_nightly_on_s3_gives_the_local_tables(spark, s3, clean_nightly):
    upload_sample(s3, "fleet", "raw")
    config = Config(
        raw_root="s3://fleet/raw",
        warehouse="s3://fleet/wh",
        storage=StorageConfig(engine="delta-rs", options=s3.storage_options),
    )
    with storage_options(spark, s3.storage_options):
        run_steps(spark, config, DAY)
        lines = report(spark, config, DAY)
    assert_same_tables(spark, "s3://fleet/wh", clean_nightly, s3.storage_options)
    assert lines[-1] == "report: s3://fleet/wh/reports/2026-11-20.html"
    keys = s3.list_keys("fleet", "wh/")
    assert "wh/reports/2026-11-20.html" in keys
    assert any(k.startswith("wh/offsets/_delta_log/") for k in keys)
    assert not any("_fleet_staging" in k or "_fleet_aborted" in k for k in keys)
