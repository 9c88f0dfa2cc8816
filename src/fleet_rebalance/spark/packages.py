"""The JVM packages a run needs, resolved by Spark itself (`spark.jars.packages`, Ivy,
cached under ~/.ivy2.5.2) the way delta-spark documents: Delta's connector under the name
`configure_spark_with_delta_pip` gives it, and Hadoop's S3A (hadoop-aws of pyspark's own
Hadoop) when the warehouse is on S3. No mvn and no jar in the repository. Also the
driver JVM's collector on a local master, which the launcher and in-process sessions
both set before the JVM starts."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from importlib.metadata import version
from pathlib import Path

from fleet_rebalance.filesystems import S3_SCHEMES, location

SCALA = "2.13"  # pyspark 4's only Scala
PACKAGES_KEY = "spark.jars.packages"
IVY_KEY = "spark.jars.ivy"
DEFAULT_IVY = Path.home() / ".ivy2.5.2"  # Spark 4's default spark.jars.ivy
# A local master's driver JVM runs every task too: Java's throughput collector costs it
# less CPU than the default G1 (docs/benchmarks.md, Spark settings). On a cluster the
# executors keep the collector the cluster sets.
LOCAL_DRIVER_GC = "-XX:+UseParallelGC"
_HADOOP_JAR = re.compile(r"^hadoop-client-api-(?P<version>\d[^/]*)\.jar$")


def delta_package() -> str:
    """What configure_spark_with_delta_pip puts in spark.jars.packages: the connector of
    the installed delta-spark, built for the installed pyspark's Spark line."""
    import pyspark

    spark_line = ".".join(pyspark.__version__.split(".")[:2])
    return f"io.delta:delta-spark_{spark_line}_{SCALA}:{version('delta-spark')}"


def hadoop_version() -> str:
    """The Hadoop pyspark ships (its hadoop-client-api jar): hadoop-aws must match it.
    Its jars are under SPARK_HOME where spark-submit runs the driver (whose pyspark may
    be imported from SPARK_HOME's pyspark.zip), else beside the installed pyspark."""
    import pyspark

    homes = [os.environ.get("SPARK_HOME"), str(Path(pyspark.__file__).parent)]
    for home in filter(None, homes):
        for jar in (Path(home) / "jars").glob("hadoop-client-api-*.jar"):
            found = _HADOOP_JAR.match(jar.name)
            if found:
                return found["version"]
    raise RuntimeError("pyspark ships no hadoop-client-api jar: cannot match hadoop-aws to it")


def s3a_package() -> str:
    return f"org.apache.hadoop:hadoop-aws:{hadoop_version()}"


def run_packages(warehouse: str, extra: Iterable[str] = ()) -> list[str]:
    """Delta's connector, hadoop-aws when `warehouse` is on S3, then `extra` (the
    user's own spark.jars.packages), each once."""
    packages = [delta_package()]
    if location(warehouse).scheme in S3_SCHEMES:
        packages.append(s3a_package())
    return merged(packages, extra)


def merged(packages: Sequence[str], extra: Iterable[str]) -> list[str]:
    """`packages` then `extra` (comma-separated lists allowed), without repeats."""
    out = list(packages)
    for value in extra:
        out += [p.strip() for p in value.split(",") if p.strip() and p.strip() not in out]
    return out


def cached(packages: Sequence[str], ivy: Path = DEFAULT_IVY) -> bool:
    """Whether Spark's Ivy cache holds every package's own jar (resolved before): its
    dependencies are retrieved beside it in the same resolution."""
    jars = ivy / "jars"
    for coordinate in packages:
        group, artifact, release = coordinate.split(":")[:3]
        if not (jars / f"{group}_{artifact}-{release}.jar").is_file():
            return False
    return True


def unavailable_line(packages: Sequence[str]) -> str:
    """The one line a run that cannot fetch its jars prints."""
    return (
        f"Spark could not fetch its JVM packages ({', '.join(packages)}) from Maven "
        "Central: give this machine access to it (once: they are cached under "
        f"{DEFAULT_IVY}), or provide the jars yourself with `-- --jars a.jar,b.jar` "
        "(spark-submit) or run on a cluster whose Spark ships Delta (docs/storage.md)"
    )
