"""What an ingest run does per date: re-ingest it whole (a file new, changed or gone),
record only its files not read, or skip it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any

from fleet_rebalance.capture import store
from fleet_rebalance.capture.result import REJECTED, SKIPPED
from fleet_rebalance.capture.store import RawFile
from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import Location
from fleet_rebalance.pipeline.ingest.ledger import identities, ingested_row
from fleet_rebalance.pipeline.ingest_files import Selection, rejection, select

log = logging.getLogger("fleet_rebalance.ingest")


@dataclasses.dataclass
class Plan:
    """What a run does. `todo`: the dates re-ingested, with the files to parse;
    `unread`: the dates whose rows of files not read are written (every date of `todo`,
    and those whose captures are unchanged but not these rows); `not_read`: every file
    of the run's dates not read, by path, for the log."""

    todo: dict[dt.date, list[RawFile]] = dataclasses.field(default_factory=dict)
    unread: dict[dt.date, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    not_read: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)


def plan_run(
    config: Config,
    raw_root: Location,
    files: list[RawFile],
    days: list[dt.date],
    recorded: list[dict[str, Any]],
) -> Plan:
    """Each of `days` against its ingested_files rows `recorded` before."""
    plan = Plan()
    for day in days:
        files = store.with_log_kinds(raw_root, files, day)
        chosen = select(files, day)
        if not chosen.has_captures:
            # A night with no captures at all is a broken capture pipeline, not a quiet day.
            raise FileNotFoundError(_no_captures(day, config, chosen))
        rows = _unread_rows(chosen, config.capture.path_pattern)
        plan.not_read.update({row["path"]: row for row in rows})
        before = [r for r in recorded if r["capture_date"] == day]
        if not _unchanged(chosen.taken, before, raw_root):
            plan.todo[day], plan.unread[day] = chosen.taken, rows
        elif identities(rows) != identities(r for r in before if r["sha256"] is None):
            plan.unread[day] = rows
            log.info("%s: captures unchanged; recording the files not read", day)
        else:
            log.info(
                "%s: %d file(s), all ingested before with the same size and sha256; skipped",
                day,
                len(chosen.taken),
            )
    return plan


def _no_captures(day: dt.date, config: Config, chosen: Selection) -> str:
    message = (
        f"no capture files for {day} under {config.raw_root} "
        f"(path_pattern {config.capture.path_pattern!r})"
    )
    if chosen.rejected:
        message += (
            f"; {len(chosen.rejected)} file(s) with no valid capture time in their path "
            f"were rejected, e.g. {chosen.rejected[0].relative!r}"
        )
    return message


def not_read_counts(rows: Iterable[dict[str, Any]]) -> str:
    """The summary line's count of the files not read, by status (skipped, rejected)."""
    paths: dict[str, set[str]] = {SKIPPED: set(), REJECTED: set()}
    for row in rows:
        paths.setdefault(row["status"], set()).add(row["path"])
    return ", ".join(f"{len(p)} file(s) {status}" for status, p in paths.items())


def _unchanged(taken: list[RawFile], before: list[dict[str, Any]], raw_root: Location) -> bool:
    """Whether a date's files are the ones ingested before, byte for byte: the rows of
    the files read whole then (those with a sha256) against the files taken now. Sizes
    first: a file is hashed here only when its day may be skipped (the parse tasks hash
    what they read)."""
    read = {r["path"]: r for r in before if r["sha256"] is not None}
    if set(read) != {raw.relative for raw in taken}:
        return False  # a file is new, or gone (its rows must go too), or now unreadable
    if any(read[raw.relative]["size"] != raw.size for raw in taken):
        return False
    try:
        return all(
            read[raw.relative]["sha256"] == store.sha256(raw_root, raw.relative) for raw in taken
        )
    except store.UnreadableFile:
        return False  # changed since the listing: the parse tasks record why


def _unread_rows(chosen: Selection, path_pattern: str) -> list[dict[str, Any]]:
    """ingested_files rows of the date's entries that are not parsed: skipped (must not
    be read) and rejected (no valid path timestamp and not a log). They feed no table
    and no quarantine: nothing of them was read but, for the rejected, a log sniff."""
    entries = [(raw, SKIPPED, raw.skipped) for raw in chosen.skipped]
    entries += [(raw, REJECTED, rejection(raw, path_pattern)) for raw in chosen.rejected]
    return [
        ingested_row(raw, chosen.day, status=status, reason=reason)
        for raw, status, reason in entries
    ]
