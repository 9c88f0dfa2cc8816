"""Helpers for tests that run the nightly as separate processes: a Spark standalone
cluster on 127.0.0.1 (from pyspark's own distribution), a job conf per warehouse (local
or on an object store), a nightly run that can be interrupted at a log line, and
whole-warehouse comparison (local or remote tables)."""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pyspark.sql.functions as F
from chispa import assert_df_equality
from pyspark.sql.types import MapType

from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.storage import read_table
from fleet_rebalance.storage.context import changed_context

PROJECT = Path(__file__).resolve().parent.parent
SPARK_HOME = Path(pyspark.__file__).parent
ALL_TABLES = [*bronze.TABLES, *silver.TABLES, *gold.TABLES]
# Columns that describe the run itself, not the data.
PER_RUN = {"ingested_files": ["run_id", "ingested_at"]}
# What keeps an AWS SDK without credentials from looking for them anywhere but the
# environment (config files, the instance metadata service): not credentials themselves.
AWS_NO_FALLBACK = {
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class(
    name: str, args: list[str], log: Path, env: dict, cwd: Path | None = None
) -> subprocess.Popen:
    # A session of its own, so teardown can signal the JVM and anything it started.
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), name, *args],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )


def _stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for p in processes:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


@dataclass
class Cluster:
    master: str
    workers: list[subprocess.Popen]
    # Each worker's --work-dir: one directory per application, with each executor's
    # stdout and stderr.
    work_dirs: list[Path]


