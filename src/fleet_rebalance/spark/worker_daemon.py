"""Spark's Python daemon (spark.python.daemon.module), importing pyspark from the
installed package instead of SPARK_HOME's copies when both are one installation (pip's
pyspark: SPARK_HOME is the package directory).

Why: Spark puts SPARK_HOME/python/lib/pyspark.zip and the spark-core jar first on every
Python worker's path. The zip holds no bytecode, so each daemon compiles pyspark again
(0.6 s a process here), and every task calls importlib.invalidate_caches(), which on
Python 3.11 re-reads the central directory of each zip or jar path entry imported
through: 40-70 ms a task, for the jar's thousands of classes. A separate Spark
installation (a cluster's SPARK_HOME) is left as it is.
"""

from __future__ import annotations

import importlib.machinery
import runpy
import sys
from pathlib import Path


def same_installation_entries(path: list[str]) -> list[str]:
    """Entries of `path` inside the pyspark package that the rest of `path` imports:
    its python/lib/pyspark.zip and its jars (py4j's zip stays: small, and needed)."""
    candidates = [p for p in path if Path(p).name == "pyspark.zip" or p.endswith(".jar")]
    rest = [p for p in path if p not in candidates]
    spec = importlib.machinery.PathFinder.find_spec("pyspark", rest)
    if not candidates or spec is None or spec.origin is None:
        return []
    package = Path(spec.origin).resolve().parent
    zip_file, jars = package / "python/lib/pyspark.zip", package / "jars"
    resolved = {p: Path(p).resolve() for p in candidates}
    return [p for p, where in resolved.items() if where == zip_file or where.parent == jars]


def main() -> None:
    drop = same_installation_entries(sys.path)
    sys.path[:] = [p for p in sys.path if p not in drop]
    # Finding this module already opened them; invalidate_caches walks this cache.
    for key in [k for k in sys.path_importer_cache if k.startswith(tuple(drop))]:
        del sys.path_importer_cache[key]
    # pyspark.daemon reads the worker module (data source workers) from sys.argv[1].
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
