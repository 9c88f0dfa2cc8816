"""The nightly on a real Spark standalone cluster (a master and two 1-core workers on
127.0.0.1), submitted through spark-submit.sh as a user would (the venv packed and
shipped): the same tables as local mode, also when a worker dies mid-replay."""

from __future__ import annotations

import pytest
from cluster_support import assert_same_tables, kill_tree, nightly, standalone_cluster, write_conf

pytestmark = [pytest.mark.spark, pytest.mark.cluster]
DAY = "2026-11-20"


def test_nightly_on_a_standalone_cluster_equals_local_mode(spark, tmp_path, clean_nightly):
    with standalone_cluster(tmp_path) as cluster:
        status, output = nightly(write_conf(tmp_path, "cluster"), DAY, master=cluster.master)
    assert status == 0, output[-6000:]
    assert f"master {cluster.master}" in output  # it really ran there, not in local mode
    assert_same_tables(spark, tmp_path / "cluster", clean_nightly)


def test_a_worker_killed_during_replay_changes_nothing(spark, tmp_path, clean_nightly):
    with standalone_cluster(tmp_path) as cluster:
        status, output = nightly(
            write_conf(tmp_path, "cluster"),
            DAY,
            master=cluster.master,
            at_line="step 2/3 replay for",
            then=lambda _: kill_tree(cluster.workers[0]),
        )
        assert cluster.workers[0].wait(timeout=30) is not None
    assert status == 0, output[-6000:]
    assert "Lost executor" in output  # Spark noticed, and re-ran what it lost
    assert "step 3/3 metrics done" in output
    assert_same_tables(spark, tmp_path / "cluster", clean_nightly)
