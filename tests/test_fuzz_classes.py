"""Issue 36's fuzz classes (tests/fuzz_classes.py): items 2, 6 and 8 each in a seeded
batch of variants with no problem, and each class's check catching the failure it is
for when it is put there by hand (so a quiet fuzz run means something)."""

from __future__ import annotations

import gzip
import random

import fuzz_classes
import pytest
import zstandard
from fuzz_classes import (
    CLASSES,
    DATE_MISMATCH,
    Derived,
    absurd_log_end,
    check_absurd_log_end,
    check_compressed,
    check_far_dates,
    lag_history,
    readable,
)
from fuzz_support import LOG_MIXED, SEEDS, run_capture

import fleet_rebalance.capture.bronze_batches as bronze_batches
import fleet_rebalance.metrics.lag_distribution as lag_distribution

BATCH = 25


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_a_seeded_batch_of_each_class_shows_no_problem(name):
    fuzz_class = CLASSES[name]
    rng = random.Random(f"issue 36 item {fuzz_class.item}")
    for _ in range(BATCH):
        variant = fuzz_class.make(rng, 2_000)
        assert fuzz_class.check(variant) == [], variant.mutations


def _log_seed():
    return next(s for s in SEEDS["coordinator_log"] if s.name == "log, both coordinators")


def test_far_dated_log_lines_are_quarantined_with_the_date_mismatch_reason():
    """Given: LOG_MIXED's Stabilized line (line 3) dated 3 days after its path's date.
    Then: that line is quarantined with a date mismatch reason, not written; the check
    agrees."""
    seed = _log_seed()
    data = LOG_MIXED.encode()
    moved = data.replace(b"[2026-11-20 09:40:08,002]", b"[2026-11-23 09:40:08,002]")
    variant = Derived(seed, moved, ("by hand",), data)
    out = run_capture(variant.files)[seed.target]
    assert [
        (q["line_number"], q["reason"][: len(DATE_MISMATCH)]) for q in out.rows["quarantine"]
    ] == [(3, DATE_MISMATCH)]
    assert 3 not in {r["line_number"] for r in out.rows["coordinator_events"]}
    assert check_far_dates(variant) == []


def test_the_far_dates_check_sees_a_far_line_left_unquarantined(monkeypatch):
    """Given: the stray-date quarantine switched off. Then: the check reports the line."""
    monkeypatch.setattr(bronze_batches, "quarantine_stray_dates", lambda *args: None)
    data = LOG_MIXED.encode()
    moved = data.replace(b"[2026-11-20 09:40:08,002]", b"[2026-11-23 09:40:08,002]")
    problems = check_far_dates(Derived(_log_seed(), moved, ("by hand",), data))
    assert [(p.check, p.line_number) for p in problems] == [
        ("far-dated line not quarantined with a date mismatch reason", 3)
    ]


def _absurd_variants(count: int) -> list[Derived]:
    rng = random.Random("absurd")
    return [absurd_log_end(rng, 2_000) for _ in range(count)]


def test_an_accepted_absurd_log_end_moves_no_other_group():
    """Given: histories where one orders row reads LOG-END-OFFSET 2^63-1, 9e18, 0, ...
    and the row is stored. Then: no other group's lag_distribution row changes."""
    accepted = [
        v
        for v in _absurd_variants(40)
        if not run_capture({v.seed.target: v.data})[v.seed.target].rows.get("quarantine")
    ]
    assert accepted
    for variant in accepted:
        assert check_absurd_log_end(variant) == [], variant.mutations


def test_the_absurd_log_end_check_sees_damage_without_the_refusals(monkeypatch):
    """Given: log_end_checks switched off (every reading a shared point, the state issue
    36 found). Then: the check reports other groups' changed rows, and the absurd
    reading missing from log_end_quarantine."""
    monkeypatch.setattr(lag_distribution, "refused_log_ends", lambda times, ends: {})
    checks = {p.check for v in _absurd_variants(40) for p in check_absurd_log_end(v)}
    assert checks == {
        "one absurd offsets row changed another group's lag_distribution",
        "an absurd log end stored and not in log_end_quarantine",
    }


def test_the_history_shares_partitions_between_three_groups():
    seed = lag_history(random.Random(0))
    rows = run_capture(seed.files)
    groups = {
        r["group_id"]
        for out in rows.values()
        for r in out.rows["offsets"]
        if (r["topic"], r["partition"]) == ("orders", 0)
    }
    assert len(seed.files) == 4 and groups == {"a-readers", "b-readers", "c-readers"}


@pytest.mark.parametrize("method", ["gzip", "zstd"])
def test_a_cut_compressed_log_keeps_no_line_of_its_cut_member(method):
    """Given: LOG_MIXED compressed (one member or frame) and cut in its second half.
    Then: nothing of the unverified member is stored (issue 56), the file says why."""
    seed = _log_seed()
    data = LOG_MIXED.encode()
    packed = gzip.compress(data, mtime=0) if method == "gzip" else zstandard.compress(data)
    cut = packed[: len(packed) * 3 // 4]
    plain, whole = readable(cut)
    assert not whole and data.startswith(plain)
    variant = Derived(seed, cut, (f"{method} cut",), data)
    assert check_compressed(variant) == []
    out = run_capture(variant.files)[seed.target]
    assert [q for q in out.rows["quarantine"] if q["line_number"] is None]
    assert plain == b"" and not out.rows.get("coordinator_events")


def test_the_compressed_check_sees_rows_differing_from_the_plain_files(monkeypatch):
    """Given: a whole gzip capture, and zlib made to read it with another generation (as
    if the parser's decompression changed a byte). Then: the check reports the rows."""
    seed = _log_seed()
    data = LOG_MIXED.encode()
    variant = Derived(seed, gzip.compress(data, mtime=0), ("gzip",), data)
    assert check_compressed(variant) == []
    other = data.replace(b"generation 42", b"generation 43")
    monkeypatch.setattr(fuzz_classes, "readable", lambda packed: (other, True))
    checks = {p.check for p in check_compressed(variant)}
    assert "compressed file's coordinator_events rows differ from the plain file's" in checks


def test_a_gzip_cut_between_its_members_is_the_first_members_file():
    """Given: two gzip members cut where the first ends (zcat reads the first member's
    lines, no damage). Then: the capture is checked as that shorter file, no problem."""
    seed = _log_seed()
    data = LOG_MIXED.encode()
    first = gzip.compress(data[:400], mtime=0)
    packed = first + gzip.compress(data[400:], mtime=0)
    assert readable(packed[: len(first)]) == (data[:400], True)
    variant = Derived(seed, packed[: len(first)], ("gzip, 2 members, cut",), data)
    assert check_compressed(variant) == []
