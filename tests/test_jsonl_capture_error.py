"""A jsonl group the exporter failed to capture (`capture_error`, issue 32): no row in
any bronze table, a gap for the replay, its file `ok` with the groups named in its
reason; a malformed failure line quarantined with the reason."""

from __future__ import annotations

import datetime as dt
import json
import logging

import pytest

from fleet_rebalance.capture import parse_capture
from fleet_rebalance.capture.bronze_batches import FILE_REPORT, capture_batches
from fleet_rebalance.capture.result import GROUP_STATES, MEMBERS, OFFSETS

CAPTURE = "prod-east/captures/2026-11-20T0910Z/groups.jsonl"
AT = dt.datetime(2026, 11, 20, 9, 10, tzinfo=dt.UTC)
DAY = AT.date()
UNAVAILABLE = "COORDINATOR_NOT_AVAILABLE: Broker: Coordinator not available"
TIMEOUT = "no reply within the request timeout"


def snapshot(group: str, members: dict[str, list[int]], **extra) -> dict:
    return {
        "group_id": group,
        "captured_at": "2026-11-20T09:10:00Z",
        "state": "Stable",
        "assignment_strategy": "range",
        "members": [
            {"member_id": m, "client_id": m, "host": "/10.0.0.1", "assignment": [["t", p]]}
            for m, owned in members.items()
            for p in owned
        ],
        "offsets": [{"topic": "t", "partition": 0, "current_offset": 1, "log_end_offset": 2}],
        **extra,
    }


def failure(group: str, reason=UNAVAILABLE, stage="describe", **extra) -> dict:
    """The line fleet-capture writes for a group it could not describe."""
    return {
        "group_id": group,
        "cluster": "prod-east",
        "captured_at": "2026-11-20T09:10:00Z",
        "type": "classic",
        "capture_error": {"stage": stage, "reason": reason},
        **extra,
    }


def jsonl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def parse(text: str):
    result = parse_capture(CAPTURE, text.encode())
    assert result.reconciles(), result.reconciliation()
    return result


def groups_in(result) -> dict[str, set[str]]:
    return {t: {r["group_id"] for r in result.records(t)} for t in (GROUP_STATES, MEMBERS, OFFSETS)}


def summary(text: str) -> dict:
    file = {"relative": CAPTURE, "cluster": "prod-east", "captured_at": AT, "group": None}
    reports = capture_batches([file], lambda f: (parse(text), None), DAY)
    (report,) = [out for table, out in reports if table == FILE_REPORT]
    return report


def test_a_failed_group_yields_no_row_and_is_named_in_the_files_reason():
    """Given a capture of orders-app and two groups the exporter failed to capture,
    Then only orders-app has rows, the failure lines are structural and nothing is
    quarantined; Expected: status ok, reason naming both groups with their errors."""
    text = jsonl(
        failure("broken", UNAVAILABLE),
        snapshot("orders-app", {"m1": [0]}),
        failure("slow", TIMEOUT, stage="offsets"),
    )
    result = parse(text)
    assert groups_in(result) == {GROUP_STATES: {"orders-app"}, MEMBERS: {"orders-app"},
                                 OFFSETS: {"orders-app"}}  # fmt: skip
    assert (result.status, result.quarantine) == ("ok", [])
    assert (result.lines, result.row_lines, result.structural) == (3, 1, 2)
    assert result.failed_groups == {"broken": UNAVAILABLE, "slow": TIMEOUT}
    report = summary(text)
    assert (report["status"], report["quarantined"]) == ("ok", 0)
    assert report["table_rows"] == {GROUP_STATES: 1, MEMBERS: 1, OFFSETS: 1}
    assert report["reason"] == (
        "2 groups the exporter failed to capture: broken (COORDINATOR_NOT_AVAILABLE), "
        "slow (no reply within the request timeout)"
    )


