"""The parse tasks' reports read on the driver: every file's lines accounted for
(lines = parsed + quarantined + structural) or the run fails, and each file's summary
logged at the level it deserves."""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

from fleet_rebalance.capture.coordinator_log import UNMATCHED_GROUP_LINE
from fleet_rebalance.capture.result import accounting

log = logging.getLogger("fleet_rebalance.ingest")


class ReconciliationError(RuntimeError):
    """A file whose lines are not all accounted for: a parser bug, never ignored."""


def reports(bodies: list[str]) -> list[dict[str, Any]]:
    """The parse stage's file summaries (capture/bronze_batches.py), from their JSON."""
    return [json.loads(body) for body in bodies]


def check_reconciliation(summaries: list[dict[str, Any]]) -> None:
    """Each file's accounting logged; ReconciliationError when any does not add up."""
    broken = [s for s in summaries if not s["reconciles"]]
    for s in sorted(summaries, key=lambda s: s["source_file"]):
        failed_groups = s.get("failed_groups")  # the exporter's gaps (capture/jsonl.py)
        noteworthy = s["quarantined"] or s["status"] != "ok" or s["notes"] or failed_groups
        missed = s["notes"].get(UNMATCHED_GROUP_LINE)  # events of a line we cannot read
        log.log(
            logging.WARNING if missed else logging.INFO if noteworthy else logging.DEBUG,
            "%s [%s, %s]: %s; %d rows%s%s%s",
            s["source_file"],
            s["kind"],
            s["status"],
            _accounting(s),
            s["rows"],
            f"; whole file quarantined: {s['file_quarantine']}" if s.get("file_quarantine") else "",
            f"; {json.dumps(s['notes'])}" if s["notes"] else "",
            f"; {failed_groups}" if failed_groups else "",
        )
    statuses = Counter(s["status"] for s in summaries)
    log.info(
        "files parsed: %d (%s)",
        len(summaries),
        ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
    )
    if broken:
        names = ", ".join(s["source_file"] for s in broken[:5])
        raise ReconciliationError(
            f"{len(broken)} file(s) do not reconcile (lines != parsed + "
            f"quarantined + structural): {names}"
        )


def _accounting(summary: dict[str, Any]) -> str:
    """lines = parsed + quarantined + structural, in lines: a whole-file quarantine row
    counts as the lines it stands for (none for an empty file)."""
    counts = ("lines", "parsed_lines", "quarantined_lines", "structural")
    return accounting(*(summary[key] for key in counts))
