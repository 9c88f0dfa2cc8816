"""The report's history, group sections and readable layout, on tiny inputs (no Spark)."""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser

import pandas as pd
import pytest
from test_report_and_sql import facts

from fleet_rebalance.report import history, svg
from fleet_rebalance.report.details import GroupDetails
from fleet_rebalance.report.history import HistoryFacts
from fleet_rebalance.report.html import render
from fleet_rebalance.report.links import anchor

DAY = dt.date(2026, 11, 20)
LONG = "search-processor-2-with-a-very-long-name-of-its-own"


def test_the_window_ends_at_the_run_date():
    assert history.window(DAY, 3) == [dt.date(2026, 11, 18), dt.date(2026, 11, 19), DAY]


def test_last_week_is_seven_days_back_else_the_oldest_date_of_the_week():
    """Given: dates in the warehouse. Then: the date "new since last week" compares with.
    Expected: run date - 7 when held; else the oldest within the week; None without."""
    week_ago = DAY - dt.timedelta(days=7)
    assert history.baseline_date(DAY, [week_ago - dt.timedelta(days=1), week_ago, DAY]) == (
        week_ago
    )
    assert history.baseline_date(DAY, [DAY - dt.timedelta(days=2), DAY - dt.timedelta(days=1)]) == (
        DAY - dt.timedelta(days=2)
    )
    assert history.baseline_date(DAY, [DAY]) is None
    assert history.baseline_date(DAY, [DAY + dt.timedelta(days=1)]) is None


def test_one_day_is_one_point_and_a_missing_day_a_gap():
    one = svg.sparkline([None, None, 4.0])
    assert "<polyline" not in one and one.count("<circle") == 2  # the point, marked last
    gap = svg.sparkline([1.0, 2.0, None, 3.0])
    assert gap.count("<polyline") == 1  # 1-2 joined; 3 alone after the gap
    assert gap.count('r="1.8"') == 3


def test_log_scales_have_ticks():
    html = svg.bars("Time lag", ["c/g t"], {"max": [5000.0]}, log=True, unit="duration")
    ticks = re.findall(r'class="tick">([^<]+)</text>', html)
    assert ticks == ["1 s", "10 s", "1 min", "10 min", "1 h"]  # the axis ends at 10^4 s
    bands = svg.bands("Lag", ["c/g t"], [(5.0, 50.0, 900.0, 1200.0)])
    assert re.findall(r'class="tick">([^<]+)</text>', bands) == ["1", "10", "100", "1k", "10k"]


def detailed():
    """facts() with history and sections: the listed groups' days and details."""
    base = facts()
    listed = base.listed
    dates = history.window(DAY, 3)
    groups = pd.DataFrame(
        {
            "cluster": ["c", "c", "prod-west"],
            "group_id": ["<g&1>", "<g&1>", LONG],
            "date": [dates[0], DAY, DAY],
            "rebalances": [1, 3, 7],
            "paused_partition_seconds": [None, 12.5, 70.0],
            "last_status": ["OK", "ERR", "WARN"],
            "lag_p99": [10.0, 90.0, None],
        }
    )
    fleet = pd.DataFrame(
        {
            "date": [dates[0], DAY],
            "groups": [4, 5],
            "rebalances": [2, 10],
            "paused_partition_seconds": [None, 82.5],
            "needing_attention": [0, 3],
            "changes": [1, 2],
        }
    )
    started = listed.iloc[:1].assign(was=None)[
        ["cluster", "group_id", "severity", "attention", "change_kind", "was"]
    ]
    appeared = listed.iloc[1:].assign(was="keep")[started.columns]
    h = HistoryFacts(
        dates=dates,
        fleet=fleet,
        groups=groups,
        baseline=dates[0],
        started=started,
        started_total=1,
        appeared=appeared,
        appeared_total=3,
        gone=appeared.iloc[0:0],
        gone_total=0,
    )
    timeline = pd.DataFrame(
        {
            "cluster": ["c", "c", "c"],
            "group_id": ["<g&1>"] * 3,
            "generation": [4, 5, 6],
            "protocol": ["classic"] * 3,
            "started_at": pd.to_datetime(["2026-11-20 06:30", "2026-11-20 07:10", pd.NaT]),
            "duration_ms": [2500, None, None],
            "cause": ["member left", None, None],
            "cause_kind": ["deploy_restart", "follow-up round", "not classified"],
        }
    )
    recs = pd.DataFrame(
        {
            "cluster": ["c"],
            "group_id": ["<g&1>"],
            "declared_assignor": ["range"],
            "recommended_assignor": ["sticky"],
            "compared_with": ["range"],
            "events": [3],
            "declared_paused_partitions": [10],
            "recommended_paused_partitions": [4],
            "declared_max_count_spread": [2],
            "recommended_max_count_spread": [1],
            "declared_mean_lag_skew": [1.5],
            "recommended_mean_lag_skew": [None],
            "declared_stickiness": [0.5],
            "recommended_stickiness": [0.9],
            "reason": ["sticky pauses fewer"],
        }
    )
    lag = base.worst_lag.assign(group_id="<g&1>")
    details = GroupDetails(timeline=timeline, recommendations=recs, lag=lag)
    return facts(history=h, details=details, timeline=timeline)


