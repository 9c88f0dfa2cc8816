"""pipeline_runs: per run date and step, what the step's last run of that date was
computed from (run_inputs.py), so a backfill can tell a date complete for the same
inputs without recomputing it.

Every run of a date writes its steps' rows once its steps are done (single-date runs
too): the date's partition is replaced by the rows of the steps it did not run, as they
were, plus its own. run_id, started_at and finished_at are per-run columns, so a re-run
on the same inputs with the same code commits nothing (storage/unchanged.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import SparkSession
from pyspark.sql.types import DateType, StringType, StructField, StructType, TimestampType

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import run_inputs
from fleet_rebalance.storage.engine import RUN_ID_KEY
from fleet_rebalance.storage.warehouse import Warehouse

TABLE = "pipeline_runs"
PARTITION = "run_date"
SCHEMA = StructType(
    [
        StructField("run_date", DateType()),
        StructField("step", StringType()),
        StructField("inputs_sha256", StringType()),
        StructField("code_version", StringType()),
        StructField("run_id", StringType()),
        StructField("started_at", TimestampType()),
        StructField("finished_at", TimestampType()),
    ]
)
PER_RUN_COLUMNS = ("run_id", "started_at", "finished_at")
COMPARED = [i for i, f in enumerate(SCHEMA.fields) if f.name not in PER_RUN_COLUMNS]
INGEST, REPLAY, METRICS = "ingest", "replay", "metrics"
# ingested_files columns an ingest digest reads.
FILE_COLUMNS = ("capture_date", "path", "size", "sha256", "status", "reason")

# A step's start and end, UTC.
Times = tuple[dt.datetime, dt.datetime]


@dataclass(frozen=True)
class Record:
    """What a step's last run of a date was computed from, and by which code."""

    inputs_sha256: str
    code_version: str


def assignor_names(names: Sequence[str] | None) -> list[str]:
    """The assignors a replay runs: `names`, or every built-in plus observed."""
    from fleet_rebalance.replay.engine import default_assignors

    return list(names or default_assignors())


def recorded(warehouse: Warehouse, days: Sequence[dt.date]) -> dict[tuple[dt.date, str], Record]:
    """The records of `days` by (date, step); only their partitions are read."""
    if not days or not warehouse.exists(TABLE):
        return {}
    rows = warehouse.read(TABLE, where={PARTITION: sorted(set(days))}).collect()
    return {(r["run_date"], r["step"]): Record(r["inputs_sha256"], r["code_version"]) for r in rows}


def files_digests(warehouse: Warehouse, days: Iterable[dt.date]) -> dict[dt.date, str]:
    """The ingest digest of each of `days` from ingested_files (an empty date has the
    digest of no files); only those partitions are read."""
    days = sorted(set(days))
    entries: dict[dt.date, list[run_inputs.FileEntry]] = {day: [] for day in days}
    if days and warehouse.exists("ingested_files"):
        frame = warehouse.read("ingested_files", where={"capture_date": days})
        for row in frame.select(*FILE_COLUMNS).collect():
            entries[row["capture_date"]].append(run_inputs.recorded_entry(row))
    return {day: run_inputs.files_digest(found) for day, found in entries.items()}


def expected(
    steps: Sequence[str],
    day: dt.date,
    files: Mapping[dt.date, str],
    replay_recorded: Record | None,
    config: Config,
    assignors: Sequence[str],
    *,
    ingest_files: str | None = None,
) -> dict[str, str]:
    """The inputs digest of each of `steps` for `day` now: `files` holds the ingest
    digests of `day` and the day before as ingested_files records them; ingest's own is
    `ingest_files` (the raw files as they are now) when given. Metrics follows the
    replay of this run when it runs one, else the one recorded."""
    code = run_inputs.code_version()
    today, previous = files[day], files[day - dt.timedelta(days=1)]
    found: dict[str, str] = {}
    for step in steps:
        if step == INGEST:
            found[step] = ingest_files if ingest_files is not None else today
        elif step == REPLAY:
            found[step] = run_inputs.replay_digest(today, previous, assignors, code)
        elif step == METRICS:
            replay = found.get(REPLAY) or (replay_recorded and replay_recorded.inputs_sha256)
            found[step] = run_inputs.metrics_digest(replay, today, previous, config.metrics, code)
        else:
            raise ValueError(f"unknown step {step!r}")
    return found


def complete(
    steps: Sequence[str],
    day: dt.date,
    expected_inputs: Mapping[str, str],
    records: Mapping[tuple[dt.date, str], Record],
) -> bool:
    """Whether every one of `steps` has a record of `day` on these inputs and this code."""
    code = run_inputs.code_version()
    return all(records.get((day, step)) == Record(expected_inputs[step], code) for step in steps)


def record(
    spark: SparkSession,
    config: Config,
    day: dt.date,
    times: Mapping[str, Times],
    assignors: Sequence[str],
) -> bool:
    """The rows of the steps in `times` (just run for `day`, in order) into the date's
    partition, beside the rows of the other steps; False when they are there already
    but for their per-run columns, and nothing was written. (Compared here: the date's
    few rows cost one read, where the storage's own comparison costs three Spark jobs.)"""
    warehouse = Warehouse(spark, config.warehouse)
    files = files_digests(warehouse, [day - dt.timedelta(days=1), day])
    there = []
    if warehouse.exists(TABLE):
        there = [tuple(r) for r in warehouse.read(TABLE, where={PARTITION: [day]}).collect()]
    replay_recorded = next((Record(*r[2:4]) for r in there if r[1] == REPLAY), None)
    inputs = expected(list(times), day, files, replay_recorded, config, assignors)
    run_id = spark.conf.get(RUN_ID_KEY, "")
    code = run_inputs.code_version()
    mine = [(day, step, inputs[step], code, run_id, *times[step]) for step in times]
    rows = sorted([*(r for r in there if r[1] not in times), *mine], key=lambda row: row[1])
    if _compared(rows) == _compared(there):
        return False
    warehouse.write(
        spark.createDataFrame(rows, SCHEMA).coalesce(1),
        TABLE,
        mode="overwrite",
        partition_by=(PARTITION,),
        replace_where={PARTITION: [day]},
        per_run_columns=PER_RUN_COLUMNS,
    )
    return True


def _compared(rows: Iterable[tuple]) -> list[tuple]:
    """The rows without their per-run columns, in order."""
    return sorted(tuple(row[i] for i in COMPARED) for row in rows)
