"""The nightly's history of data/sample against the generator's own record of every
generation it went through (data/sample.truth.jsonl, written by write_fleet): group by
group, one rebalance event per logged generation with the cause the generator gave it;
where the logs were not collected (the lab cluster's hour at 02:00), events from the
captures only, flagged `captures`."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict

import pyspark.sql.functions as F
import pytest

from fleet_rebalance.generate.fleet import truth_path

DAY = dt.date(2026, 11, 20)


def truth(project) -> dict[tuple[str, str], list[dict]]:
    """Each group's generations of the sample's day, between its first and last capture
    (00:00 and 10:00: the periods the nightly replays), follow-up rounds folded in."""
    rows = [json.loads(line) for line in truth_path(project / "data" / "sample").open()]
    by_group: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        if "2026-11-20T00:00" < r["started_at"] <= "2026-11-20T10:00" and not r["follow_up"]:
            by_group[(r["cluster"], r["group_id"])].append(r)
    return by_group


@pytest.mark.spark
def test_every_logged_generation_is_an_event_with_its_cause(spark, clean_nightly):
    from conftest import PROJECT

    from fleet_rebalance.storage import read_table

    events = (
        read_table(spark, str(clean_nightly / "rebalance_events"))
        .where((F.col("event_date") == F.lit(DAY)) & (F.col("trigger") != "initial"))
        .select("cluster", "group_id", "generation", "source", "cause", "event_at")
        .collect()
    )
    got: dict[tuple[str, str], list] = defaultdict(list)
    captured: dict[tuple[str, str], list] = defaultdict(list)
    for e in events:
        key = (e["cluster"], e["group_id"])
        if e["source"] == "captures":
            captured[key].append(e)
        else:
            got[key].append((e["generation"], e["cause"]))
    expected = truth(PROJECT)
    for key in sorted(set(expected) | set(got)):
        logged = [(r["generation"], r["cause"]) for r in expected.get(key, []) if r["logged"]]
        assert sorted(got.get(key, [])) == sorted(logged), key
        unlogged = [r for r in expected.get(key, []) if not r["logged"]]
        # A gap's generations are seen by the captures as at most one event per capture
        # period, and only where the captures show a change.
        for e in captured.get(key, []):
            at = e["event_at"].astimezone(dt.UTC)
            assert any(
                dt.datetime.fromisoformat(r["started_at"])
                <= at
                <= dt.datetime.fromisoformat(r["started_at"]) + dt.timedelta(minutes=60)
                for r in unlogged
            ), (key, at)
        assert bool(captured.get(key)) == bool(unlogged), key
    assert sum(len(v) for v in got.values()) == sum(
        1 for rs in expected.values() for r in rs if r["logged"]
    )