def test_history_section_writes_every_number_with_its_unit():
    html = render(detailed())
    part = html[html.index("<h2 id='history'>") : html.index("What the group runs")]
    assert "Last 3 days: 2026-11-18 to 2026-11-20</h2>" in part
    assert "2 of the 3 dates have rows" in part
    assert "data-label='paused (partition-s)'>82.5</td>" in part and "12.5 partition-s" in part
    assert "90 messages" in part  # the worst topic's p99 lag on the last date
    assert "New since last week: 2026-11-20 compared with 2026-11-18</h3>" in part
    assert "1 started needing attention" in part and "3 changes appeared" in part
    assert "static_membership (was keep)" in part
    assert "... and 2 more (SELECT ... FROM group_health)" in part
    assert "0 changes went away" in part
    # Status per day: a strip, the last status coloured and written, the ERR days counted.
    assert "<span class='status ERR'>ERR</span>" in part and "ERR 1 of 2 days" in part


def test_every_listed_group_has_a_section_linked_from_tables_and_charts():
    f = detailed()
    html = render(f)
    for r in f.listed.itertuples():
        target = anchor(r.cluster, r.group_id)
        assert f"<section class='group' id='{target}'>" in html
        assert html.count(f"href='#{target}'") >= 3  # attention, changes, history tables
    ids = set(re.findall(r"id='([^']+)'", html))
    assert set(re.findall(r"href=['\"]#([^'\"]+)['\"]", html)) <= ids
    # The lag charts name c/g (not listed here): no link; the sections' charts link none.
    lag = html[html.index("Lag percentile") : html.index("What the group runs")]
    assert 'href="#' not in lag
    timeline = html[html.index("<h2>Rebalance timeline") : html.index("<h2 id='groups'>")]
    assert f'href="#{anchor("c", "<g&1>")}"' in timeline


def test_a_groups_section_shows_its_generations_replay_and_lag():
    html = render(detailed())
    section = html[html.index(f"id='{anchor('c', '<g&1>')}'") :]
    section = section[: section.index("</section>")]
    assert "<span class='status ERR'>ERR (worst STOP)</span>" in section
    assert "Generations of c/&lt;g&amp;1&gt;, by cause" in section
    # Cause and duration written, not only in tooltips; the legend names each cause.
    assert "data-label='duration'>2,500 ms</td>" in section
    assert "data-label='cause'>deploy_restart</td>" in section
    assert "deploy_restart (1)" in section and "follow-up round (1)" in section
    assert "declared (range)" in section and "recommended (sticky)" in section
    assert ">10</td>" in section and ">4</td>" in section and "90.0 %" in section
    assert "data-label='p99'>90</td>" in section


def test_timeline_lanes_go_by_count_and_marks_by_cause():
    at = dt.datetime(2026, 11, 20, 6)
    lanes = {
        "c/busy": [(at, "scale_out", "a"), (at, "scale_out", "b"), (at, "poll_timeout", "c")],
    }
    html = svg.timeline("t", lanes, notes={"c/busy": "· 3 generations"})
    assert svg.CAUSE_COLOURS["scale_out"] in html and svg.CAUSE_COLOURS["poll_timeout"] in html
    legend = html[html.index('<g class="legend">') :]
    assert legend.index("scale_out (2)") < legend.index("poll_timeout (1)")
    f = detailed()
    two = pd.concat([f.timeline, f.timeline.assign(group_id="z", generation=[1, 2, 3])])
    two = pd.concat([two, two.iloc[3:4].assign(generation=9)])
    page = render(facts(timeline=two))
    assert page.index(">c/z<tspan") < page.index(">c/&lt;g&amp;1&gt;<tspan")


def test_statuses_are_coloured_with_their_text():
    html = render(detailed())
    assert ".status.ERR,.status.STOP,.status.STALL{border-color:#c62828" in html
    assert ".status.WARN,.status.REWIND{border-color:#f9a825" in html
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in html