def test_a_file_of_only_failed_groups_is_ok_with_no_rows():
    """Given a capture where every group failed, Then no table gets a row and the file
    stays ok (each group is a gap, not a failed capture of the cluster); Expected:
    no rows, 1 structural line, the group named."""
    result = parse(jsonl(failure("broken")))
    assert (result.status, result.row_count, result.structural) == ("ok", 0, 1)
    assert summary(jsonl(failure("broken")))["reason"] == (
        "1 group the exporter failed to capture: broken (COORDINATOR_NOT_AVAILABLE)"
    )


def test_many_failed_groups_are_shortened_past_five_names():
    """Given seven failed groups, Then the reason names five (sorted) and counts the
    rest; an error that is no librdkafka code is cut at 40 characters."""
    long_error = "the coordinator said something unusually long and unhelpful here"
    names = [f"g{i}" for i in range(7)]
    result = parse(jsonl(*(failure(g, long_error if g == "g0" else UNAVAILABLE) for g in names)))
    assert result.failed_groups_note == (
        "7 groups the exporter failed to capture: "
        "g0 (the coordinator said something unusua...), g1 (COORDINATOR_NOT_AVAILABLE), "
        "g2 (COORDINATOR_NOT_AVAILABLE), g3 (COORDINATOR_NOT_AVAILABLE), "
        "g4 (COORDINATOR_NOT_AVAILABLE) and 2 more"
    )


def test_a_failed_group_beside_quarantined_lines_shows_both_in_the_reason():
    """Given a failure line and a snapshot with a wrong JSON type, Then the reason gives
    the quarantine first and the failed group after it."""
    report = summary(jsonl({**snapshot("a", {}), "members": "abc"}, failure("broken")))
    assert report["reason"] == (
        '1 line(s) quarantined, e.g. invalid snapshot: members is not a list: "abc"; '
        "1 group the exporter failed to capture: broken (COORDINATOR_NOT_AVAILABLE)"
    )


def test_a_null_capture_error_is_no_failure():
    """Given a snapshot with `capture_error: null`, Then it is read as a snapshot."""
    result = parse(jsonl(snapshot("orders-app", {"m1": [0]}, capture_error=None)))
    assert (result.failed_groups, result.row_lines, result.quarantine) == ({}, 1, [])


MALFORMED = [
    (failure("g", reason=7), "capture_error.reason is not a string: 7"),
    (failure("g", reason=""), "capture_error.reason must be a non-empty string"),
    (failure("g", reason=" \t"), "capture_error.reason must be a non-empty string"),
    (failure("g", reason=None), "capture_error.reason must be a non-empty string"),
    (failure("g", stage=["describe"]), 'capture_error.stage is not a string: ["describe"]'),
    ({**failure("g"), "capture_error": UNAVAILABLE}, "capture_error is not an object"),
    ({**failure("g"), "capture_error": ["x"]}, 'capture_error is not an object: ["x"]'),
    ({k: v for k, v in failure("g").items() if k != "group_id"}, "group_id is required"),
    (failure("g", group_id=""), "group_id is required"),
    (failure("g", group_id=3), "group_id is not a string: 3"),
    (failure("g", members=[{"member_id": "m"}]), "capture_error beside members"),
    (failure("g", members=[]), "capture_error beside members"),
    (failure("g", state="Stable", offsets=[]), "capture_error beside state, offsets"),
    (failure("g", coordinator={"id": 1}), "capture_error beside coordinator"),
    (failure("g", captured_at="yesterday"), "captured_at is not an ISO-8601 time: 'yesterday'"),
    (failure("g", reason="bad\x00byte"), "capture_error.reason holds control character"),
]


@pytest.mark.parametrize(("record", "reason"), MALFORMED)
def test_a_malformed_failure_line_is_quarantined_with_the_reason(record, reason):
    """Given a failure line that contradicts itself or has a wrong type, Then the line
    is quarantined (a valid snapshot beside it is kept); Expected: the reason."""
    result = parse(jsonl(snapshot("ok-app", {"m1": [0]}), record))
    assert [(q["line_number"], q["kind"]) for q in result.quarantine] == [(2, "jsonl")]
    assert result.quarantine[0]["reason"].startswith(f"invalid snapshot: {reason}")
    assert result.failed_groups == {}
    assert groups_in(result)[GROUP_STATES] == {"ok-app"}


