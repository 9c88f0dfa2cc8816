"""What one step's run of one date was computed from, as one sha256: pipeline_runs
records it per (date, step), and a backfill skips a date whose records match what its
steps would run on now (pipeline/runs.py).

- ingest: the date's files as ingested_files records them: (path, size, sha256) of every
  file read whole, (path, size, status, reason) of every entry not read.
- replay: the ingest digests of the date and of the day before (its carried-over
  state), the assignors, and the code version.
- metrics: the replay digest recorded for the date (what silver holds), the ingest
  digests of the date and the day before (the bronze offsets, states and broker logs it
  reads itself), the conf's metrics section, and the code version.

So a changed file of day D invalidates ingest of D, replay and metrics of D and of D+1.
The code version is the package's version and a hash of its installed source: any
code change invalidates every record. Spark-free.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import fleet_rebalance
from fleet_rebalance.capture import store
from fleet_rebalance.capture.result import REJECTED, SKIPPED
from fleet_rebalance.config import MetricsConfig
from fleet_rebalance.filesystems import Location
from fleet_rebalance.pipeline.ingest_files import Selection, rejection

# A file's entry in the ingest digest: how ingested_files records it.
FileEntry = tuple[Any, ...]


@functools.cache
def code_version() -> str:
    """`<version>+<16 hex>`: the hash covers the names and contents of the installed
    package's .py files, as spark-submit.sh hashes src/ (about 30 ms, once a process)."""
    package = Path(fleet_rebalance.__file__).parent
    files = sorted(
        (p for p in package.rglob("*") if p.is_file() and p.name.endswith((".py", "py.typed"))),
        key=lambda p: p.relative_to(package).as_posix().encode(),
    )
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(package).as_posix()
        digest.update(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}\n".encode())
    return f"{fleet_rebalance.__version__}+{digest.hexdigest()[:16]}"


def recorded_entry(row: Mapping[str, Any]) -> FileEntry:
    """An ingested_files row's entry: a file read whole by its sha256, one not read
    (skipped, rejected, or unreadable when parsed) by its status and reason."""
    if row["sha256"] is not None:
        return ("read", row["path"], row["size"], row["sha256"])
    return ("unread", row["path"], row["size"], row["status"], row["reason"])


def raw_entries(raw_root: Location, chosen: Selection, path_pattern: str) -> list[FileEntry]:
    """The entries ingest would record for the date's files as they are now: each file
    it takes hashed (streamed through the store's filesystem), each entry it does not
    read as it records it. Raises store.UnreadableFile when a file cannot be read (then
    the date is not what was ingested)."""
    entries: list[FileEntry] = [
        ("read", raw.relative, raw.size, store.sha256(raw_root, raw.relative))
        for raw in chosen.taken
    ]
    entries += [("unread", raw.relative, raw.size, SKIPPED, raw.skipped) for raw in chosen.skipped]
    entries += [
        ("unread", raw.relative, raw.size, REJECTED, rejection(raw, path_pattern))
        for raw in chosen.rejected
    ]
    return entries


def files_digest(entries: Iterable[FileEntry]) -> str:
    """The ingest digest of a date: its entries in a canonical order."""
    return _sha256(sorted(_text(list(entry)) for entry in entries))


def replay_digest(day: str, previous: str, assignors: Sequence[str], code: str) -> str:
    """`day` and `previous`: the ingest digests of the date and of the day before."""
    return _sha256({"day": day, "previous": previous, "assignors": list(assignors), "code": code})


def metrics_digest(
    replay: str | None, day: str, previous: str, metrics: MetricsConfig, code: str
) -> str:
    """`replay`: the replay digest recorded for the date (None: no replay recorded)."""
    return _sha256(
        {
            "replay": replay,
            "day": day,
            "previous": previous,
            "metrics": dataclasses.asdict(metrics),
            "code": code,
        }
    )


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _sha256(value: Any) -> str:
    return hashlib.sha256(_text(value).encode()).hexdigest()
