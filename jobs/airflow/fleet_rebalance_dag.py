"""Airflow DAGs: the fleet_rebalance nightly for each day, and the weekly maintenance of
its tables, through spark-submit.sh.

fleet_rebalance_nightly: run D (logical date D, data interval [D 02:00, D+1 02:00) UTC)
starts at D+1 02:00 and processes the captures of day D: `{{ ds }}` is D. The explicit
interval timetable keeps that meaning on Airflow 3, where a bare cron string would make
ds the run's own day. Every nightly replaces its date's partitions, so retries,
backfills and catchup are safe; one run at a time, because runs for two dates commit to
the same Delta tables.
Backfill: catchup runs one nightly per date here; `./spark-submit.sh nightly --all` (or
--from/--to) runs the dates in one SparkSession, skipping those already complete.

fleet_rebalance_maintain: `maintain` (compaction, VACUUM, checkpoints) every Sunday at
14:00 UTC, after the nightly's worst case (02:00 plus three 3-hour tries), no catchup
(one run does all that is due). It must not run beside a nightly: its compaction would
make the nightly's commit fail (or the other way round), costing a retry. Set
FLEET_REBALANCE_POOL to a pool of one slot (`airflow pools set fleet_rebalance 1
"fleet_rebalance tables"`) and both tasks run in it, never together, whatever the
schedule or a catchup does. Without it they use Airflow's default pool (a task naming a
pool that does not exist is never scheduled) and only the schedule keeps them apart.

Deployment settings come from the environment of the scheduler/workers:
FLEET_REBALANCE_HOME (the checkout; default: two directories above this file),
FLEET_REBALANCE_CONF (job YAML, relative to the checkout; default conf/local.yaml),
FLEET_REBALANCE_TIMEOUT_HOURS (default 3), FLEET_REBALANCE_RETRIES (default 2, ten
minutes apart), FLEET_REBALANCE_POOL (default: none), FLEET_REBALANCE_RETAIN_DAYS
(maintain's --retain-days, default 7). Importing this file does no I/O.
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
POOL = os.environ.get("FLEET_REBALANCE_POOL") or None  # None: Airflow's default pool
RETAIN_DAYS = os.environ.get("FLEET_REBALANCE_RETAIN_DAYS", "7")
DEFAULT_ARGS = {
    "owner": "kafka-platform",
    "retries": RETRIES,
    "retry_delay": dt.timedelta(minutes=10),
    "execution_timeout": TIMEOUT,
}

with DAG(
    dag_id="fleet_rebalance_nightly",
    description="Kafka consumer-group rebalance analysis: ingest -> replay -> metrics",
    schedule=CronDataIntervalTimetable("0 2 * * *", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    catchup=True,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    tags=["kafka", "spark", "fleet_rebalance"],
) as dag:
    BashOperator(
        task_id="nightly",
        # exec: Airflow's timeout and kill signals reach spark-submit itself.
        bash_command='exec ./spark-submit.sh nightly --date "{{ ds }}" --conf "$CONF"',
        cwd=HOME,
        env={"CONF": CONF},
        append_env=True,
        pool=POOL,
    )

with DAG(
    dag_id="fleet_rebalance_maintain",
    description="Weekly compaction, VACUUM and checkpoints of the fleet_rebalance tables",
    schedule=CronDataIntervalTimetable("0 14 * * 0", timezone="UTC"),
    start_date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    catchup=False,
    max_active_runs=1,
    default_args=DEFAULT_ARGS,
    tags=["kafka", "spark", "fleet_rebalance"],
) as maintain_dag:
    BashOperator(
        task_id="maintain",
        bash_command='exec ./spark-submit.sh maintain --conf "$CONF" --retain-days "$RETAIN_DAYS"',
        cwd=HOME,
        env={"CONF": CONF, "RETAIN_DAYS": RETAIN_DAYS},
        append_env=True,
        pool=POOL,
    )