def test_the_run_log_names_the_failed_groups(caplog):
    """Given a file whose only news is a failed group, Then the ingest log prints it at
    INFO (not DEBUG) with the groups."""
    from fleet_rebalance.pipeline.ingest import reconcile

    report = summary(jsonl(failure("broken"), snapshot("orders-app", {"m1": [0]})))
    with caplog.at_level(logging.INFO, logger="fleet_rebalance.ingest"):
        reconcile.check_reconciliation([report])
    (record,) = [r for r in caplog.records if CAPTURE in r.getMessage()]
    assert record.levelno == logging.INFO
    assert record.getMessage().endswith(
        "; 1 group the exporter failed to capture: broken (COORDINATOR_NOT_AVAILABLE)"
    )


@pytest.mark.spark
def test_the_replay_sees_a_gap_where_an_empty_group_would_be_everyone_leaving(spark, tmp_path):
    """Given captures at 23:40 (the day before), 00:00, 00:20 and 00:40 of three groups,
    orders-app gaining m3 at 00:20, billing-app failed to capture at 00:20 and
    emptied-app captured Empty with no members at 00:20, Then billing-app has no row at
    00:20 and no event (a gap: its 00:40 capture shows it unchanged), while emptied-app's
    members leave and rejoin; Expected: the 00:20 file ok, its reason naming billing-app."""
    from fleet_rebalance.config import Config
    from fleet_rebalance.pipeline import ingest, replay
    from fleet_rebalance.storage import read_table

    at_gap = "2026-11-20T0020Z"
    for at in ("2026-11-19T2340Z", "2026-11-20T0000Z", at_gap, "2026-11-20T0040Z"):
        stamp = dt.datetime.strptime(at, "%Y-%m-%dT%H%MZ").strftime("%Y-%m-%dT%H:%M:%SZ")
        orders = {"m1": [0], "m2": [1]} | ({"m3": [2]} if at >= at_gap else {})
        lines = [
            snapshot("orders-app", orders),
            failure("billing-app") if at == at_gap else snapshot("billing-app", {"b1": [0]}),
            {**snapshot("emptied-app", {}), "state": "Empty"}
            if at == at_gap
            else snapshot("emptied-app", {"e1": [0]}),
        ]
        path = tmp_path / "raw" / "east" / "exports" / at / "groups.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text(jsonl(*({**line, "captured_at": stamp} for line in lines)))
    config = Config(raw_root=str(tmp_path / "raw"), warehouse=str(tmp_path / "warehouse"))
    ingest.run(spark, config, None)
    replay.run(spark, config, DAY)

    def table(name):
        return read_table(spark, config.table_path(name))

    files = {r["path"]: r for r in table("ingested_files").collect()}
    gap_file = files[f"east/exports/{at_gap}/groups.jsonl"]
    assert (gap_file["status"], gap_file["quarantined"], gap_file["reason"]) == (
        "ok",
        0,
        "1 group the exporter failed to capture: billing-app (COORDINATOR_NOT_AVAILABLE)",
    )
    for name in ("group_states", "members", "offsets"):
        billing = table(name).where("group_id = 'billing-app'").collect()
        assert sorted({r["captured_at"].strftime("%H%M") for r in billing}) == [
            "0000", "0040", "2340"]  # fmt: skip
    events = [
        (r["group_id"], r["event_at"].strftime("%H%M"), r["trigger"])
        for r in table("rebalance_events").orderBy("group_id", "event_seq").collect()
    ]
    assert not [e for e in events if e[0] == "billing-app"]
    assert ("orders-app", "0020", "member_joined") in events
    assert [e[1] for e in events if e[0] == "emptied-app"] == ["0020", "0040"]
