"""The report page and the sql job's output formats, on tiny inputs."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline.sql import print_result
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.html import render, write_report
from fleet_rebalance.report.summary import summary_lines

DAY = dt.date(2026, 11, 20)


def facts(**overrides) -> DayFacts:
    base = dict(
        run_date=DAY,
        groups=2,
        rebalances=3,
        replay_errors=0,
        quarantined=1,
        per_assignor=pd.DataFrame(
            {
                "assignor": ["range", "sticky"],
                "stickiness": [0.5, None],
                "paused_partitions": [12, 4],
                "events": [3, 3],
            }
        ),
        top_paused=pd.DataFrame(
            {
                "cluster": ["c"],
                "group_id": ["<g&1>"],
                "observed_paused": [12],
                "observed_lag_skew": [2.0],
                "observed_max_count_spread": [1],
                "recommended_assignor": ["sticky"],
                "recommended_paused_partitions": [4],
                "recommended_mean_lag_skew": [1.25],
                "recommended_max_count_spread": [1],
            }
        ),
        top_lag_skew=pd.DataFrame(
            {
                "cluster": ["c"],
                "group_id": ["<g&1>"],
                "observed_lag_skew": [2.0],
                "recommended_assignor": ["sticky"],
                "recommended_mean_lag_skew": [None],
            }
        ),
        recommendations=pd.DataFrame(
            {"recommended_assignor": ["sticky"], "groups": [1], "changes": [1]}
        ),
        status_counts=pd.DataFrame({"group_status": ["OK", "WARN"], "count": [1, 1]}),
        worst_lag=pd.DataFrame(
            {
                "cluster": ["c"],
                "group_id": ["g"],
                "topic": ["t"],
                "lag_p50": [0.0],
                "lag_p90": [10.0],
                "lag_p99": [90.0],
                "lag_max": [100],
                "time_lag_p50_seconds": [0.0],
                "time_lag_max_seconds": [None],
            }
        ),
        timeline=pd.DataFrame(
            {
                "cluster": ["c", "c"],
                "group_id": ["g", "g"],
                "generation": [2, 3],
                "protocol": ["classic", "consumer"],
                "started_at": [pd.Timestamp("2026-11-20 06:30"), pd.NaT],
                "duration_ms": [2500, None],
                "cause": ["member left", None],
            }
        ),
    )
    return DayFacts(**{**base, **overrides})


def test_summary_names_the_top_groups_and_counts():
    lines = summary_lines(facts())
    assert lines[0] == (
        "fleet_rebalance 2026-11-20: 2 groups analysed, 3 rebalances, 0 replay errors, "
        "1 quarantined lines"
    )
    assert "  c/<g&1>: 12 -> 4 under sticky" in lines
    assert "  c/<g&1>: 2.00 -> - under sticky" in lines  # unknown skew is shown as such
    assert "recommendations: sticky 1 (1 a change)" in lines
    assert lines[-1] == "consumer status (Burrow, per group): OK 1, WARN 1"


def test_report_is_one_self_contained_escaped_page(tmp_path):
    path = write_report(facts(), location(str(tmp_path)))
    assert path == str(tmp_path / "reports" / "2026-11-20.html")
    html = Path(path).read_text(encoding="utf-8")
    assert html.count("<svg") == 7  # 2 per assignor, 2 lag, 2 skew, 1 timeline
    assert "<g&1>" not in html and "c/&lt;g&amp;1&gt;" in html
    assert "generation 2 at 06:30:00: member left, 2500 ms" in html
    assert "<script" not in html and "src=" not in html and "href=" not in html


def test_report_of_a_quiet_day_still_renders():
    empty = facts(
        top_paused=facts().top_paused.iloc[0:0],
        top_lag_skew=facts().top_lag_skew.iloc[0:0],
        recommendations=facts().recommendations.iloc[0:0],
        worst_lag=facts().worst_lag.iloc[0:0],
        timeline=facts().timeline.iloc[0:0],
    )
    html = render(empty)
    assert "No coordinator log lines for this date." in html
    assert "recommendations: none (no rebalances)" in html


@pytest.fixture
def result(spark):
    return spark.createDataFrame(
        [("g1", 3, [1, 2], None), ("g,2", 10, [], "x")],
        "group_id string, n int, buckets array<int>, note string",
    ).orderBy("group_id")


def test_sql_table_format_aligns_and_marks_nulls(result):
    out = io.StringIO()
    assert print_result(result, "table", 1000, out) == 2
    lines = out.getvalue().splitlines()
    assert lines[1] == "| group_id | n  | buckets | note |"
    assert lines[3] == "| g,2      | 10 | []      | x    |"
    assert lines[4] == "| g1       | 3  | [1, 2]  | NULL |"


def test_sql_table_format_says_when_it_cut_rows(result):
    out = io.StringIO()
    assert print_result(result, "table", 1, out) == 1
    assert out.getvalue().splitlines()[-1].startswith("(first 1 rows;")


def test_sql_csv_and_json_stream_every_row(result):
    out = io.StringIO()
    print_result(result, "csv", 1, out)
    assert out.getvalue().splitlines() == [
        "group_id,n,buckets,note",
        '"g,2",10,[],x',
        'g1,3,"[1, 2]",',
    ]
    out = io.StringIO()
    print_result(result, "json", 1, out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"group_id": "g,2", "n": 10, "buckets": [], "note": "x"},
        {"group_id": "g1", "n": 3, "buckets": [1, 2], "note": None},
    ]
