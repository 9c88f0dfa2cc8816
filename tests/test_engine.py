import pytest

from fleet_rebalance.config import Config, StorageConfig
from fleet_rebalance.storage.deltaspark.io import delta_spark_write_options, replace_where_predicate
from fleet_rebalance.storage.engine import (
    RunContext,
    choose_engine,
    engine_spark_conf,
)
from fleet_rebalance.storage.errors import EngineUnavailableError


def test_auto_prefers_delta_spark_when_its_classes_load():
    assert choose_engine("auto", True) == "delta-spark"
    assert choose_engine("auto", False) == "delta-rs"
    assert choose_engine("delta-rs", True) == "delta-rs"


def test_delta_spark_without_jars_says_how_to_get_them():
    with pytest.raises(EngineUnavailableError, match=r"jvm/pom.xml's delta jars"):
        choose_engine("delta-spark", False)


def test_delta_spark_session_gets_extension_and_catalog():
    conf = engine_spark_conf("delta-spark", schema_evolution=True)
    assert conf["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    assert conf["spark.sql.catalog.spark_catalog"] == (
        "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    )
    assert conf["spark.databricks.delta.schema.autoMerge.enabled"] == "true"


def test_delta_rs_session_needs_no_delta_classes():
    conf = engine_spark_conf("delta-rs", schema_evolution=False)
    assert "spark.sql.extensions" not in conf
    # The run's settings travel in its RunContext, not as Spark properties.
    assert not [k for k in conf if k.startswith("spark.fleet_rebalance.")]


def test_yaml_spark_properties_win_over_ours():
    from fleet_rebalance.spark.session import session_conf

    config = Config(
        storage=StorageConfig(engine="delta-spark"), spark={"spark.sql.adaptive.enabled": "false"}
    )
    conf = session_conf(config, "delta-spark")
    assert conf["spark.sql.adaptive.enabled"] == "false"
    assert conf["spark.sql.session.timeZone"] == "UTC"
    assert conf["spark.sql.execution.arrow.pyspark.enabled"] == "true"


def test_replace_where_predicate_quotes_values_and_handles_null():
    predicate = replace_where_predicate(
        {"capture_date": ["2026-11-19", "2026-11-20"], "cluster": ["it's", None]}
    )
    assert predicate == (
        "(`capture_date` IN ('2026-11-19', '2026-11-20')) AND "
        "(`cluster` IN ('it\\'s') OR `cluster` IS NULL)"
    )


def test_delta_spark_options_carry_run_context():
    options = delta_spark_write_options(
        {"capture_date": ["2026-11-20"]}, {"job": "ingest", "runId": "r1"}, schema_evolution=False
    )
    assert options == {
        "userMetadata": '{"job": "ingest", "runId": "r1"}',
        "replaceWhere": "(`capture_date` IN ('2026-11-20'))",
    }
    assert delta_spark_write_options(None, {}, True)["mergeSchema"] == "true"


def test_storage_options_reach_the_jvms_s3a_filesystem_too():
    """Spark's own readers (delta-spark, or Spark's Parquet reader under delta-rs) must
    reach the endpoint the Python side uses; credentials stay out of the conf."""
    options = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_REGION": "us-east-1"}
    conf = engine_spark_conf("delta-spark", schema_evolution=False, storage_options=options)
    assert {k: v for k, v in conf.items() if k.startswith("spark.hadoop.")} == {
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
    }
    assert RunContext(storage_options=options).location("s3://b/t").options == options
