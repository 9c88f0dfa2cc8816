"""The replay job on real Spark and Delta: data/sample end to end, the oracle test, a
members capture that lost a line, and jsonl captures."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pandas as pd
import pyspark.sql.functions as F
import pytest
from chispa import assert_df_equality

from fleet_rebalance.config import Config
from fleet_rebalance.pipeline import ingest, replay, silver
from fleet_rebalance.replay.assignor_runs import default_assignors
from fleet_rebalance.replay.group import replay_group
from fleet_rebalance.storage import read_table

pytestmark = pytest.mark.spark
PROJECT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 11, 20)


@pytest.fixture(scope="module")
def replayed(spark, tmp_path_factory):
    config = Config(
        raw_root=str(PROJECT / "tests" / "data" / "fleet_v1"),
        warehouse=str(tmp_path_factory.mktemp("replay-warehouse")),
    )
    ingest.run(spark, config, None)  # every date: 2026-11-19 gives the baseline
    counts = replay.run(spark, config, DAY)
    return config, counts


def table(spark, config, name):
    return read_table(spark, config.table_path(name))


def test_silver_tables_have_their_schemas_and_no_errors(spark, replayed):
    config, counts = replayed
    for name, schema in silver.TABLES.items():
        assert [(f.name, f.dataType) for f in table(spark, config, name).schema.fields] == [
            (f.name, f.dataType) for f in schema.fields
        ], name
    assert counts["replay_errors"] == 0
    assert counts["rebalance_events"] > 20
    assert (
        counts["replay_metrics"]
        == counts["rebalance_events"] * 5
        + table(spark, config, "replay_metrics").where(F.col("assignor") == "observed").count()
    )


def test_events_have_real_triggers_and_the_baseline_removes_initial(spark, replayed):
    config, _ = replayed
    triggers = {r["trigger"] for r in table(spark, config, "rebalance_events").collect()}
    assert "initial" not in triggers  # the 2026-11-19 captures are the baseline
    assert {"members_replaced", "partitions_added", "subscription_changed"} <= triggers


def test_metrics_follow_the_definitions(spark, replayed):
    config, _ = replayed
    metrics = table(spark, config, "replay_metrics")
    assert (
        metrics.where(
            F.col("kept") + F.col("reassigned") + F.col("orphaned") + F.col("fresh")
            != F.col("partition_count")
        ).count()
        == 0
    )
    eager = metrics.where(F.col("protocol") == "eager")
    assert eager.where(F.col("paused_partitions") != F.col("partition_count")).count() == 0
    by_assignor = {
        r["assignor"]: r["kept"]
        for r in metrics.groupBy("assignor").agg(F.sum("kept").alias("kept")).collect()
    }
    assert by_assignor["sticky"] >= by_assignor["roundrobin"]
    observed = metrics.where(F.col("assignor") == "observed")
    assert observed.where(F.col("conforms").isNotNull()).count() > 0


def test_the_failed_capture_is_a_gap_not_everyone_leaving(spark, replayed):
    """prod-west's 03:00 offsets capture is an empty file, so subscriptions (inferred from
    offsets) are unknown there: carried forward, not read as "subscribed to nothing". The
    only subscription change on prod-west is the regex group picking up a new topic: the
    generation its log records in the 05:00 hour, the 06:00 capture confirming it."""
    config, _ = replayed
    changes = (
        table(spark, config, "rebalance_events")
        .where((F.col("cluster") == "prod-west") & (F.col("trigger") == "subscription_changed"))
        .collect()
    )
    assert [(r["group_id"], r["event_at"].hour, r["source"]) for r in changes] == [
        ("audit-archiver-5", 5, "both")
    ]


def test_oracle_pandas_function_equals_spark(spark, replayed):
    """The same function on the same rows with plain pandas gives Spark's output."""
    config, _ = replayed
    keys = replay.capture_keys(spark, config, DAY)
    captures = replay.capture_rows(spark, config, DAY, keys)
    lags = replay.lag_rows(spark, config, DAY, keys)
    key = (
        captures.select("cluster", "group_id")
        .distinct()
        .orderBy("cluster", "group_id")
        .collect()[0]
    )
    mine = (F.col("cluster") == key["cluster"]) & (F.col("group_id") == key["group_id"])
    history = replay.topic_history(spark, config, DAY)
    columns = silver.union_schema().fieldNames()
    local = replay_group(
        (key["cluster"], key["group_id"]),
        captures.where(mine).toPandas(),
        lags.where(mine).toPandas(),
        run_date=DAY,
        assignors=default_assignors(),
        topic_history=history,
        columns=columns,
    )
    local_metrics = (
        local[local["_table"] == "replay_metrics"][
            ["event_seq", "assignor", "kept", "reassigned", "paused_partitions"]
        ]
        .astype({"event_seq": int, "kept": int, "reassigned": int, "paused_partitions": int})
        .sort_values(["event_seq", "assignor"])
        .reset_index(drop=True)
    )
    spark_metrics = (
        table(spark, config, "replay_metrics")
        .where((F.col("cluster") == key["cluster"]) & (F.col("group_id") == key["group_id"]))
        .select("event_seq", "assignor", "kept", "reassigned", "paused_partitions")
        .toPandas()
        .astype({"event_seq": int, "kept": int, "reassigned": int, "paused_partitions": int})
        .sort_values(["event_seq", "assignor"])
        .reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(local_metrics, spark_metrics)


# A members capture that lost one line (issue 19): data/sample's lab cluster from the
# previous date's last capture (the baseline) to 03:00, with the first member row of
# fraud-archiver-3's block in the 01:00 capture corrupted (#PARTITIONS -> a letter), so
# the ingest quarantines it and marks the file `incomplete`. fraud-archiver-3 changes
# members at 01:00 and not at 01:20; fraud-enricher-1 changes at 01:00 too.
LAB = PROJECT / "tests" / "data" / "fleet_v1" / "lab" / "captures"
LAB_CAPTURES = [
    "2026-11-19T2340Z",
    *(f"2026-11-20T{h:02d}{m:02d}Z" for h in range(3) for m in (0, 20, 40)),
    "2026-11-20T0300Z",
]
LOST_AT, NEXT_AT = dt.datetime(2026, 11, 20, 1, 0), dt.datetime(2026, 11, 20, 1, 20)
LOST_GROUP = "fraud-archiver-3"
LOST_FILE = "lab/captures/2026-11-20T0100Z/consumer-groups-members.txt"
SILVER = ("rebalance_events", "replay_metrics", "assignment_replay", "replay_errors")


def corrupt_first_member(text: str, group: str) -> tuple[str, int]:
    """`text` with the #PARTITIONS of `group`'s first member row changed to a letter, and
    that row's line number."""
    lines = text.split("\n")
    number = next(n for n, line in enumerate(lines, start=1) if line.startswith(f"{group} "))
    count = lines[number - 1].split()[4]
    lines[number - 1] = lines[number - 1].replace(f" {count} ", f" x{count[1:]} ", 1)
    return "\n".join(lines), number


def ingested_and_replayed(spark, raw_root: Path, warehouse: Path) -> Config:
    config = Config(raw_root=str(raw_root), warehouse=str(warehouse))
    ingest.run(spark, config, None)
    replay.run(spark, config, DAY)
    return config


@pytest.fixture(scope="module")
def lost_line(spark, tmp_path_factory):
    """(clean run's config, corrupted run's config, the corrupted line's number)."""
    clean, corrupted = tmp_path_factory.mktemp("lab-clean"), tmp_path_factory.mktemp("lab-lost")
    for name in LAB_CAPTURES:
        for root in (clean, corrupted):
            shutil.copytree(LAB / name, root / "lab" / "captures" / name)
    text, number = corrupt_first_member((clean / LOST_FILE).read_text(), LOST_GROUP)
    (corrupted / LOST_FILE).write_text(text)
    return (
        ingested_and_replayed(spark, clean, tmp_path_factory.mktemp("lab-clean-warehouse")),
        ingested_and_replayed(spark, corrupted, tmp_path_factory.mktemp("lab-lost-warehouse")),
        number,
    )


def test_a_lost_member_line_is_a_gap_for_its_group_only(spark, lost_line):
    """The capture that lost fraud-archiver-3's line is a gap for fraud-archiver-3: no
    member leaves and rejoins. Its 01:00 change is seen at its next capture, 01:20, one
    event unchanged but for its time (nothing changed between 01:00 and 01:20, so
    01:20 holds exactly 01:00's members and partitions)."""
    clean, corrupted, number = lost_line
    status = (
        table(spark, corrupted, "ingested_files")
        .where(F.col("path") == LOST_FILE)
        .select("status", "quarantined")
        .first()
    )
    assert (status["status"], status["quarantined"]) == ("incomplete", 1)
    assert [r["line_number"] for r in table(spark, corrupted, "quarantine").collect()] == [number]
    clean_keys, kept_keys = (
        {tuple(r) for r in replay.capture_keys(spark, c, DAY).collect()} for c in (clean, corrupted)
    )
    assert clean_keys - kept_keys == {("lab", LOST_GROUP, LOST_AT)}
    assert kept_keys <= clean_keys

    def events(config):
        return (
            table(spark, config, "rebalance_events")
            .where(F.col("group_id") == LOST_GROUP)
            .orderBy("event_seq")
            .collect()
        )

    before = events(clean)
    assert [r["event_at"] for r in before].count(LOST_AT) == 1
    assert NEXT_AT not in [r["event_at"] for r in before]

    def moved(r):
        """The 01:00 event at 01:20: its time, and the capture its evidence names."""
        if r["event_at"] != LOST_AT:
            return r.asDict()
        evidence = r["evidence"].replace(f"{LOST_AT:%H:%M}Z", f"{NEXT_AT:%H:%M}Z")
        return {**r.asDict(), "event_at": NEXT_AT, "evidence": evidence}

    expected = [moved(r) for r in before]
    assert [r.asDict() for r in events(corrupted)] == expected


def test_a_lost_member_line_leaves_every_other_group_as_in_a_clean_run(spark, lost_line):
    """billing-enricher-4's rows end just above the lost line and fraud-enricher-1
    changes members at that same capture: all of them replay exactly as without the
    lost line."""
    clean, corrupted, _ = lost_line
    others = F.col("group_id") != LOST_GROUP
    for name in SILVER:
        expected = table(spark, clean, name).where(others)
        assert_df_equality(
            table(spark, corrupted, name).where(others), expected, ignore_row_order=True
        )
    assert (
        table(spark, clean, "rebalance_events")
        .where((F.col("group_id") == "fraud-enricher-1") & (F.col("event_at") == LOST_AT))
        .count()
        == 1
    )


def jsonl_snapshot(group: str, members: dict[str, list[int]], topic: str, partitions: int):
    """One exporter line: `members` maps member id -> its partitions of `topic`."""
    return json.dumps(
        {
            "group_id": group,
            "state": "Stable",
            "assignment_strategy": "range",
            "members": [
                {
                    "member_id": member,
                    "client_id": member,
                    "host": "/10.0.0.1",
                    "subscription": [topic],
                    "assignment": [[topic, p] for p in owned],
                }
                for member, owned in members.items()
            ],
            "offsets": [
                {"topic": topic, "partition": p, "current_offset": 5, "log_end_offset": 5 + p}
                for p in range(partitions)
            ],
        }
    )


def test_jsonl_captures_are_replayed(spark, tmp_path):
    """An exporter's snapshots (ingested_files.kind jsonl) are replayed like described
    captures: orders-app gains m3 at 00:20 and loses m2 at 00:40. billing-app's 00:20
    line is broken (quarantined, its file still ok): billing-app has no snapshot there,
    a gap, not a member leaving and rejoining."""
    orders = {
        "2026-11-19T2340Z": {"m1": [0, 1], "m2": [2, 3]},
        "2026-11-20T0000Z": {"m1": [0, 1], "m2": [2, 3]},
        "2026-11-20T0020Z": {"m1": [0, 1], "m2": [2], "m3": [3]},
        "2026-11-20T0040Z": {"m1": [0, 1], "m3": [2, 3]},
    }
    for at, members in orders.items():
        billing = jsonl_snapshot("billing-app", {"b1": [0], "b2": [1]}, "billing", 2)
        if at == "2026-11-20T0020Z":
            billing = billing[:-9]
        path = tmp_path / "raw" / "jl" / "exports" / at / "groups.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text(f"{jsonl_snapshot('orders-app', members, 'orders', 4)}\n{billing}\n")
    config = ingested_and_replayed(spark, tmp_path / "raw", tmp_path / "warehouse")
    files = table(spark, config, "ingested_files").select("kind", "status", "quarantined")
    assert sorted(tuple(r) for r in files.collect()) == [("jsonl", "ok", 0)] * 3 + [
        ("jsonl", "ok", 1)
    ]
    events = table(spark, config, "rebalance_events").orderBy("group_id", "event_seq")
    assert [
        (r["group_id"], r["event_at"], r["trigger"], r["member_count"]) for r in events.collect()
    ] == [
        ("orders-app", dt.datetime(2026, 11, 20, 0, 20), "member_joined", 3),
        ("orders-app", dt.datetime(2026, 11, 20, 0, 40), "member_left", 2),
    ]
