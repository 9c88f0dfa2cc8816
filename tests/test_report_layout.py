"""The report of a 3-day warehouse (the sample's 2026-11-19 and 2026-11-20, and a
generated 2026-11-21): its history and group sections agree with the tables, its reads
stay in the window, and headless Chromium lays it out at 390 and 1400 px with no cell
overflowing and every chart inside the viewport (screenshots in the test's tmp dir)."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pyspark.sql.functions as F
import pytest
from chromium import Chromium, browser

from fleet_rebalance.config import Config, ZonesConfig
from fleet_rebalance.generate.fleet import FleetSpec, write_fleet
from fleet_rebalance.generate.zones import CONSUMER_CIDRS
from fleet_rebalance.metrics.rack_aware_rules import gb, money
from fleet_rebalance.pipeline.nightly import report, run_steps
from fleet_rebalance.report import history
from fleet_rebalance.report.facts import gather
from fleet_rebalance.report.html import render
from fleet_rebalance.report.links import anchor
from fleet_rebalance.storage import read_table
from fleet_rebalance.storage.warehouse import Warehouse

pytestmark = [pytest.mark.spark, pytest.mark.slow]
PROJECT = Path(__file__).resolve().parent.parent
DAYS = [dt.date(2026, 11, 19), dt.date(2026, 11, 20), dt.date(2026, 11, 21)]
LAST = DAYS[-1]
# The generated day's captures carry its brokers' racks and replicas' sizes; the conf
# places its consumers by their subnets (generate/zones.py, as conf/local.yaml does), and
# the consumers of one prod-east group all sit in one zone: the cross-zone section has
# rows. data/sample's two days come from the session's nightlies, run with Config()'s
# defaults (no consumer_cidrs): there their reads' zones are unknown.
ZONES = ZonesConfig(consumer_cidrs=CONSUMER_CIDRS)


@pytest.fixture(scope="module")
def three_days(spark, sample_nightlies, tmp_path_factory):
    """(config, report path) of a warehouse holding the sample's two dates and one
    generated day more, each date's nightly run, the last date's report written: a copy
    of the session's sample nightlies (conftest.sample_nightlies), the sample and the
    generated day under raw_root, the last date's nightly run."""
    browser()  # no browser, no run: fail in one line before the nightly
    root = tmp_path_factory.mktemp("three-days")
    raw = root / "raw"
    shutil.copytree(PROJECT / "data" / "sample", raw)
    spec = FleetSpec(start=dt.datetime(2026, 11, 21, 0, tzinfo=dt.UTC), hours=6)
    write_fleet(spec, raw)
    shutil.copytree(sample_nightlies.config.warehouse, root / "wh")
    config = Config(raw_root=str(raw), warehouse=str(root / "wh"), zones=ZONES)
    run_steps(spark, config, LAST)
    lines = report(spark, config, LAST)
    return config, Path(lines[-1].removeprefix("report: ").removeprefix("file://"))


class Recording(Warehouse):
    """A Warehouse that notes what each read asked for."""

    def __init__(self, spark, root) -> None:
        super().__init__(spark, root)
        self.reads: list[tuple[str, object]] = []

    def read(self, name, *, version=None, where=None):
        self.reads.append((name, where))
        return super().read(name, version=version, where=where)


def test_history_agrees_with_group_health_and_reads_only_its_window(spark, three_days):
    """Given: 3 dates in the warehouse, a 14-day window.
    Then: fleet totals per date are group_health's own sums; the baseline of "new since
    last week" is the oldest date of the week; every read names the window's dates."""
    config, _ = three_days
    facts = gather(spark, config, LAST)
    warehouse = Recording(spark, config.warehouse)
    h = history.gather(warehouse, LAST, 14, facts.listed, 10)
    assert h.dates == [LAST - dt.timedelta(days=13 - i) for i in range(14)]
    assert list(h.fleet.date) == DAYS
    assert h.baseline == DAYS[0]
    health = read_table(spark, config.table_path("group_health"))
    expected = {
        r["date"]: (r["n"], r["rebalances"], r["attention"])
        for r in health.groupBy("date")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.sum("rebalances").alias("rebalances"),
            F.sum((F.col("severity") > 0).cast("int")).alias("attention"),
        )
        .collect()
    }
    got = {r.date: (r.groups, r.rebalances, r.needing_attention) for r in h.fleet.itertuples()}
    assert got == expected
    assert {name for name, _ in warehouse.reads} == {"group_health", "lag_distribution"}
    week_back = set(history.window(LAST, 8)) | set(h.dates)
    for name, where in warehouse.reads:
        assert set(where) == {"date"} and set(where["date"]) <= week_back, (name, where)
    # The listed groups' days: one row per group and date that has one.
    assert len(h.groups) == len(h.groups.drop_duplicates(["cluster", "group_id", "date"]))
    assert set(h.groups.date) <= set(DAYS)


def test_a_warehouse_with_one_date_shows_one_point(spark, three_days):
    config, _ = three_days
    facts = gather(spark, config, DAYS[0])
    h = facts.history
    assert list(h.fleet.date) == [DAYS[0]] and h.baseline is None
    html = render(facts)
    assert "No earlier date of the past week is in the warehouse to compare with." in html
    assert "1 of the 14 dates have rows in the warehouse" in html
    fleet = html[html.index("<h3>Fleet totals per day</h3>") :]
    first = fleet[: fleet.index("</figure>")]
    assert "<polyline" not in first and first.count("<circle") == 2  # the point, marked last


