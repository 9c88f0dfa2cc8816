"""What spark-submit.sh runs once the venv is ready: checks and routes flags, starts the job.

Kept in Python so the routing is unit-tested: job flags go to the job's script under
jobs/ (registry.JOBS), Spark's own to pyspark's spark-submit (launch_args.py), which
spark_command.py builds. `--conf FILE` (no `=`) is the job's YAML configuration.

Everything the job would refuse is refused here first (launch_checks.check_launch), in
one line and before the JVM's 10-40 s start: exit 2 for a flag, conf or path that cannot
be used, 1 for a run that would fail (a local raw_root without captures for the date).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from fleet_rebalance.cli.cluster_venv import PACKED_VENV, pack_venv
from fleet_rebalance.cli.driver_stderr import LAUNCHER_PID_ENV, append_on_regular_stderr
from fleet_rebalance.cli.exit_status import FAILED_STATUS, USAGE_STATUS
from fleet_rebalance.cli.job_args import PROJECT_DIR_ENV
from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.cli.launch_args import Launch, conf_file, job_script, split_args
from fleet_rebalance.cli.launch_checks import check_launch
from fleet_rebalance.cli.launcher_help import USAGE
from fleet_rebalance.cli.registry import JOBS, PARSED_JOBS
from fleet_rebalance.cli.spark_command import (
    is_cluster,
    jvm_packages,
    resolve_master,
    resolve_packages,
    spark_submit_command,
    venv_python,
)
from fleet_rebalance.cli.sql_on_duckdb import run_without_spark
from fleet_rebalance.config import ConfigError
from fleet_rebalance.errors import JobFailed, UsageError

DELTA_PACKAGES_GONE = (
    "spark-submit.sh: --delta-packages is no longer needed and is ignored: every run "
    "resolves Delta's connector itself (spark.jars.packages)"
)


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None) -> int:
    """Check the command line, then exec pyspark's spark-submit (or run a Spark-free
    job). Every refusal is one line on stderr: 2 for a command line, conf or path that
    cannot be used, 1 for a run that would fail (no captures for the date)."""
    project = Path(os.environ.get(PROJECT_DIR_ENV, Path.cwd()))
    venv = Path(sys.prefix)
    launch = Launch(job="")
    try:
        launch = split_args(sys.argv[1:] if argv is None else argv)
        if launch.help and not launch.job:
            with contextlib.suppress(BrokenPipeError):  # `--help | head`
                print(USAGE)
            return 0
        if launch.delta_packages:
            print(DELTA_PACKAGES_GONE, file=sys.stderr)
        runner = JOBS[launch.job].runner
        if runner == "pytest":
            return subprocess.call([sys.executable, "-m", "pytest", *launch.job_args], cwd=project)
        script = job_script(project, launch.job)
        if not script.is_file():
            print(
                f"job '{launch.job}' is not available yet ({JOBS[launch.job].summary}); "
                "nothing was run",
                file=sys.stderr,
            )
            return USAGE_STATUS
        if launch.help:
            with contextlib.suppress(BrokenPipeError):
                print(job_parser(launch.job).format_help(), end="")
            return 0
        # The job would refuse these only after the JVM started (10-40 s). Where a
        # cluster-mode driver runs, its conf and paths may exist only there.
        here = launch.deploy_mode != "cluster"
        conf = conf_file(launch.job_args, project)
        launch.job_args = check_launch(
            launch.job,
            launch.job_args,
            read_conf=here or conf.is_file(),
            here=here,
            stdin=sys.stdin if stdin is None else stdin,
        )
        if runner == "python":
            return subprocess.call([sys.executable, str(script), *launch.job_args], cwd=Path.cwd())
        if launch.job == "sql" and job_parser("sql").parse_args(launch.job_args).engine == "duckdb":
            return run_without_spark(launch)
        master = resolve_master(launch, project)
        if is_cluster(master):
            pack_venv(venv, project / PACKED_VENV)
        packages = jvm_packages(launch, project)
        resolve_packages(venv, packages, launch.spark_args)
        command = spark_submit_command(launch, project, venv, master, packages)
    except UsageError as exc:
        help_for = f"{launch.job} --help" if launch.job in PARSED_JOBS else "--help"
        see = f" (see ./spark-submit.sh {help_for})" if exc.see_help else ""
        print(f"spark-submit.sh: {exc}{see}", file=sys.stderr)
        return USAGE_STATUS
    except ConfigError as exc:
        print(f"spark-submit.sh: {exc}", file=sys.stderr)
        return USAGE_STATUS
    except JobFailed as exc:
        print(f"{launch.job}: {exc}", file=sys.stderr)
        return FAILED_STATUS
    local_python = venv_python(venv)
    env = {
        **os.environ,
        "PYSPARK_DRIVER_PYTHON": local_python,
        "PYSPARK_PYTHON": "./environment/bin/python" if is_cluster(master) else local_python,
    }
    if launch.deploy_mode != "cluster":
        # The JVM keeps this pid (spark-submit and spark-class exec); the driver it starts
        # writes its logs to the JVM's stderr, i.e. ours (driver_stderr.own_stderr).
        env[LAUNCHER_PID_ENV] = str(os.getpid())
        append_on_regular_stderr()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
