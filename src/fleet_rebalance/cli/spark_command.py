"""The spark-submit command a launch runs: the master (flag, conf or local[*]), the
project's Spark properties and log4j config, the jars of jvm/pom.xml it needs, on a
cluster the shipped venv, then Spark's flags and the job's script with its flags."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fleet_rebalance.cli.cluster_venv import PACKED_VENV
from fleet_rebalance.cli.launch_args import Launch, conf_file, job_script
from fleet_rebalance.config import load_config
from fleet_rebalance.errors import JobFailed
from fleet_rebalance.filesystems import S3_SCHEMES, location
from fleet_rebalance.jvm import JvmDependencyError, classpath

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


def is_cluster(master: str) -> bool:
    """Whether the executors run elsewhere (and need the packed venv)."""
    return master.startswith(CLUSTER_PREFIXES)


def spark_submit_command(
    launch: Launch, project: Path, venv: Path, master: str, jars: Sequence[Path] = ()
) -> list[str]:
    """pyspark's spark-submit with its flags, then the job's script and flags."""
    command = [
        str(venv / "bin" / "spark-submit"),
        "--master",
        master,
        "--properties-file",
        str(project / "conf" / "spark-defaults.conf"),
        "--driver-java-options",
        f"-Dlog4j2.configurationFile=file:{project / 'conf' / 'log4j2.properties'}",
    ]
    if launch.deploy_mode:
        command += ["--deploy-mode", launch.deploy_mode]
    if jars:
        command += ["--jars", ",".join(str(j) for j in jars)]
    if is_cluster(master):
        archive = project / PACKED_VENV
        executor_python = "./environment/bin/python"
        driver_python = (
            executor_python if launch.deploy_mode == "cluster" else str(venv / "bin" / "python")
        )
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


def jvm_jars(launch: Launch, project: Path) -> list[Path]:
    """The jars of jvm/pom.xml's sets this run needs: Spark's Delta connector with
    --delta-packages or a conf saying storage.engine: delta-spark, and Hadoop's S3A
    where the conf reads S3 stores with Spark's own reader (storage.reader: spark)."""
    sets = ["delta"] if launch.delta_packages else []
    path = conf_file(launch.job_args, project)
    if path.is_file():
        config = load_config(path)
        if config.storage.engine == "delta-spark" and "delta" not in sets:
            sets.append("delta")
        remote = {location(uri).scheme for uri in (config.raw_root, config.warehouse)}
        if config.storage.reader == "spark" and remote & set(S3_SCHEMES):
            sets.append("s3a")
    try:
        return [jar for name in sets for jar in classpath(project, name)]
    except JvmDependencyError as exc:
        raise JobFailed(str(exc)) from exc
