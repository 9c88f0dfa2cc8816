"""A table's location as the JVM's Hadoop filesystems take it.

Apache Hadoop maps no filesystem to `s3://` (EMR's EMRFS does); its S3 filesystem is
S3A, `s3a://`. So an s3:// location goes to the JVM as s3a:// unless this JVM has its own
s3 filesystem. Local paths go as they are: a file: URI would be percent-decoded by
nobody, and a directory named `a b` or `%41` must stay itself.
"""

from __future__ import annotations

from typing import Literal, overload

from pyspark.sql import SparkSession

from fleet_rebalance.filesystems import S3_SCHEMES, Location


@overload
def jvm_uri(spark: SparkSession, table_loc: Location, *, require: Literal[True] = True) -> str: ...


@overload
def jvm_uri(spark: SparkSession, table_loc: Location, *, require: bool) -> str | None: ...


def jvm_uri(spark: SparkSession, table_loc: Location, *, require: bool = True) -> str | None:
    """The URI Spark's readers and writers take for `table_loc`; None where the JVM has
    no filesystem for it (only when not `require`d: a caller with another way to read)."""
    if table_loc.is_local:
        return table_loc.uri
    scheme = table_loc.scheme
    rest = table_loc.uri.split("://", 1)[1]
    candidates = [scheme] + (["s3a"] if scheme in S3_SCHEMES else [])
    for candidate in candidates:
        if jvm_has_filesystem(spark, candidate):
            return f"{candidate}://{rest}"
    if require:
        return f"{candidates[-1]}://{rest}"  # the JVM's own error names what is missing
    return None


def jvm_has_filesystem(spark: SparkSession, scheme: str) -> bool:
    jvm = spark.sparkContext._jvm
    assert jvm is not None, "a driver-side session has a JVM"
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
    except Exception:
        return False
    return True