def without_aws(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with no AWS_* variable (credentials, profile, endpoint, region) but the
    ones that stop the AWS SDK from looking further: whatever an executor started from
    it knows of a store must come from the driver."""
    return {
        **{k: v for k, v in env.items() if not k.upper().startswith("AWS_")},
        **AWS_NO_FALLBACK,
    }


@contextlib.contextmanager
def standalone_cluster(
    workdir: Path, workers: int = 2, *, aws_env: bool = True
) -> Iterator[Cluster]:
    """A master and `workers` 1-core workers, always torn down (also when a test fails).

    Each worker runs in an empty directory of its own, so neither it nor its executors
    find anything in the project's directory by accident. With aws_env=False the workers
    (and so their executors) start with no AWS_* variables: the executors can reach S3
    only with what the driver gives them.
    """
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("SPARK_CONF_DIR", None)
    worker_env = env if aws_env else without_aws(env)
    work_dirs = [workdir / f"worker-{i}" for i in range(workers)]
    port, ui = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    processes: list[subprocess.Popen] = []
    try:
        processes.append(
            _spark_class(
                "org.apache.spark.deploy.master.Master",
                ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
                workdir / "master.log",
                env,
            )
        )
        for i, work_dir in enumerate(work_dirs):
            work_dir.mkdir()
            cwd = workdir / f"worker-{i}-cwd"
            cwd.mkdir()
            processes.append(
                _spark_class(
                    "org.apache.spark.deploy.worker.Worker",
                    [
                        "--host",
                        "127.0.0.1",
                        "--cores",
                        "1",
                        "--memory",
                        "3g",
                        "--webui-port",
                        str(_free_port()),
                        "--work-dir",
                        str(work_dir),
                        master,
                    ],
                    workdir / f"worker-{i}.log",
                    worker_env,
                    cwd,
                )
            )
        _wait_for_workers(ui, workers, workdir)
        yield Cluster(master, processes[1:], work_dirs)
    finally:
        _stop(processes)


def _wait_for_workers(ui: int, workers: int, workdir: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with (
            contextlib.suppress(OSError, ValueError),
            urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as r,
        ):
            if json.load(r).get("aliveworkers", 0) >= workers:
                return
        time.sleep(1)
    logs = "\n".join(p.read_text()[-2000:] for p in sorted(workdir.glob("*.log")))
    raise RuntimeError(f"standalone cluster did not come up in {timeout:.0f}s:\n{logs}")


def write_conf(
    tmp_path: Path,
    name: str,
    *,
    raw_root: str | None = None,
    warehouse: str | None = None,
    options: Mapping[str, str] | None = None,
) -> Path:
    """tmp_path/<name>.yaml: data/sample into tmp_path/<name> unless told otherwise;
    `options` are storage.options. Values are quoted as JSON, which YAML reads back as
    the same strings."""
    raw_root = raw_root or str(PROJECT / "data" / "sample")
    warehouse = warehouse or str(tmp_path / name)
    lines = [f"raw_root: {json.dumps(raw_root)}", f"warehouse: {json.dumps(warehouse)}"]
    if options is not None:
        lines += ["storage:", "  options:"]
        lines += [f"    {k}: {json.dumps(str(v))}" for k, v in options.items()]
    lines += ["spark:", "  spark.sql.shuffle.partitions: 4"]
    conf = tmp_path / f"{name}.yaml"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def nightly(
    conf: Path,
    date: str,
    *,
    master: str = "local[2]",
    at_line: str | None = None,
    then: Callable[[subprocess.Popen], None] | None = None,
    timeout: float = 1500,
    env: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """./spark-submit.sh nightly as a user runs it (in `env`, default this process's);
    `then(process)` is called once when a line of its output contains `at_line`.
    Returns the exit status and the output."""
    process = subprocess.Popen(
        [
            str(PROJECT / "spark-submit.sh"),
            "nightly",
            "--date",
            date,
            "--conf",
            str(conf),
            "--master",
            master,
        ],
        cwd=PROJECT,
        env=None if env is None else dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        for line in process.stdout:
            lines.append(line)
            if at_line and then and at_line in line:
                then(process)
                at_line = None
            if time.monotonic() > deadline:
                raise TimeoutError(f"nightly still running after {timeout:.0f}s")
        return process.wait(timeout=60), "".join(lines)
    finally:
        if process.poll() is None:
            _stop([process])


@dataclass(frozen=True)
class Process:
    pid: int
    command: list[str]
    cwd: Path
    env: dict[str, str]


def processes_under(directories: list[Path]) -> list[Process]:
    """This user's live processes whose working directory is in one of `directories`
    (Linux /proc): for a worker's work dir, its executors' JVMs and their Python
    daemons and workers, whose environment is what an executor really got."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            if not any(cwd.is_relative_to(d.resolve()) for d in directories):
                continue
            command = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            environ = (entry / "environ").read_bytes().decode(errors="replace").split("\0")
        except OSError:  # gone meanwhile, or not ours
            continue
        env = dict(item.split("=", 1) for item in environ if "=" in item)
        found.append(Process(int(entry.name), [c for c in command if c], cwd, env))
    return found


def upload_tree(s3, root: Path, bucket: str, prefix: str) -> None:
    """`root` into s3://bucket/prefix (a new bucket) on the moto server `s3`."""
    import pyarrow.fs as pafs

    s3.create_bucket(bucket)
    pafs.copy_files(str(root), f"{bucket}/{prefix}", destination_filesystem=s3.filesystem())


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL a process started in a session of its own, with everything it started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def storage_options(spark, options: Mapping[str, str]) -> Iterator[None]:
    """The session's storage.options, as build_session takes them from the conf."""
    with changed_context(spark, storage_options=dict(options)):
        yield


def held_until(started: Path, go: Path, wait_s: float = 120) -> Callable:
    """A Python UDF (int -> the same int) that marks `started` and holds its task until
    `go` exists: a write through it has begun its Delta transaction and cannot commit
    yet, which is how the race tests force a race."""

    @F.udf("int")
    def held(value: int) -> int:
        started.touch()
        deadline = time.monotonic() + wait_s
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return value

    return held


def wait_for(path: Path, wait_s: float = 120) -> None:
    deadline = time.monotonic() + wait_s
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), f"{path.name} never appeared"


def assert_same_tables(
    spark,
    warehouse: Path | str,
    clean: Path,
    options: Mapping[str, str] | None = None,
    tables: Iterable[str] = ALL_TABLES,
) -> None:
    """Every table (of `tables`) of `warehouse` (a local path, or a URI such as
    s3://bucket/wh read with the storage `options`) equals the one in `clean`, but for
    per-run columns."""
    with storage_options(spark, options) if options else contextlib.nullcontext():
        for name in tables:
            drop = PER_RUN.get(name, [])
            got = comparable(read_table(spark, posixpath.join(str(warehouse), name)).drop(*drop))
            want = comparable(read_table(spark, str(clean / name)).drop(*drop))
            assert got.count() == want.count(), name
            assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)


def comparable(frame):
    """frame with each map column as its entries sorted by key: Spark cannot sort or hash
    a map (group_health.rebalances_by_cause), which an order-free comparison needs."""
    return frame.select(
        *[
            F.array_sort(F.map_entries(f.name)).alias(f.name)
            if isinstance(f.dataType, MapType)
            else F.col(f.name)
            for f in frame.schema.fields
        ]
    )
