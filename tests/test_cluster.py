"""The nightly on a real Spark standalone cluster (a master and two 1-core workers on
127.0.0.1, from pyspark's own distribution), submitted through spark-submit.sh as a
user would (the venv packed and shipped), gives the same tables as local mode."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from chispa import assert_df_equality

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import bronze, gold, silver
from fleet_rebalance.pipeline.nightly import run_steps
from fleet_rebalance.storage import read_table

pytestmark = [pytest.mark.spark, pytest.mark.cluster]
PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)
SPARK_HOME = Path(pyspark.__file__).parent
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


@contextlib.contextmanager
def standalone_cluster(workdir: Path, workers: int = 2) -> Iterator[str]:
    """A master and `workers` 1-core workers; yields the master URL; always torn down."""
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
        yield master
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


def _conf(tmp_path: Path, name: str) -> Path:
    conf = tmp_path / f"{name}.yaml"
    conf.write_text(
        f"raw_root: {PROJECT / 'data' / 'sample'}\n"
        f"warehouse: {tmp_path / name}\n"
        "spark:\n  spark.sql.shuffle.partitions: 4\n"
    )
    return conf


def test_nightly_on_a_standalone_cluster_equals_local_mode(spark, tmp_path):
    with standalone_cluster(tmp_path) as master:
        run = subprocess.run(
            [
                str(PROJECT / "spark-submit.sh"),
                "nightly",
                "--date",
                str(DAY),
                "--conf",
                str(_conf(tmp_path, "cluster")),
                "--master",
                master,
            ],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=1500,
            check=False,
        )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    assert f"master {master}" in output  # it really ran there, not in local mode
    local = Config(raw_root=str(PROJECT / "data" / "sample"), warehouse=str(tmp_path / "local"))
    run_steps(spark, local, DAY)
    for name in {**bronze.TABLES, **silver.TABLES, **gold.TABLES}:
        drop = PER_RUN.get(name, [])
        on_cluster = read_table(spark, str(tmp_path / "cluster" / name)).drop(*drop)
        in_local = read_table(spark, local.table_path(name)).drop(*drop)
        assert on_cluster.count() == in_local.count(), name
        assert_df_equality(on_cluster, in_local, ignore_row_order=True, ignore_nullable=True)
