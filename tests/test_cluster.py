"""The nightly on a real Spark standalone cluster (a master and two 1-core workers on
127.0.0.1), submitted through spark-submit.sh as a user would (the venv packed and
shipped): with captures and tables on S3, the workers sharing no disk and holding no
credentials, the same tables as local mode, even when a worker dies mid-replay. Every
table is written and read by delta-spark through Hadoop's S3A (hadoop-aws, which
spark-submit.sh adds for an S3 warehouse)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cluster_support import (
    ALL_TABLES,
    AWS_NO_FALLBACK,
    assert_same_tables,
    kill_tree,
    nightly,
    processes_under,
    standalone_cluster,
    upload_tree,
    write_conf,
)

pytestmark = [pytest.mark.spark, pytest.mark.cluster, pytest.mark.slow, pytest.mark.full]
DAY = "2026-11-20"
# Not test_object_storage's "fleet": both may run in one session, on one moto server.
BUCKET = "fleet-cluster"


def test_nightly_on_a_cluster_with_captures_and_tables_on_s3_equals_local_mode(
    spark, s3, tmp_path, small_nightly
):
    """Workers in empty directories with no AWS_* variable: the executors reach S3 only
    with the storage options of the conf and the credentials the driver passes them.
    (moto answers anonymous requests too, so the executors' environment is checked.)
    One worker is killed mid-replay: Spark re-runs what it lost on the other, and the
    tables are still the local run's (one cluster nightly checks both, for CI's time).
    The fleet is small_fleet_nightly's: every step and table of the nightly on three
    clusters' captures, at a fraction of the sample's files (each an S3 object here)."""
    raw, clean = small_nightly
    upload_tree(s3, raw, BUCKET, "raw")
    conf = write_conf(
        tmp_path,
        "s3",
        raw_root=f"s3://{BUCKET}/raw",
        warehouse=f"s3://{BUCKET}/wh",
        options=s3.storage_options,
    )
    credentials = {k: s3.env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    executors, killed = [], []
    with standalone_cluster(tmp_path, aws_env=False) as cluster:
        workers = {w.pid: w for w in processes_under([tmp_path])}
        for worker in cluster.workers:  # the JVMs themselves (spark-class execs java)
            aws = {k for k in workers[worker.pid].env if k.upper().startswith("AWS_")}
            assert aws == set(AWS_NO_FALLBACK)  # no credentials, endpoint or region
            cwd = workers[worker.pid].cwd
            assert cwd.name.endswith("-cwd") and not any(cwd.iterdir())
        # Only the submitting process has the credentials (and the session's AWS env).
        status, output = nightly(
            conf,
            DAY,
            master=cluster.master,
            env={**os.environ, **s3.env},
            at_line="step 2/3 replay for",
            then=lambda _: (
                executors.extend(processes_under(cluster.work_dirs)),
                kill_tree(cluster.workers[0]),
                killed.append(cluster.workers[0]),
            ),
        )
        dead = [worker.wait(timeout=30) is not None for worker in killed]
    assert status == 0, output[-6000:]
    assert dead == [True], output[-6000:]
    assert "Lost executor" in output  # Spark noticed, and re-ran what it lost
    assert "step 3/3 metrics done" in output
    assert f"master {cluster.master}" in output
    assert f"report: s3://{BUCKET}/wh/reports/{DAY}.html" in output
    # Each worker ran an executor (a JVM and its Python workers, in the executor's
    # directory), and each of those had the driver's credentials and no other AWS_*.
    for work_dir in cluster.work_dirs:
        here = [p for p in executors if p.cwd.is_relative_to(work_dir.resolve())]
        assert any(Path(p.command[0]).name == "java" for p in here), work_dir
        assert any("python" in Path(p.command[0]).name for p in here), work_dir
        for p in here:
            aws = {k: v for k, v in p.env.items() if k.upper().startswith("AWS_")}
            assert aws == {**AWS_NO_FALLBACK, **credentials}, (p.command[:2], sorted(aws))
        logs = [p.read_text(errors="replace") for p in work_dir.glob("app-*/*/stderr")]
        assert any("Finished task" in log for log in logs), work_dir
    for i in range(len(cluster.workers)):
        assert not any((tmp_path / f"worker-{i}-cwd").iterdir())
    keys = s3.list_keys(BUCKET, "wh/")
    for name in ALL_TABLES:
        assert any(k.startswith(f"wh/{name}/_delta_log/") for k in keys), name
    assert_same_tables(spark, f"s3://{BUCKET}/wh", clean, s3.storage_options)
