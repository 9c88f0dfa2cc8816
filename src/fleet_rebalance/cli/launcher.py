"""What spark-submit.sh runs once the venv is ready: checks and routes flags, starts the job.

Kept in Python so the routing is unit-tested: job flags go to the job's script under
jobs/ (registry.JOBS), Spark's
own (--master, --deploy-mode, --packages, --conf key=value, anything after `--`) go to
pyspark's spark-submit. `--conf FILE` (no `=`) is the job's YAML configuration.

Everything the job would refuse is refused here first (launch_checks.check_launch), in
one line and before the JVM's 10-40 s start: exit 2 for a flag, conf or path that cannot
be used, 1 for a run that would fail (a local raw_root without captures for the date).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from fleet_rebalance.cli.driver_stderr import LAUNCHER_PID_ENV, append_on_regular_stderr
from fleet_rebalance.cli.exit_status import FAILED_STATUS, USAGE_STATUS
from fleet_rebalance.cli.job_args import PROJECT_DIR_ENV, job_config
from fleet_rebalance.cli.job_flags import DEFAULT_CONF
from fleet_rebalance.cli.job_parser import did_you_mean, job_parser
from fleet_rebalance.cli.launch_checks import check_launch
from fleet_rebalance.cli.registry import JOBS, PARSED_JOBS
from fleet_rebalance.cli.sql_input import sql_statements
from fleet_rebalance.config import ConfigError, load_config
from fleet_rebalance.errors import JobFailed, UsageError
from fleet_rebalance.filesystems import S3_SCHEMES, location
from fleet_rebalance.jvm import JvmDependencyError, classpath

SPARK_VALUE_FLAGS = ("--master", "--deploy-mode", "--packages")
CLUSTER_PREFIXES = ("yarn", "k8s://", "spark://", "mesos://")
DEFAULT_MASTER = "local[*]"
PACKED_VENV = ".venv.tar.gz"

USAGE = f"""usage: ./spark-submit.sh [--delta-packages] <job> [job flags] [-- spark-submit flags]

jobs:
{chr(10).join(f"  {name:<10} {job.summary}" for name, job in JOBS.items())}

