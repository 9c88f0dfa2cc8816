"""The launcher's command line split by destination: job flags (and `--conf FILE`, the
job's YAML) for the job's script under jobs/, Spark's own (--master, --deploy-mode,
--packages, --conf key=value, anything after `--`) for pyspark's spark-submit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet_rebalance.cli.job_flags import DEFAULT_CONF
from fleet_rebalance.cli.job_parser import did_you_mean
from fleet_rebalance.cli.registry import JOBS
from fleet_rebalance.errors import UsageError

SPARK_VALUE_FLAGS = ("--master", "--deploy-mode", "--packages")


@dataclass
class Launch:
    """One command line, routed: the job, its flags, Spark's, and the launcher's own."""

    job: str
    job_args: list[str] = field(default_factory=list)
    spark_args: list[str] = field(default_factory=list)
    master: str | None = None
    deploy_mode: str | None = None
    delta_packages: bool = False
    help: bool = False


def split_args(argv: Sequence[str]) -> Launch:
    """`argv` (after ./spark-submit.sh) routed; UsageError for a job or flag that is not
    one, with the closest spelling."""
    argv = list(argv)
    delta_packages = False
    while argv and argv[0] in ("--delta-packages", "--help", "-h"):
        flag = argv.pop(0)
        if flag == "--delta-packages":
            delta_packages = True
        else:
            return Launch(job="", help=True)
    if not argv:
        raise UsageError("no job given", see_help=True)
    job = argv.pop(0)
    if job.startswith("-") and job not in JOBS:
        hint = did_you_mean(job, ["--delta-packages", "--help"])
        if hint:
            raise UsageError(f"unknown flag {job}{hint}", see_help=True)
        raise UsageError(f"{job} before the job: flags go after it (./spark-submit.sh <job> {job})")
    if job not in JOBS:
        raise UsageError(
            f"unknown job {job!r} (jobs: {', '.join(JOBS)}){did_you_mean(job, list(JOBS))}",
            see_help=True,
        )
    launch = Launch(job=job, delta_packages=delta_packages)
    if JOBS[job].flags is None:  # test: everything goes to pytest
        launch.job_args = argv
        return launch
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            launch.spark_args += argv[i + 1 :]
            break
        name, eq, inline = arg.partition("=")
        if name in (*SPARK_VALUE_FLAGS, "--conf"):
            if eq:
                value = inline
            else:
                if i + 1 >= len(argv):
                    raise UsageError(f"{name} needs a value", see_help=True)
                value = argv[i + 1]
                i += 1
            if not value.strip():
                # An unset variable in a scheduler's template; never fall back silently.
                raise UsageError(f"{name} needs a value, found an empty one", see_help=True)
            if name == "--conf" and "=" not in value:
                launch.job_args += ["--conf", value]
            elif name == "--master":
                launch.master = value
            elif name == "--deploy-mode":
                launch.deploy_mode = value
            else:
                launch.spark_args += [name, value]
        elif arg == "--delta-packages":
            launch.delta_packages = True
        else:
            launch.job_args.append(arg)
            if arg in ("-h", "--help"):
                launch.help = True
        i += 1
    return launch


def job_script(project: Path, job: str) -> Path:
    """The job's file under the project's jobs/ (the registry names it)."""
    return project / "jobs" / (JOBS[job].script or f"{job}.py")


def conf_file(job_args: Sequence[str], project: Path) -> Path:
    """The job's YAML: its --conf FILE, else conf/local.yaml here or in the project."""
    for i, arg in enumerate(job_args):
        if arg == "--conf" and i + 1 < len(job_args):
            return Path(job_args[i + 1])
        if arg.startswith("--conf="):
            return Path(arg.split("=", 1)[1])
    here = Path(DEFAULT_CONF)
    return here if here.exists() else project / DEFAULT_CONF
