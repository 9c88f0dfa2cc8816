"""KIP-848 convergence per group and date (metrics/convergence_frame.py): on tiny bronze
frames, and on a live Kafka 4.4 lab's captures and broker logs read by the parsers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyspark.sql.functions as F
import pytest

from fleet_rebalance.capture.parse import parse_capture
from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.metrics.convergence_frame import SCHEMA, convergence_frame
from fleet_rebalance.pipeline.bronze import TABLES

DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
LAB = Path(__file__).resolve().parent / "data" / "lab-4" / "raw"
MEMBERS = "cluster string, group_id string, consumer_id string, captured_at timestamp, " + (
    "capture_date date, member_epoch int, target_epoch int, upgraded boolean"
)
EVENTS = "cluster string, group_id string, event string, generation int, logged_at timestamp, " + (
    "log_date date"
)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def member(group, seconds, member_id, epoch, target, upgraded=None):
    return ("c", group, member_id, at(seconds), DAY, epoch, target, upgraded)


def bump(group, seconds, epoch, event="epoch_bumped"):
    return ("c", group, event, epoch, at(seconds), DAY)


def rows(frame) -> dict[str, dict]:
    return {r["group_id"]: r.asDict() for r in frame.collect()}


def test_convergence_stuck_members_and_classic_members_per_group(spark):
    members = spark.createDataFrame(
        [
            # g: epoch 5 converges at the capture 50 s after its bump; 6 is overtaken by
            # 7, which converges 470 s after its bump, once b, behind in captures 300 s
            # apart, catches up: stuck.
            member("g", 0, "a", 4, 4),
            member("g", 0, "b", 4, 4),
            member("g", 60, "a", 5, 5),
            member("g", 60, "b", 5, 5),
            member("g", 200, "a", 7, 7, True),
            member("g", 200, "b", 5, 7, False),
            member("g", 500, "a", 7, 7, True),
            member("g", 500, "b", 5, 7, False),
            member("g", 620, "a", 7, 7, True),
            member("g", 620, "b", 7, 7, False),
            # classic: `-` epochs, no row even with a bump logged (a stray line).
            member("classic", 0, "x", None, None),
            member("classic", 60, "x", None, None),
        ],
        MEMBERS,
    )
    events = spark.createDataFrame(
        [
            bump("g", 10, 5),
            bump("g", 10, 5),  # the same line ingested twice counts once
            bump("g", 100, 6),
            bump("g", 150, 7),
            bump("g", 580, 7, "member_fenced"),  # not a bump
            bump("classic", 30, 3),
        ],
        EVENTS,
    )
    out = convergence_frame(members, events, 300)
    assert out.schema == SCHEMA
    assert rows(out) == {
        "g": {
            "cluster": "c",
            "group_id": "g",
            "date": DAY,
            "epoch_bumps": 3,
            "epochs_converged": 2,
            "convergence_max_seconds": 470.0,
            "convergence_median_seconds": 260.0,
            "members_stuck_reconciling": 1,
            "classic_members": 1,
        }
    }
    # b was seen behind over 300 s: stuck_after 301 does not find it.
    assert rows(convergence_frame(members, events, 301))["g"]["members_stuck_reconciling"] == 0


def test_a_group_with_epochs_and_no_bump_logged_has_nulls_not_nan(spark):
    members = spark.createDataFrame([member("g", 0, "a", 3, 3)], MEMBERS)
    events = spark.createDataFrame([], EVENTS)
    (row,) = convergence_frame(members, events, 300).collect()
    assert (row.epoch_bumps, row.epochs_converged, row.members_stuck_reconciling) == (0, 0, 0)
    assert row.convergence_max_seconds is None and row.convergence_median_seconds is None


def _lab_rows(table: str) -> list[dict]:
    found = []
    for path in sorted(p for p in LAB.rglob("*") if p.is_file()):
        result = parse_capture(str(path.relative_to(LAB)), path.read_bytes())
        assert not result.quarantine, path
        if table in result.rows or table in result.batches:
            found += result.records(table)
    return found


def test_the_lab_4_captures_and_logs(spark):
    """A live 4.4 lab (tests/kafka_lab.py): lab-uniform (consumer protocol throughout)
    and lab-migrate (classic consumers joined one by one by consumer-protocol ones, the
    tool printing UPGRADED meanwhile), captured every 10 s; the coordinator logged each
    `Bumped group epoch to E`."""
    names = TABLES["members"].fieldNames()
    members = spark.createDataFrame(
        [tuple(r.get(n) for n in names) for r in _lab_rows("members")], TABLES["members"]
    )
    names = TABLES["coordinator_events"].fieldNames()
    events = spark.createDataFrame(
        [tuple(r.get(n) for n in names) for r in _lab_rows("coordinator_events")],
        TABLES["coordinator_events"],
    )
    out = rows(convergence_frame(members, events, MetricsConfig().reconcile_stuck_s))
    assert set(out) == {"lab-uniform", "lab-migrate"}  # the others are classic groups
    measured = {g: tuple(out[g][c] for c in SCHEMA.fieldNames()[3:]) for g in out}
    # One epoch of each was bumped again before a capture showed every member at it
    # (lab-uniform's 7, 7 s before 8; lab-migrate's 6, 8 s before 7); the last
    # captures print no UPGRADED (no classic member left).
    assert measured == {
        "lab-uniform": (7, 6, pytest.approx(11.838), pytest.approx(5.8705), 0, 0),
        "lab-migrate": (5, 4, pytest.approx(10.074), pytest.approx(8.1655), 0, 0),
    }
    mixed = members.where("group_id = 'lab-migrate' and upgraded is not null")
    by_capture = {
        r.captured_at.astimezone(dt.UTC).strftime("%H%M%S"): (r.classic, r.upgraded)
        for r in mixed.groupBy("captured_at")
        .agg(
            F.sum((~F.col("upgraded")).cast("int")).alias("classic"),
            F.sum(F.col("upgraded").cast("int")).alias("upgraded"),
        )
        .collect()
    }
    assert by_capture == {
        "075918": (2, 1),
        "075928": (1, 1),
        "075938": (1, 2),
        "075948": (1, 2),
    }