flags understood by every pipeline job (see <job> --help for each job's own):
  --conf FILE          job configuration YAML (default: conf/local.yaml)
  --raw-root URI       raw captures: a directory or s3://, gs://, abfss:// URI
                       (default: the conf's raw_root)
  --warehouse URI      Delta tables: a directory or s3://, gs://, abfss:// URI
                       (default: the conf's warehouse)
  --date YYYY-MM-DD    date to process (default: the conf's default_date; conf/local.yaml
                       says latest, the newest capture date under raw_root; a conf
                       without it means yesterday, UTC)
  --all                every date, oldest first, as a backfill: capture dates under
                       raw_root (ingest, nightly), dates bronze holds (replay, metrics);
                       a date whose rows come out as they are commits nothing
  --from YYYY-MM-DD    backfill from this date (default with --to: the oldest date)
  --to YYYY-MM-DD      backfill up to this date (default with --from: the newest date)
  -v, --verbose        log at DEBUG, and print a failure's traceback (default: one line)
  --log-file FILE      also append the log, with tracebacks, to FILE (default: none)
  --retain-days N      maintain: keep the last N days' versions readable (default: 7)

passed to pyspark's spark-submit:
  --master URL         local[*] (default, or `master` in the conf), yarn, k8s://..., spark://...
  --deploy-mode MODE   client or cluster
  --packages COORDS    extra Maven packages
  --conf KEY=VALUE     a Spark property
  -- ...               everything after `--` verbatim

launcher flags:
  --delta-packages     put Spark's Delta connector on the classpath (jvm/pom.xml's delta
                       set, fetched with mvn on first use) so storage.engine auto uses it;
                       a conf with storage.engine: delta-spark gets it without the flag, and
                       one with storage.reader: spark and s3 stores gets hadoop-aws
  --help               this text

output: results (the nightly summary, SQL rows) on stdout; logs and errors on stderr.
exit status: 0 done; 1 the run failed (one line on stderr: what failed and what to do);
2 a flag, the conf or a path cannot be used (one line on stderr; nothing was run).
"""


@dataclass
class Launch:
    job: str
    job_args: list[str] = field(default_factory=list)
    spark_args: list[str] = field(default_factory=list)
    master: str | None = None
    deploy_mode: str | None = None
    delta_packages: bool = False
    help: bool = False


def split_args(argv: Sequence[str]) -> Launch:
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
    for i, arg in enumerate(job_args):
        if arg == "--conf" and i + 1 < len(job_args):
            return Path(job_args[i + 1])
        if arg.startswith("--conf="):
            return Path(arg.split("=", 1)[1])
    here = Path(DEFAULT_CONF)
    return here if here.exists() else project / DEFAULT_CONF


def resolve_master(launch: Launch, project: Path) -> str:
    if launch.master:
        return launch.master
    path = conf_file(launch.job_args, project)
    if path.is_file():
        return load_config(path).master
    return DEFAULT_MASTER


def is_cluster(master: str) -> bool:
    return master.startswith(CLUSTER_PREFIXES)


def spark_submit_command(
    launch: Launch, project: Path, venv: Path, master: str, jars: Sequence[Path] = ()
) -> list[str]:
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


def link_driver_environment(venv: Path, cwd: Path) -> None:
    """In client mode, make ./environment/bin/python resolve on the driver too.

    Spark runs a Python Data Source's planning (our delta-rs writer's setup) in a Python
    worker on the driver, with the executors' interpreter path; on a cluster that path
    is ./environment/bin/python inside the shipped archive, which the driver's working
    directory does not have. A symlink to this venv there fills the gap.
    """
    link = cwd / "environment"
    if link.is_symlink() and link.resolve() == venv.resolve():
        return
    if link.exists() or link.is_symlink():
        raise UsageError(
            f"{link} exists and is not a link to {venv}: client mode on a cluster needs "
            "./environment for the driver's Python workers; remove it or run from "
            "another directory"
        )
    link.symlink_to(venv, target_is_directory=True)


def pack_venv(venv: Path, archive: Path) -> None:
    """Ship the exact interpreter and packages to executors (Spark's venv-pack recipe)."""
    stamp = venv / ".fleet-installed"
    if archive.exists() and stamp.exists() and archive.stat().st_mtime >= stamp.stat().st_mtime:
        return
    try:
        import venv_pack
    except ImportError as exc:
        raise UsageError(
            "cluster mode needs venv-pack: it is installed with the cluster "
            "extra; remove .venv/.fleet-deps and run again"
        ) from exc
    print(f"packing {venv} into {archive} for the executors", file=sys.stderr)
    venv_pack.pack(prefix=str(venv), output=str(archive), force=True, verbose=False)


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


def run_without_spark(launch: Launch) -> int:
    """sql --engine duckdb, in this process: no spark-submit, no JVM."""
    given = spark_flags_given(launch)
    if given:
        raise UsageError(
            f"{given[0]} is for Spark and sql --engine duckdb runs without it, here; "
            "drop it, or pass --engine spark"
        )
    from fleet_rebalance.cli.run_job import run_job

    try:
        run_job("sql", duckdb_sql, launch.job_args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else FAILED_STATUS
    return 0  # not reached: run_job exits


def duckdb_sql(args: argparse.Namespace) -> int:
    """The sql job on DuckDB (run_job's main: its flags, conf and statements)."""
    from fleet_rebalance.sql.duckdb_engine import run_statements

    statements = sql_statements(args, sys.stdin)
    config = job_config(args, "sql")
    run_statements(config, statements, args.format, args.max_rows)
    return 0


def spark_flags_given(launch: Launch) -> list[str]:
    """The Spark flags on a command line (--master, --deploy-mode, --delta-packages,
    --packages, --conf KEY=VALUE, those after `--`)."""
    given = [
        flag
        for flag, value in (
            ("--master", launch.master),
            ("--deploy-mode", launch.deploy_mode),
            ("--delta-packages", launch.delta_packages),
        )
        if value
    ]
    return given + list(launch.spark_args[:1])


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
            if launch.deploy_mode != "cluster":
                link_driver_environment(venv, Path.cwd())
        command = spark_submit_command(launch, project, venv, master, jvm_jars(launch, project))
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
    local_python = str(venv / "bin" / "python")
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
