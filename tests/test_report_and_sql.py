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
from fleet_rebalance.report.svg import safe_text

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
                "cluster": ["c", "prod-west"],
                "group_id": ["<g&1>", "search-processor-2"],
                "observed_paused": [12, 11],
                "observed_lag_skew": [2.0, 2.93],
                "observed_max_count_spread": [1, 0],
                "change_kind": ["assignor", "keep"],
                "compared_with": ["range", "cooperative-sticky"],
                "recommended_assignor": ["sticky", "cooperative-sticky"],
                "declared_paused_partitions": [10, 12],
                "recommended_paused_partitions": [4, 12],
                "paused_partitions_saved": [6, 0],
                "declared_mean_lag_skew": [1.5, 2.93],
                "recommended_mean_lag_skew": [1.25, 2.93],
                "recommended_max_count_spread": [1, 0],
            }
        ),
        top_lag_skew=pd.DataFrame(
            {
                "cluster": ["c", "c"],
                "group_id": ["<g&1>", "h"],
                "observed_lag_skew": [2.0, 1.5],
                "change_kind": ["assignor", "static_membership"],
                "compared_with": ["range", "range"],
                "recommended_assignor": ["sticky", "range"],
                "paused_partitions_saved": [6, 20],
                "declared_mean_lag_skew": [float("nan"), 1.5],
                "recommended_mean_lag_skew": [None, 1.5],
            }
        ),
        recommendations=pd.DataFrame(
            {
                "change_kind": ["keep", "assignor", "protocol_migration"],
                "recommended_assignor": ["cooperative-sticky", "sticky", "uniform"],
                "groups": [3, 1, 1],
                "paused_partitions_saved": [0, 6, 3],
            }
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
    assert "  c/<g&1>: 12 observed; range 10 -> 4 under sticky (assignor)" in lines
    # What runs is better than the best other choice: keep, with no worse number shown.
    assert "  prod-west/search-processor-2: 11 observed; keep cooperative-sticky" in lines
    # Unknown skew is shown as such, never as NaN.
    assert "  c/<g&1>: 2.00 observed; range n/a -> n/a under sticky (assignor)" in lines
    assert "  c/h: 1.50 observed; static membership: 20 fewer paused partitions" in lines
    assert lines[-2] == (
        "recommendations: sticky 1 (assignor: 6 fewer paused partitions), uniform 1"
        " (protocol_migration: 3 fewer paused partitions), keep 3"
    )
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


def test_report_shows_unknown_numbers_as_such():
    recs = facts().recommendations.assign(paused_partitions_saved=[0, float("nan"), 3])
    top = facts().top_lag_skew.assign(observed_lag_skew=[float("nan"), 1.5])
    html = render(facts(recommendations=recs, top_lag_skew=top))
    assert "<td>n/a</td>" in html and "NaN" not in html
    assert "  c/&lt;g&amp;1&gt;: n/a observed; range n/a -&gt; n/a under sticky (assignor)" in html


BIDI_CONTROLS = [
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
]
# Shows as "grp-evilgrook": U+202E reverses what follows it.
SPOOFED = "grp-evil\u202ekoorg"


def spoofing_facts() -> DayFacts:
    """Facts whose ids carry bidi controls and other invisible characters in every
    place the report shows one: bars, bands, timeline lanes and tooltips, the table."""
    base = facts()
    top_paused = base.top_paused.assign(cluster="c\u2066", group_id=SPOOFED)
    return facts(
        per_assignor=base.per_assignor.assign(assignor=["range", "sticky\u200f"]),
        top_paused=top_paused,
        top_lag_skew=base.top_lag_skew.assign(group_id="g\u200b1"),
        worst_lag=base.worst_lag.assign(group_id="g\x1b[31m", topic="t\u00a0x"),
        timeline=base.timeline.assign(group_id=SPOOFED, cause=["left\u202a", None]),
        recommendations=base.recommendations.assign(recommended_assignor="sticky\u061c"),
    )


@pytest.mark.parametrize("char", BIDI_CONTROLS)
def test_safe_text_spells_out_every_bidi_control(char):
    assert safe_text(f"a{char}b") == f"a\\u{ord(char):04x}b"


def test_safe_text_escapes_html_controls_and_backslashes():
    assert safe_text("c/<g&1>") == "c/&lt;g&amp;1&gt;"
    assert safe_text("x\ty\n\x00") == "x\\u0009y\\u000a\\u0000"
    assert safe_text("\"'") == "&quot;&#x27;"
    # An id spelling out \u202e itself must not look like one holding U+202E.
    assert safe_text("a\\u202eb") == "a\\\\u202eb"
    assert safe_text("émoji 日本 ok") == "émoji 日本 ok"


def test_report_shows_bidi_and_invisible_characters_in_ids_escaped():
    """Given: a group id with U+202E (and others with U+2066, U+200B, ESC, NBSP, U+200F,
    U+061C, U+202A) in every chart, tooltip, table and the summary.
    Then: no such character reaches the page raw.
    Expected: each shown as \\uXXXX where the id is rendered."""
    html = render(spoofing_facts())
    hidden = [*BIDI_CONTROLS, "\u200b", "\x1b", "\u00a0"]
    assert [c for c in hidden if c in html] == []
    spelled = "grp-evil\\u202ekoorg"
    # Bars and the timeline's lane label (SVG text), the summary (<pre>).
    assert f'text-anchor="end">c\\u2066/{spelled}</text>' in html
    assert f'text-anchor="end">c/{spelled}</text>' in html
    assert f"  c\\u2066/{spelled}: 12 observed; range 10 -&gt; 4 under sticky" in html
    assert 'text-anchor="end">sticky\\u200f</text>' in html
    assert 'text-anchor="end">c/g\\u001b[31m t\\u00a0x</text>' in html
    assert 'text-anchor="end">c/g\\u200b1</text>' in html
    # The timeline's tooltip and the recommendations table.
    assert "<title>generation 2 at 06:30:00: left\\u202a, 2500 ms</title>" in html
    assert "<td>sticky\\u061c</td>" in html


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
