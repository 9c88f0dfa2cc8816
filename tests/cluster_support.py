"""Helpers for tests that run the nightly as separate processes: a Spark standalone
cluster on 127.0.0.1 (from pyspark's own distribution), a job conf per warehouse, a
nightly run that can be interrupted at a log line, and whole-warehouse comparison."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark
from chispa import assert_df_equality

from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.storage import read_table

PROJECT = Path(__file__).resolve().parent.parent
SPARK_HOME = Path(pyspark.__file__).parent
ALL_TABLES = [*bronze.TABLES, *silver.TABLES, *gold.TABLES]
# Columns that describe the run itself, not the data.
PER_RUN = {"ingested_files": ["run_id", "ingested_at"]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class(name: str, args: list[str], log: Path, env: dict) -> subprocess.Popen:
    # A session of its own, so teardown can signal the JVM and anything it started.
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), name, *args],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env=env,
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


@contextlib.contextmanager
def standalone_cluster(workdir: Path, workers: int = 2) -> Iterator[Cluster]:
    """A master and `workers` 1-core workers, always torn down (also when a test fails)."""
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("SPARK_CONF_DIR", None)
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
        for i in range(workers):
            (workdir / f"worker-{i}").mkdir()
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
                        str(workdir / f"worker-{i}"),
                        master,
                    ],
                    workdir / f"worker-{i}.log",
                    env,
                )
            )
        _wait_for_workers(ui, workers, workdir)
        yield Cluster(master, processes[1:])
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


def write_conf(tmp_path: Path, name: str) -> Path:
    conf = tmp_path / f"{name}.yaml"
    conf.write_text(
        f"raw_root: {PROJECT / 'data' / 'sample'}\n"
        f"warehouse: {tmp_path / name}\n"
        "spark:\n  spark.sql.shuffle.partitions: 4\n"
    )
    return conf


def nightly(
    conf: Path,
    date: str,
    *,
    master: str = "local[2]",
    at_line: str | None = None,
    then: Callable[[subprocess.Popen], None] | None = None,
    timeout: float = 1500,
) -> tuple[int, str]:
    """./spark-submit.sh nightly as a user runs it; `then(process)` is called once when
    a line of its output contains `at_line`. Returns the exit status and the output."""
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


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL a process started in a session of its own, with everything it started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def assert_same_tables(spark, warehouse: Path, clean: Path) -> None:
    for name in ALL_TABLES:
        drop = PER_RUN.get(name, [])
        got = read_table(spark, str(warehouse / name)).drop(*drop)
        want = read_table(spark, str(clean / name)).drop(*drop)
        assert got.count() == want.count(), name
        assert_df_equality(got, want, ignore_row_order=True, ignore_nullable=True)
