"""The report page and the sql job's output formats, on tiny inputs."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from fleet_rebalance.filesystems import location
from fleet_rebalance.pipeline.sql import print_result
from fleet_rebalance.report import svg
from fleet_rebalance.report.facts import DayFacts
from fleet_rebalance.report.html import render, write_report
from fleet_rebalance.report.shown import visible
from fleet_rebalance.report.summary import summary_lines

DAY = dt.date(2026, 11, 20)


def facts(**overrides) -> DayFacts:
    base = dict(
        run_date=DAY,
        groups=5,
        rebalances=3,
        rebalances_logged=2,
        initial_events=5,
        generations_logged=9,
        follow_ups=1,
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
                "change_kind": ["assignor", "static_membership"],
                "compared_with": ["range", "range"],
                "recommended_assignor": ["sticky", "range"],
                "paused_partitions_saved": [6, 20],
                "declared_mean_lag_skew": [float("nan"), 1.5],
                "recommended_mean_lag_skew": [None, 1.5],
            }
        ),
        attention=pd.DataFrame(
            {
                "cluster": ["c", "prod-west"],
                "group_id": ["<g&1>", "search-processor-2-with-a-very-long-name-of-its-own"],
                "severity": [3, 1],
                "attention": [
                    ["Burrow ERR at the last capture: 2 of 6 partitions not OK"],
                    ["7 rebalances (7 deploy_restart), 70.0 paused partition-seconds"],
                ],
                "last_status": ["ERR", "OK"],
                "worst_status": ["STOP", "OK"],
                "rebalances": [0, 7],
                "paused_partition_seconds": [None, 70.0],
                "mean_lag_skew": [None, 1.2],
                "max_count_spread": [0, 1],
            }
        ),
        attention_total=3,
        changes=pd.DataFrame(
            {
                "cluster": ["prod-west", "c"],
                "group_id": ["search-processor-2-with-a-very-long-name-of-its-own", "<g&1>"],
                "change_kind": ["static_membership", "assignor"],
                "protocol": ["classic", "classic"],
                "declared_assignor": ["cooperative-sticky", "range"],
                "recommended_assignor": ["cooperative-sticky", "sticky"],
                "prerequisites": ["group.instance.id per consumer", "roll every consumer"],
                "rebalances": [7, 3],
                "rebalances_saved": [7, None],
                "paused_partitions_saved": [42, 6],
                "paused_partition_seconds_saved": [70.0, float("nan")],
                "messages_delayed_saved": [2100, None],
                "change_reason": ["restarts came back within 300 s", "sticky pauses fewer"],
            }
        ),
        changes_by_kind={"static_membership": 1, "assignor": 1, "keep": 3},
        listed=pd.DataFrame(
            {
                "cluster": ["c", "prod-west"],
                "group_id": ["<g&1>", "search-processor-2-with-a-very-long-name-of-its-own"],
                "severity": [3, 1],
                "attention": [["Burrow ERR ..."], ["7 rebalances ..."]],
                "last_status": ["ERR", "OK"],
                "worst_status": ["STOP", "OK"],
                "rebalances": [3, 7],
                "paused_partition_seconds": [None, 70.0],
                "mean_lag_skew": [None, 1.2],
                "max_count_spread": [0, 1],
                "change_kind": ["assignor", "static_membership"],
                "declared_assignor": ["range", "cooperative-sticky"],
                "recommended_assignor": ["sticky", "cooperative-sticky"],
                "rebalances_saved": [None, 7],
                "paused_partitions_saved": [6, 42],
                "paused_partition_seconds_saved": [float("nan"), 70.0],
                "messages_delayed_saved": [None, 2100],
            }
        ),
        listed_total=3,
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


def test_summary_is_the_headline_and_one_aligned_table():
    assert summary_lines(facts()) == [
        "fleet_rebalance 2026-11-20: 5 groups analysed, 3 rebalances (2 from the coordinator "
        "logs, 1 seen only by captures) + 5 initial joins; the logs' 9 generations = 2 "
        "replayed + 1 cooperative follow-up rounds + 6 outside the replayed captures; "
        "0 replay errors, 1 quarantined lines",
        "Groups that need attention: 3 of 5; Changes to make: 2 groups (static_membership 1, "
        "assignor 1, keep 3)",
        "group                                             Burrow            rebalances  "
        "paused (partition-s)  change                                 saves",
        "c/<g&1>                                           ERR (worst STOP)           3  "
        "                 n/a  range -> sticky                        6 paused partitions",
        # A long id is cut to its column's width with ~; an unknown saving is left out.
        "prod-west/search-processor-2-with-a-very-long-n~  OK                         7  "
        "                70.0  static membership (group.instance.id)  7 of 7 rebalances, "
        "70.0 partition-s, 2,100 messages",
        "... and 1 more (SELECT ... FROM group_health)",
    ]


def test_the_report_opens_with_the_summarys_words(tmp_path):
    """The first two sections are the summary's rows as tables, in the same words."""
    f = facts()
    html = render(f)
    attention = html.index("<h2>Groups that need attention: 3 of 5</h2>")
    changes = html.index("<h2>Changes to make: 2 groups (static_membership 1, assignor 1")
    charts = html.index("<svg")
    assert html.index("<p class='headline'>") < attention < changes < charts
    for r in f.attention.itertuples():
        assert f">{escape(r.cluster + '/' + r.group_id)}</span></td><td" in html
        assert f"data-label='why'>{escape('; '.join(r.attention))}</td>" in html
    # The status coloured by its class, its text written (never cut).
    assert "<span class='status ERR'>ERR (worst STOP)</span></td>" in html
    assert (
        ">7 of 7 rebalances, 42 paused partitions, 70.0 partition-s, 2,100 messages delayed</td>"
    ) in html
    # A long id is written whole, wrapping where the cell needs (never cut).
    long_id = "prod-west/search-processor-2-with-a-very-long-name-of-its-own"
    assert f"<span class='id'>{long_id}</span>" in html
    assert ".id{overflow-wrap:anywhere}" in html


