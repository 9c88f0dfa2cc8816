"""Cycles: one thread per cluster, so a slow or unreachable cluster only delays itself.

Each cluster's thread captures, writes, reports one status line, then waits for the
rest of its interval (a cycle longer than the interval starts the next one at once:
ticks are skipped, never stacked). A failed cycle (ClusterUnavailable, a write error)
writes nothing and is retried after Backoff.delay(failures in a row), doubling up to
backoff.max_s; a success resets it. `--once` runs one cycle of every cluster at once
and reports each as it finishes.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from fleet_rebalance.agent.admin import AdminClientLike, error_text
from fleet_rebalance.agent.collect import capture_cluster
from fleet_rebalance.agent.config import AgentConfig, ClusterConfig
from fleet_rebalance.agent.errors import ClusterUnavailable
from fleet_rebalance.agent.snapshot import (
    BROKERS_FILE,
    GROUPS_FILE,
    TOPICS_FILE,
    brokers_lines,
    group_lines,
    stamp,
    topics_lines,
)
from fleet_rebalance.agent.writer import remove_stale_staging, write_snapshot

log = logging.getLogger("fleet_rebalance.agent")
OK_STATUS, FAILED_STATUS = 0, 1
Clock = Callable[[], float]
Now = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class CycleResult:
    cluster: str
    captured_at: dt.datetime
    took_s: float
    path: str | None = None  # the snapshot directory, relative to raw_root
    groups: int = 0
    failed_groups: int = 0
    partitions: int = 0
    topics: int | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def run_cycle(
    cluster: ClusterConfig,
    admin: AdminClientLike,
    config: AgentConfig,
    now: Now = utc_now,
    clock: Clock = time.monotonic,
) -> CycleResult:
    """Capture one cluster and write its snapshot; never raises for a cluster failure."""
    captured_at = now().replace(microsecond=0)
    started = clock()
    try:
        snapshot = capture_cluster(
            admin, cluster, captured_at, config.timeouts, config.batching, clock
        )
        files = []
        # An empty jsonl file is a failed capture to ingest (a gap, never "no groups"),
        # so a cluster without groups gets no groups file at all.
        if snapshot.groups:
            files.append((GROUPS_FILE, group_lines(snapshot)))
        if snapshot.topics is not None:
            files.append((TOPICS_FILE, topics_lines(snapshot.topics)))
        if snapshot.brokers is not None:
            files.append((BROKERS_FILE, brokers_lines(snapshot.brokers)))
        path = write_snapshot(config.raw_root, cluster.name, captured_at, files, config.compression)
    except (ClusterUnavailable, OSError) as exc:
        return CycleResult(cluster.name, captured_at, clock() - started, error=str(exc))
    except Exception as exc:  # a client call raising where it should fail a future, or a bug
        log.warning("%s: cycle failed unexpectedly", cluster.name, exc_info=True)
        return CycleResult(
            cluster.name, captured_at, clock() - started, error=f"unexpected {error_text(exc)}"
        )
    return CycleResult(
        cluster=cluster.name,
        captured_at=captured_at,
        took_s=clock() - started,
        path=path,
        groups=len(snapshot.groups),
        failed_groups=snapshot.failed_groups,
        partitions=len(snapshot.log_end),
        topics=None if snapshot.topics is None else len(snapshot.topics),
        notes=snapshot.notes,
    )


def status_line(result: CycleResult, retry_in: float | None = None) -> str:
    """The one line a cycle prints: when, which cluster, what it found, where it went."""
    head = f"{stamp(result.captured_at)} {result.cluster}"
    if not result.ok:
        retry = f"; retry in {retry_in:g}s" if retry_in is not None else ""
        return f"{head} FAILED in {result.took_s:.1f}s: {result.error}{retry}"
    failed = f" ({result.failed_groups} failed)" if result.failed_groups else ""
    topics = "topics not described" if result.topics is None else f"{result.topics} topics"
    notes = "".join(f"; {n}" for n in result.notes)
    where = result.path or "-"
    return (
        f"{head} ok {result.groups} groups{failed}, {result.partitions} partitions, {topics}"
        f" in {result.took_s:.1f}s -> {where}{notes}"
    )


class Reporter:
    """Status lines to one stream, whole lines only (threads print concurrently)."""

    def __init__(self, write: Callable[[str], None], redact: Callable[[str], str]) -> None:
        self._write, self._redact, self._lock = write, redact, threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self._write(self._redact(line))


def run_once(
    config: AgentConfig,
    admins: dict[str, AdminClientLike],
    report: Callable[[str], None],
    now: Now = utc_now,
    clock: Clock = time.monotonic,
) -> int:
    """One cycle of every cluster, concurrently; 0 when all were captured, else 1."""
    for cluster in config.clusters:
        remove_stale_staging(config.raw_root, cluster.name)
    with ThreadPoolExecutor(len(config.clusters), thread_name_prefix="capture") as pool:
        futures = [
            pool.submit(run_cycle, c, admins[c.name], config, now, clock) for c in config.clusters
        ]
        results = []
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            report(status_line(result))
    return OK_STATUS if all(r.ok for r in results) else FAILED_STATUS


def run_forever(
    config: AgentConfig,
    admins: dict[str, AdminClientLike],
    report: Callable[[str], None],
    stop: threading.Event,
    now: Now = utc_now,
    clock: Clock = time.monotonic,
) -> int:
    """Cycle every cluster on its own thread until `stop` is set; 0 on a clean stop."""
    threads = [
        threading.Thread(
            target=cluster_loop,
            args=(cluster, admins[cluster.name], config, report, stop, now, clock),
            name=f"capture-{cluster.name}",
            daemon=True,
        )
        for cluster in config.clusters
    ]
    for thread in threads:
        thread.start()
    stop.wait()
    for thread in threads:
        # A thread inside a slow admin call ends when that call's timeout does.
        thread.join(timeout=config.timeouts.request_s + 5)
    return OK_STATUS


def cluster_loop(
    cluster: ClusterConfig,
    admin: AdminClientLike,
    config: AgentConfig,
    report: Callable[[str], None],
    stop: threading.Event,
    now: Now = utc_now,
    clock: Clock = time.monotonic,
) -> None:
    remove_stale_staging(config.raw_root, cluster.name)
    failures = 0
    while not stop.is_set():
        started = clock()
        result = run_cycle(cluster, admin, config, now, clock)
        if result.ok:
            failures = 0
            delay = max(0.0, config.interval_s - (clock() - started))
            report(status_line(result))
        else:
            failures += 1
            delay = config.backoff.delay(failures)
            report(status_line(result, retry_in=delay))
        stop.wait(delay)
