"""Which Delta engine writes and reads the tables, and the Spark settings it needs.

`auto` picks Spark's own Delta connector when its classes are on the driver's
classpath (clusters that ship Delta, or `--delta-packages`: jvm/pom.xml's delta set),
else the embedded delta-rs engine, which needs no JVM jars and no network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

DELTA_RS = "delta-rs"
DELTA_SPARK = "delta-spark"
DELTA_EXTENSION_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

# Session properties through which write_table/read_table learn the run's context.
ENGINE_KEY = "spark.fleet_rebalance.storage.engine"
SCHEMA_EVOLUTION_KEY = "spark.fleet_rebalance.storage.schemaEvolution"
JOB_KEY = "spark.fleet_rebalance.job"
RUN_ID_KEY = "spark.fleet_rebalance.runId"
RUN_DATE_KEY = "spark.fleet_rebalance.runDate"
# storage.options as JSON (never credentials: config refuses them) and storage.reader.
STORAGE_OPTIONS_KEY = "spark.fleet_rebalance.storage.options"
READER_KEY = "spark.fleet_rebalance.storage.reader"
READERS = ("auto", "spark", "arrow")


class EngineUnavailableError(RuntimeError):
    """The configured engine cannot run in this Spark installation."""


def choose_engine(configured: str, delta_classes_loadable: bool) -> str:
    if configured == DELTA_RS:
        return DELTA_RS
    if configured == DELTA_SPARK:
        if not delta_classes_loadable:
            raise EngineUnavailableError(
                f"storage.engine is delta-spark but {DELTA_EXTENSION_CLASS} is not on the "
                "classpath: run through ./spark-submit.sh (it adds jvm/pom.xml's delta jars, "
                "fetched with mvn), use a cluster that ships Delta, or set storage.engine: "
                "delta-rs"
            )
        return DELTA_SPARK
    if configured == "auto":
        return DELTA_SPARK if delta_classes_loadable else DELTA_RS
    raise ValueError(
        f"unknown storage engine {configured!r}: expected auto, delta-rs or delta-spark"
    )


def engine_spark_conf(
    engine: str,
    schema_evolution: bool,
    storage_options: Mapping[str, str] | None = None,
    reader: str = "auto",
) -> dict[str, str]:
    """Spark properties the chosen engine needs at session creation."""
    conf = {
        ENGINE_KEY: engine,
        SCHEMA_EVOLUTION_KEY: str(schema_evolution).lower(),
        STORAGE_OPTIONS_KEY: json.dumps(dict(storage_options or {}), sort_keys=True),
        READER_KEY: reader,
        **hadoop_s3a_conf(storage_options or {}),
    }
    if engine == DELTA_SPARK:
        conf["spark.sql.extensions"] = DELTA_EXTENSION_CLASS
        conf["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG_CLASS
        conf["spark.databricks.delta.schema.autoMerge.enabled"] = str(schema_evolution).lower()
    return conf


def hadoop_s3a_conf(options: Mapping[str, str]) -> dict[str, str]:
    """storage.options as hadoop-aws's S3A settings, for a JVM that reads the tables
    itself (delta-spark, or Spark's Parquet reader under delta-rs): both sides must
    reach the same endpoint. Credentials stay with S3A's own provider chain."""
    conf = {}
    endpoint = options.get("AWS_ENDPOINT_URL")
    if endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = endpoint
        # Custom endpoints (MinIO, Ceph, moto) rarely serve virtual-hosted buckets.
        conf["spark.hadoop.fs.s3a.path.style.access"] = "true"
        if endpoint.startswith("http://"):
            conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = "false"
    if options.get("AWS_REGION"):
        conf["spark.hadoop.fs.s3a.endpoint.region"] = options["AWS_REGION"]
    return conf