def test_report_is_one_self_contained_escaped_page(tmp_path):
    path = write_report(facts(), location(str(tmp_path)))
    assert path == str(tmp_path / "reports" / "2026-11-20.html")
    html = Path(path).read_text(encoding="utf-8")
    assert html.count("<svg") == 7  # 2 per assignor, 2 lag, 2 skew, 1 timeline
    assert "<g&1>" not in html and "c/&lt;g&amp;1&gt;" in html
    assert "generation 2 at 06:30:00: member left, 2,500 ms" in html
    assert "<script" not in html and "src=" not in html and "href=" not in html


def test_report_of_a_quiet_day_still_renders():
    base = facts()
    empty = facts(
        top_paused=base.top_paused.iloc[0:0],
        top_lag_skew=base.top_lag_skew.iloc[0:0],
        worst_lag=base.worst_lag.iloc[0:0],
        timeline=base.timeline.iloc[0:0],
        attention=base.attention.iloc[0:0],
        attention_total=0,
        changes=base.changes.iloc[0:0],
        changes_by_kind={},
    )
    html = render(empty)
    assert "No coordinator log lines for this date." in html
    assert "<p>No group needs attention today.</p>" in html
    assert "Changes to make: 0 groups (no recommendations)" in html


def test_report_shows_unknown_numbers_as_such():
    """Every optional number missing: n/a or the clause left out, never NaN or None."""
    base = facts()
    nan = float("nan")
    html = render(
        facts(
            per_assignor=base.per_assignor.assign(stickiness=nan, paused_partitions=None),
            top_lag_skew=base.top_lag_skew.assign(
                observed_lag_skew=nan, recommended_mean_lag_skew=None
            ),
            worst_lag=base.worst_lag.assign(lag_p50=nan, lag_p90=nan, lag_p99=nan, lag_max=None),
            changes=base.changes.assign(
                rebalances_saved=None,
                paused_partitions_saved=nan,
                paused_partition_seconds_saved=None,
                messages_delayed_saved=None,
                prerequisites=None,
            ),
            attention=base.attention.assign(last_status=None, worst_status=None),
        )
    )
    text = re.sub(r"<[^>]+>", " ", html)
    assert not re.search(r"\b(NaN|nan|None|null)\b", text), re.findall(r".{40}\bnan\b.{40}", text)
    assert "n/a" in text
    assert "better balance or lag skew (see why)" in text


