"""Airflow DAG: the fleet_rebalance nightly for each day, through spark-submit.sh.

Run D (logical date D, data interval [D 02:00, D+1 02:00) UTC) starts at D+1 02:00 and
processes the captures of day D: `{{ ds }}` is D. The explicit interval timetable keeps
that meaning on Airflow 3, where a bare cron string would make ds the run's own day.
Every nightly replaces its date's partitions, so retries, backfills and catchup are
safe; one run at a time, because runs for two dates commit to the same Delta tables.

Deployment settings come from the environment of the scheduler/workers:
FLEET_REBALANCE_HOME (the checkout; default: two directories above this file),
FLEET_REBALANCE_CONF (job YAML, relative to the checkout; default conf/local.yaml),
FLEET_REBALANCE_TIMEOUT_HOURS (default 3), FLEET_REBALANCE_RETRIES (default 2, ten
minutes apart). Importing this file does no I/O.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

try:  # Airflow 3
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.sdk import DAG
except ImportError:  # Airflow 2.x
    from airflow import DAG
    from airflow.operators.bash import BashOperator
from airflow.timetables.interval import CronDataIntervalTimetable

HOME = os.environ.get("FLEET_REBALANCE_HOME", str(Path(__file__).resolve().parents[2]))
CONF = os.environ.get("FLEET_REBALANCE_CONF", "conf/local.yaml")
RETRIES = int(os.environ.get("FLEET_REBALANCE_RETRIES", "2"))
TIMEOUT = dt.timedelta(hours=float(os.environ.get("FLEET_REBALANCE_TIMEOUT_HOURS", "3")))

with DAG(
    dag_id="fleet_rebalance_nightly",
    description="Kafka consumer-group rebalance analysis: ingest -> replay -> metrics",
    schedule=CronDataIntervalTimetable("0 2 * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    catchup=True,
    max_active_runs=1,
    default_args={
        "owner": "kafka-platform",
        "retries": RETRIES,
        "retry_delay": dt.timedelta(minutes=10),
        "execution_timeout": TIMEOUT,
    },
    tags=["kafka", "spark", "fleet_rebalance"],
) as dag:
    BashOperator(
        task_id="nightly",
        # exec: Airflow's timeout and kill signals reach spark-submit itself.
        bash_command='exec ./spark-submit.sh nightly --date "{{ ds }}" --conf "$CONF"',
        cwd=HOME,
        env={"CONF": CONF},
        append_env=True,
    )
