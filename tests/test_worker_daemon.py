"""The worker daemon drops SPARK_HOME's pyspark.zip and jars only when they belong to
the pyspark installed on the same path."""

import importlib.util
import sys
from pathlib import Path

import pyspark
import pytest

from fleet_rebalance.spark.worker_daemon import same_installation_entries


def _pyspark(site: Path) -> Path:
    package = site / "pyspark"
    (package / "python" / "lib").mkdir(parents=True)
    (package / "jars").mkdir()
    (package / "__init__.py").write_text("")
    for name in ("python/lib/pyspark.zip", "python/lib/py4j-0.10.9.9-src.zip", "jars/core.jar"):
        (package / name).write_bytes(b"")
    return package


def test_pip_installations_zip_and_jars_are_dropped_and_py4j_kept(tmp_path):
    package = _pyspark(tmp_path / "site")
    zips = [
        str(package / "python/lib/pyspark.zip"),
        str(package / "python/lib/py4j-0.10.9.9-src.zip"),
    ]
    path = [*zips, str(package / "jars/core.jar"), str(tmp_path / "site")]
    assert same_installation_entries(path) == [zips[0], str(package / "jars/core.jar")]


def test_another_spark_home_is_left_alone(tmp_path):
    _pyspark(tmp_path / "site")
    other = _pyspark(tmp_path / "opt")  # a cluster's SPARK_HOME, another copy
    path = [str(other / "python/lib/pyspark.zip"), str(other / "jars/core.jar")]
    assert same_installation_entries([*path, str(tmp_path / "site")]) == []


def test_without_an_installed_pyspark_nothing_is_dropped(tmp_path):
    package = _pyspark(tmp_path / "site")
    path = [str(package / "python/lib/pyspark.zip"), str(package / "jars/core.jar")]
    assert same_installation_entries(path) == []


@pytest.mark.spark
def test_tasks_import_the_installed_pyspark(spark):
    def where(_):
        yield (
            importlib.util.find_spec("pyspark").origin,
            [
                key
                for key, finder in sys.path_importer_cache.items()
                if type(finder).__name__ == "zipimporter" and "py4j" not in key
            ],
        )

    rows = spark.sparkContext.parallelize(range(2), 2).mapPartitions(where).collect()
    assert rows == [(pyspark.__file__, [])] * 2