def test_every_listed_group_has_a_section_and_every_link_lands(three_days):
    _, path = three_days
    html = path.read_text(encoding="utf-8")
    ids = set(re.findall(r"id='([^']+)'", html))
    targets = re.findall(r"href=['\"]#([^'\"]+)['\"]", html)
    assert targets and set(targets) <= ids
    sections = re.findall(r"<section class='group' id='(g-[0-9a-f]{16})'>", html)
    assert len(sections) == len(set(sections)) >= 1
    # The attention table's rows link to their sections.
    attention = html[html.index("Groups that need attention") : html.index("Changes to make")]
    assert set(re.findall(r"href='#(g-[0-9a-f]+)'", attention)) <= set(sections)
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in html


def test_sections_agree_with_the_tables(spark, three_days):
    """Each section's generations are rebalance_timeline's rows of its group and date."""
    config, _ = three_days
    facts = gather(spark, config, LAST)
    timeline = read_table(spark, config.table_path("rebalance_timeline"))
    for r in facts.listed.itertuples():
        mine = facts.details.timeline
        mine = mine[(mine.cluster == r.cluster) & (mine.group_id == r.group_id)]
        expected = timeline.where(
            (F.col("date") == F.lit(LAST))
            & (F.col("cluster") == r.cluster)
            & (F.col("group_id") == r.group_id)
        ).count()
        assert len(mine) == expected, (r.cluster, r.group_id)
        assert mine.cause_kind.notna().all()
        assert anchor(r.cluster, r.group_id) in render(facts)


def table_rows(html: str) -> list[dict[str, str]]:
    """The first table's body rows in `html`, each cell's text by its data-label."""
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    return [
        {label: re.sub(r"<[^>]+>|\s+", "", text) for label, text in re.findall(
            r"data-label='([^']*)'>(.*?)</td>", row, re.S)}
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]  # fmt: skip


def test_the_cross_zone_section_is_the_tables_sums(spark, three_days):
    """Per cluster, the section's figures are cross_zone_traffic's of the date summed,
    in the units the rack_aware change writes; the costliest group comes first."""
    config, path = three_days
    html = path.read_text(encoding="utf-8")
    section = html[html.index("<h2 id='cross-zone'>") :]
    traffic = read_table(spark, config.table_path("cross_zone_traffic")).where(
        F.col("date") == F.lit(LAST)
    )
    sums = traffic.groupBy("cluster").agg(
        F.count("*").alias("groups"),
        F.sum("read_bytes").alias("read"),
        F.sum("cross_zone_leader_bytes").alias("leader"),
        F.sum("cross_zone_leader_cost").alias("cost"),
    )
    expected = [
        {"cluster": r["cluster"], "groups": str(r["groups"]), "read/day": gb(r["read"]),
         "across zones/day": gb(r["leader"]), "cost/day": money(r["cost"])}
        for r in sums.orderBy("cluster").collect()
    ]  # fmt: skip
    shown = [{k: row[k] for k in expected[0]} for row in table_rows(section)]
    assert shown == [{k: v.replace(" ", "") for k, v in e.items()} for e in expected]
    assert {e["cluster"] for e in expected} == {"prod-east", "prod-west", "lab"}
    assert traffic.agg(F.sum("cross_zone_leader_bytes")).first()[0] > 0
    costliest = traffic.orderBy(F.col("cross_zone_leader_cost").desc()).first()
    top = table_rows(section[section.index("Costliest cross-zone reads") :])
    assert top[0]["group"] == f"{costliest['cluster']}/{costliest['group_id']}"


# Measured in the page: cells whose text overflows them, charts outside the viewport,
# the page wider than the viewport, how the charts are scaled and placed.
MEASURE = """(() => {
  const width = document.documentElement.clientWidth;
  const cells = [...document.querySelectorAll('td, th')]
    .filter(c => c.scrollWidth > c.clientWidth + 1 && c.getClientRects().length)
    .map(c => c.textContent.slice(0, 80));
  const charts = [...document.querySelectorAll('svg.chart')].map(s => {
    const r = s.getBoundingClientRect();
    return {label: s.getAttribute('aria-label'), left: r.left, right: r.right, top: r.top,
            scale: r.width / s.viewBox.baseVal.width};
  });
  return {width, page: document.documentElement.scrollWidth, cells, charts};
})()"""


@pytest.fixture(scope="module")
def chromium():
    browser_ = Chromium()
    yield browser_
    browser_.close()


@pytest.mark.parametrize("width", [390, 1400])
def test_the_report_fits_the_screen(three_days, chromium, width, tmp_path):
    _, path = three_days
    chromium.open(path, width)
    chromium.screenshot(tmp_path / f"report-{width}.png")
    shot = (tmp_path / f"report-{width}.png").read_bytes()
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(shot[16:20], "big") == width
    m = chromium.evaluate(MEASURE)
    assert m["width"] == width
    assert m["cells"] == [], "table cells whose text overflows"
    assert m["page"] <= width, "the page scrolls sideways"
    assert len(m["charts"]) >= 7
    outside = [c for c in m["charts"] if c["left"] < -0.5 or c["right"] > width + 0.5]
    assert outside == []
    if width == 390:
        # Scaled to the phone's width, not below 3/4 of their drawn size (12 px text
        # stays at least 9 px).
        assert min(c["scale"] for c in m["charts"]) >= 0.75
    else:
        # The wide screen's width is used: charts side by side, the content wide.
        tops = [round(c["top"]) for c in m["charts"]]
        assert len(set(tops)) < len(tops), "no two charts share a row"
        assert max(c["right"] for c in m["charts"]) > 0.8 * width