def test_every_chart_has_a_legend_and_fits_its_labels():
    html = render(facts())
    charts = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(charts) == 7
    assert all('<g class="legend">' in chart for chart in charts)
    # The lag bands say what each shade is and write p90 too, counts without decimals.
    assert "p50 to p90" in html and "p90 to p99" in html
    assert "p50 0 · p90 10 · p99 90 · max 100" in html
    # Time lag in h:mm:ss, stickiness in percent, paused partitions as whole numbers.
    assert ">0:00:00</text>" in html and ">50.0 %</text>" in html and ">12</text>" in html
    assert ">12.00</text>" not in html


def test_long_labels_are_ellipsized_with_the_whole_id_in_a_tooltip():
    long_id = "a-group-id-far-too-long-for-the-label-column-of-the-chart" * 2
    html = svg.bars("t", [long_id], {"s": [1.0]})
    # Cut in the middle: the start (cluster) and the end (what tells ids apart) stay.
    assert f"<title>{long_id}</title>{long_id[:43]}…{long_id[-22:]}</text>" in html


def test_the_timeline_axis_spans_the_days_rebalances_only():
    at = dt.datetime(2026, 11, 20, 6, 30)
    lanes = {
        "c/g": [(at, "classic", "a"), (at + dt.timedelta(hours=3, minutes=5), "consumer", "b")]
    }
    html = svg.timeline("Rebalances", lanes)
    ticks = re.findall(r'font-size="10">(\d\d:\d\d)</text>', html)
    assert ticks == ["06:00", "07:00", "08:00", "09:00", "10:00"]
    assert "2026-11-20 06:00 to 10:00 UTC" in html
    assert '<g class="legend">' in html


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
        attention=base.attention.assign(cluster="c\u2066", group_id=SPOOFED),
        per_assignor=base.per_assignor.assign(assignor=["range", "sticky\u200f"]),
        top_paused=top_paused,
        top_lag_skew=base.top_lag_skew.assign(group_id="g\u200b1"),
        worst_lag=base.worst_lag.assign(group_id="g\x1b[31m", topic="t\u00a0x"),
        timeline=base.timeline.assign(group_id=SPOOFED, cause=["left\u202a", None]),
        changes=base.changes.assign(recommended_assignor="sticky\u061c", cluster="c\u2066"),
    )


@pytest.mark.parametrize("char", BIDI_CONTROLS)
def test_visible_spells_out_every_bidi_control(char):
    assert visible(f"a{char}b") == f"a\\u{ord(char):04x}b"


def test_visible_spells_out_controls_and_doubles_backslashes():
    assert visible("x\ty\n\x00") == "x\\u0009y\\u000a\\u0000"
    # An id spelling out \u202e itself must not look like one holding U+202E.
    assert visible("a\\u202eb") == "a\\\\u202eb"
    assert visible("émoji 日本 ok <&>") == "émoji 日本 ok <&>"


def test_report_shows_bidi_and_invisible_characters_in_ids_escaped():
    """Given: a group id with U+202E (and others with U+2066, U+200B, ESC, NBSP, U+200F,
    U+061C, U+202A) in every chart, tooltip, table and the summary.
    Then: no such character reaches the page raw.
    Expected: each shown as \\uXXXX where the id is rendered."""
    html = render(spoofing_facts())
    hidden = [*BIDI_CONTROLS, "\u200b", "\x1b", "\u00a0"]
    assert [c for c in hidden if c in html] == []
    spelled = "grp-evil\\u202ekoorg"
    # Bars and the timeline's lane label (SVG text, whole in its tooltip).
    assert f'"><title>c\\u2066/{spelled}</title>c\\u2066/{spelled}</text>' in html
    assert f'"><title>c/{spelled}</title>c/{spelled}<tspan' in html
    assert "<title>sticky\\u200f</title>sticky\\u200f</text>" in html
    assert "<title>c/g\\u001b[31m t\\u00a0x</title>c/g\\u001b[31m t\\u00a0x</text>" in html
    assert "<title>c/g\\u200b1</title>c/g\\u200b1</text>" in html
    # The first sections' tables: the group cell and its tooltip, the change.
    assert f"<span class='id'>c\\u2066/{spelled}</span>" in html
    assert "'change'>range -&gt; sticky\\u061c</td>" in html
    # The timeline's tooltip.
    assert "<title>generation 2 at 06:30:00: left\\u202a, 2,500 ms</title>" in html


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
