"""The spark-submit command a launch runs: the master (flag, conf or local[*]), the
project's Spark properties and log4j config, the JVM packages Spark resolves itself
(Delta's connector, hadoop-aws for S3), on a cluster the shipped venv, then Spark's
flags and the job's script with its flags."""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fleet_rebalance.cli.cluster_venv import PACKED_VENV
from fleet_rebalance.cli.launch_args import Launch, conf_file, job_script
from fleet_rebalance.config import load_config
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.spark.packages import (
    DEFAULT_IVY,
    IVY_KEY,
    LOCAL_DRIVER_GC,
    PACKAGES_KEY,
    cached,
    merged,
    run_packages,
    unavailable_line,
)

CLUSTER_PREFIXES = ("yarn", "k8s://", "spark://", "mesos://")
DEFAULT_MASTER = "local[*]"


def resolve_master(launch: Launch, project: Path) -> str:
    """--master, else the conf's `master`, else local[*]."""
    if launch.master:
        return launch.master
    path = conf_file(launch.job_args, project)
    if path.is_file():
        return load_config(path).master
    return DEFAULT_MASTER


def venv_python(venv: Path) -> str:
    """The venv's own interpreter: the driver's, and pyspark's scripts' (which would
    otherwise ask python3 on PATH)."""
    return str(venv / "bin" / "python")


def is_cluster(master: str) -> bool:
    """Whether the executors run elsewhere (and need the packed venv)."""
    return master.startswith(CLUSTER_PREFIXES)


def spark_submit_command(
    launch: Launch, project: Path, venv: Path, master: str, packages: Sequence[str] = ()
) -> list[str]:
    """pyspark's spark-submit with its flags, then the job's script and flags."""
    java_options = [f"-Dlog4j2.configurationFile=file:{project / 'conf' / 'log4j2.properties'}"]
    if master.startswith("local"):
        java_options.append(LOCAL_DRIVER_GC)
    command = [
        str(venv / "bin" / "spark-submit"),
        "--master",
        master,
        "--properties-file",
        str(project / "conf" / "spark-defaults.conf"),
        "--driver-java-options",
        " ".join(java_options),
    ]
    if launch.deploy_mode:
        command += ["--deploy-mode", launch.deploy_mode]
    if packages:
        command += ["--packages", ",".join(packages)]
    if is_cluster(master):
        archive = project / PACKED_VENV
        executor_python = "./environment/bin/python"
        driver_python = executor_python if launch.deploy_mode == "cluster" else venv_python(venv)
        command += [
            "--archives",
            f"{archive}#environment",
            "--conf",
            f"spark.pyspark.python={executor_python}",
            "--conf",
            f"spark.pyspark.driver.python={driver_python}",
        ]
    command += launch.spark_args
    command += [str(job_script(project, launch.job)), *launch.job_args]
    return command


def jvm_packages(launch: Launch, project: Path) -> list[str]:
    """The packages this run resolves: Delta's connector (unless the run's own --jars
    bring a delta-spark jar), hadoop-aws when the conf's warehouse is on S3, and the
    user's --packages. The user's --packages leave the Spark flags: spark-submit keeps
    only the last --packages."""
    path = conf_file(launch.job_args, project)
    warehouse = load_config(path).warehouse if path.is_file() else ""
    theirs = _take_packages(launch.spark_args)
    if _brings_delta(launch.spark_args):
        return theirs
    return run_packages(warehouse, theirs)


def resolve_packages(venv: Path, packages: Sequence[str], spark_args: Sequence[str]) -> None:
    """Fetch `packages` into Spark's Ivy cache once, before the job's JVM starts, so
    a machine that cannot reach Maven Central gets one line (JobFailed) instead of
    Ivy's stack trace: spark-submit resolves them (with the run's own spark.jars.ivy*
    settings) and runs an empty Python script. pyspark's scripts find Spark with the
    driver's interpreter, python3 on PATH unless told: outside an activated venv that
    one has no pyspark."""
    ivy_conf = _ivy_conf(spark_args)
    ivy = next((v.split("=", 1)[1] for v in ivy_conf if v.startswith(f"{IVY_KEY}=")), None)
    if not packages or cached(packages, Path(ivy) if ivy else DEFAULT_IVY):
        return
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "resolve.py"
        script.write_text("")
        command = [str(venv / "bin" / "spark-submit"), "--packages", ",".join(packages)]
        command += [arg for value in ivy_conf for arg in ("--conf", value)]
        env = {**os.environ, "PYSPARK_DRIVER_PYTHON": venv_python(venv)}
        done = subprocess.run([*command, str(script)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise JobFailed(unavailable_line(packages))


def _ivy_conf(spark_args: Sequence[str]) -> list[str]:
    """The run's `--conf spark.jars.ivy...=value` settings (the cache, ivySettings)."""
    return [
        value
        for flag, value in itertools.pairwise(spark_args)
        if flag == "--conf" and value.startswith(f"{IVY_KEY}")
    ]


def _take_packages(spark_args: list[str]) -> list[str]:
    """Remove the user's --packages (and --conf spark.jars.packages=) from `spark_args`,
    returning their values."""
    found: list[str] = []
    kept: list[str] = []
    i = 0
    while i < len(spark_args):
        arg = spark_args[i]
        value = spark_args[i + 1] if i + 1 < len(spark_args) else ""
        if arg == "--packages" or (arg == "--conf" and value.startswith(f"{PACKAGES_KEY}=")):
            found.append(value.removeprefix(f"{PACKAGES_KEY}="))
            i += 2
        else:
            kept.append(arg)
            i += 1
    spark_args[:] = kept
    return merged([], found)


def _brings_delta(spark_args: Sequence[str]) -> bool:
    """Whether the user's own --jars (or spark.jars) name a delta-spark jar."""
    jars = [v for k, v in itertools.pairwise(spark_args) if k == "--jars"]
    jars += [v.split("=", 1)[1] for v in spark_args if v.startswith("spark.jars=")]
    return any("delta-spark" in Path(j).name for value in jars for j in value.split(","))