def test_history_days_is_a_conf_key(tmp_path):
    """report.history_days: 14 by default, a count from the conf file, refused below 1."""
    from fleet_rebalance.config import Config, ConfigError, load_config

    assert Config().report.history_days == 14
    conf = tmp_path / "conf.yaml"
    conf.write_text("report:\n  history_days: 30\n", encoding="utf-8")
    assert load_config(conf, base_dir=tmp_path).report.history_days == 30
    conf.write_text("report:\n  history_days: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"report\.history_days: expected an int from 1"):
        load_config(conf, base_dir=tmp_path)


def test_the_migration_section_counts_waves_and_blockers_and_lists_the_first_groups():
    from dataclasses import replace

    from fleet_rebalance.report.migration import MigrationFacts

    f = detailed()
    first = pd.DataFrame(
        {
            "cluster": ["c", "prod-west"],
            "group_id": ["<g&1>", "quiet"],
            "migration_order": [1, 2],
            "wave": [1, 2],
            "declared_assignor": ["range", None],
            "paused_partitions_saved": [360, 0],
            "paused_partition_seconds_saved": [540.0, None],
            "reason": ["uniform would pause 40 partitions <less>", "no replayed rebalance"],
        }
    )
    plan = MigrationFacts(
        groups=5,
        waves={1: 1, 2: 1},
        blockers={"custom_assignor": 2},
        cautions={"static_membership": 1},
        not_applicable=1,
        first=first,
    )
    html = render(replace(f, migration=plan))
    section = html[html.index("<h2 id='kip848-migration'>") :]
    assert "5 classic groups, 1 with no member to migrate" in section
    for text in (
        "wave 1: ready, uniform pauses less",
        "blocked: custom_assignor",
        "caution: static_membership",
    ):
        assert text in section
    assert "360 partitions" in section and "540 partition-s" in section and "unknown" in section
    assert "&lt;less&gt;" in section and "<less>" not in section
    assert f"href='#{anchor('c', '<g&1>')}'" in section  # a listed group links to its section
    assert "KIP-1274" in section
    empty = render(replace(f, migration=replace(plan, groups=0, first=first.iloc[:0])))
    assert "No classic group today" in empty


def test_a_kip848_groups_section_says_how_fast_it_converged():
    from dataclasses import replace

    f = detailed()
    listed = f.listed.copy()
    first = listed.index[0]
    values = {
        "epoch_bumps": 7,
        "epochs_converged": 5,
        "convergence_max_seconds": 9.95,
        "convergence_median_seconds": 5.18,
        "members_stuck_reconciling": 1,
        "classic_members": 2,
    }
    for column, value in values.items():
        listed[column] = None
        listed.loc[first, column] = value
    html = render(replace(f, listed=listed))
    assert (
        "<b>KIP-848 convergence:</b> 7 epoch bumps, 5 converged, each within at most 9.9 s "
        "(median 5.2 s, as the captures bound it); 1 member(s) stuck reconciling; 2 classic "
        "member(s) left: a migration in progress." in html
    )
    assert html.count("KIP-848 convergence") == 1  # the other listed groups have no epochs


HOSTILE = "<img src=x onerror=alert(1)>\"'&"


class _Page(HTMLParser):
    """Every tag and attribute the page really has, and its text and attribute values
    as a browser reads them (entities decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.values: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}
        self.values += [value for _, value in attrs if value]

    def handle_data(self, data):
        self.values.append(data)


def test_a_hostile_group_id_is_only_ever_written_escaped():
    """Given: a group id holding a tag, both quotes and an ampersand, listed (so in the
    tables, charts, history, migration plan and its own section).
    Then: the page parsed as a browser parses it.
    Expected: no tag or attribute of the id's; the id read back whole wherever the page
    writes it, and nowhere written raw."""
    from dataclasses import fields, is_dataclass, replace

    from fleet_rebalance.report.migration import MigrationFacts

    def hostile(value):
        if isinstance(value, pd.DataFrame) and "group_id" in value.columns:
            return value.assign(group_id=value.group_id.replace("<g&1>", HOSTILE))
        if is_dataclass(value):
            return replace(
                value, **{f.name: hostile(getattr(value, f.name)) for f in fields(value)}
            )
        return value

    first = pd.DataFrame(
        {
            "cluster": ["c"],
            "group_id": ["<g&1>"],
            "migration_order": [1],
            "wave": [1],
            "declared_assignor": ["range"],
            "paused_partitions_saved": [360],
            "paused_partition_seconds_saved": [540.0],
            "reason": ["uniform pauses fewer"],
        }
    )
    plan = MigrationFacts(
        groups=1, waves={1: 1}, blockers={}, cautions={}, not_applicable=0, first=first
    )
    html = render(hostile(replace(detailed(), migration=plan)))
    page = _Page()
    page.feed(html)
    assert "img" not in page.tags and "onerror" not in page.attributes
    shown = [v for v in page.values if HOSTILE in v]
    written = html.count("onerror=alert(1)")
    assert len(shown) == written  # each time the page writes the id, it reads back whole
    # The tables, its section's heading, its chart labels and tooltips, history, the plan.
    assert written >= 10
    for section in ("<h2 id='history'>", "<h2 id='kip848-migration'>", "<h2 id='groups'>"):
        assert "onerror" in html[html.index(section) :]
