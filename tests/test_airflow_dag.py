"""The Airflow DAGs, for real: apache-airflow in its own virtualenv (Airflow's pins clash
with the job's), a DagBag import check, the structure of the nightly and the weekly
maintain DAG, and `airflow dags test` running the nightly on one cluster of data/sample.

The virtualenv is .venv-airflow in the checkout, built on first use (about a minute
from PyPI) and reused while AIRFLOW_VERSION is unchanged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
AIRFLOW_VERSION = "3.1.8"
DAG_FILE = PROJECT / "jobs" / "airflow" / "fleet_rebalance_dag.py"
pytestmark = pytest.mark.airflow


@pytest.fixture(scope="module")
def airflow_venv() -> Path:
    venv = Path(os.environ.get("FLEET_REBALANCE_AIRFLOW_VENV", PROJECT / ".venv-airflow"))
    stamp = venv / "fleet_rebalance.stamp"
    if not (stamp.is_file() and stamp.read_text() == AIRFLOW_VERSION):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", f"apache-airflow=={AIRFLOW_VERSION}"],
            check=True,
        )
        stamp.write_text(AIRFLOW_VERSION)
    return venv


@pytest.fixture(scope="module")
def airflow_env(airflow_venv, tmp_path_factory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("airflow-home")
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAG_FILE.parent),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "PATH": f"{airflow_venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env


def _airflow_python(venv: Path, code: str, env: dict[str, str]) -> dict:
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def dag_shapes(airflow_venv, airflow_env) -> dict:
    """Both DAGs as a DagBag loads them, without FLEET_REBALANCE_POOL and with it (one
    interpreter: a DagBag parses the file anew)."""
    return _airflow_python(
        airflow_venv,
        f"""
        import json, os
        from airflow.models.dagbag import DagBag

        def shape(dag, task_id):
            task = dag.get_task(task_id)
            return {{
                "tasks": [t.task_id for t in dag.tasks],
                "timetable": dag.timetable.summary,
                "interval": type(dag.timetable).__name__,
                "catchup": dag.catchup,
                "max_active_runs": dag.max_active_runs,
                "retries": task.retries,
                "timeout_s": task.execution_timeout.total_seconds(),
                "command": task.bash_command,
                "pool": task.pool,
            }}

        def load():
            bag = DagBag(dag_folder={str(DAG_FILE.parent)!r}, include_examples=False)
            return {{
                "errors": {{k: str(v) for k, v in bag.import_errors.items()}},
                "dags": sorted(bag.dag_ids),
                "nightly": shape(bag.dags["fleet_rebalance_nightly"], "nightly"),
                "maintain": shape(bag.dags["fleet_rebalance_maintain"], "maintain"),
            }}

        os.environ.pop("FLEET_REBALANCE_POOL", None)
        plain = load()
        os.environ["FLEET_REBALANCE_POOL"] = "fleet_rebalance"
        print(json.dumps({{"plain": plain, "pooled": load()}}))
        """,
        airflow_env,
    )


def test_dagbag_imports_the_dag_without_errors(dag_shapes):
    got = dag_shapes["plain"]
    assert got["errors"] == {}
    assert got["dags"] == ["fleet_rebalance_maintain", "fleet_rebalance_nightly"]
    nightly = got["nightly"]
    assert nightly["tasks"] == ["nightly"]
    assert (nightly["interval"], nightly["timetable"]) == ("CronDataIntervalTimetable", "0 2 * * *")
    assert nightly["catchup"] is True and nightly["max_active_runs"] == 1
    assert nightly["retries"] == 2 and nightly["timeout_s"] == 3 * 3600
    assert './spark-submit.sh nightly --date "{{ ds }}"' in nightly["command"]


def test_maintain_runs_weekly_after_the_nightlys_worst_case(dag_shapes):
    """Sunday 14:00 UTC: the nightly starts at 02:00 and three 3-hour tries ten minutes
    apart end by 11:20. No catchup (one run does what is due), one run at a time."""
    maintain = dag_shapes["plain"]["maintain"]
    assert maintain["tasks"] == ["maintain"]
    assert (maintain["interval"], maintain["timetable"]) == (
        "CronDataIntervalTimetable",
        "0 14 * * 0",
    )
    assert maintain["catchup"] is False and maintain["max_active_runs"] == 1
    assert maintain["retries"] == 2 and maintain["timeout_s"] == 3 * 3600
    assert maintain["command"].startswith('exec ./spark-submit.sh maintain --conf "$CONF"')


def test_a_pool_of_one_slot_keeps_nightly_and_maintain_apart(dag_shapes):
    """Without FLEET_REBALANCE_POOL both use Airflow's default pool (a pool that does
    not exist would leave them unscheduled); with it, both share that pool."""
    plain, pooled = dag_shapes["plain"], dag_shapes["pooled"]
    assert plain["nightly"]["pool"] == plain["maintain"]["pool"] == "default_pool"
    assert pooled["errors"] == {}
    assert pooled["nightly"]["pool"] == pooled["maintain"]["pool"] == "fleet_rebalance"


def test_dags_test_runs_the_nightly_for_one_date(airflow_venv, airflow_env, tmp_path):
    """One cluster of the sample (`prod-east`, its smallest) is enough to see Airflow run
    the whole nightly; the sample's every group is the nightly tests' business. Two
    shuffle partitions for local[2], as the test session has."""
    warehouse, raw = tmp_path / "warehouse", tmp_path / "raw"
    shutil.copytree(PROJECT / "data" / "sample" / "prod-east", raw / "prod-east")
    conf = tmp_path / "airflow.yaml"
    local = (PROJECT / "conf" / "local.yaml").read_text()
    assert "spark.sql.shuffle.partitions: 8" in local  # else the conf below keeps 8
    conf.write_text(
        local.replace("raw_root: ../data/sample", f"raw_root: {raw}")
        .replace("warehouse: ../warehouse", f"warehouse: {warehouse}")
        .replace("master: local[*]", "master: local[2]")
        .replace("spark.sql.shuffle.partitions: 8", "spark.sql.shuffle.partitions: 2")
    )
    returncode, output = _dags_test(airflow_env, conf)
    assert returncode == 0, output[-5000:]
    assert re.search(r"fleet_rebalance 2026-11-20: [1-9]\d* groups analysed", output)
    assert (warehouse / "reports" / "2026-11-20.html").is_file()
    for table in ("offsets", "replay_metrics", "recommendations", "rebalance_timeline"):
        assert (warehouse / table / "_delta_log").is_dir(), table
    assert any((warehouse / "recommendations").glob("date=2026-11-20/*.parquet"))


def test_dags_test_fails_when_the_nightly_fails(airflow_env, tmp_path):
    conf = tmp_path / "broken.yaml"
    conf.write_text(f"raw_root: {tmp_path / 'missing'}\nwarehouse: {tmp_path / 'w'}\n")
    returncode, output = _dags_test(airflow_env, conf)
    assert returncode != 0
    assert "step ingest failed for 2026-11-20: raw_root" in output


def _dags_test(airflow_env: dict[str, str], conf: Path) -> tuple[int, str]:
    # A failing run reports at once instead of waiting out ten-minute retries.
    env = {**airflow_env, "FLEET_REBALANCE_CONF": str(conf), "FLEET_REBALANCE_RETRIES": "0"}
    migrate = subprocess.run(
        ["airflow", "db", "migrate"], env=env, capture_output=True, text=True, check=False
    )
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    run = subprocess.run(
        ["airflow", "dags", "test", "fleet_rebalance_nightly", "2026-11-20"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    return run.returncode, run.stdout + run.stderr
