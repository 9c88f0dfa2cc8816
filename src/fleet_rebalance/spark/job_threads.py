"""Spark actions run from several driver threads at once.

Writing a small table is mostly the driver's latency, not the executors' work: planning,
Delta's log (the snapshot, the files a replaceWhere removes, the commit) and scheduling a
few tiny tasks, one Spark job after another. Writes of tables that do not read each other
overlap that latency when each runs in a thread of its own, as Spark's scheduler allows
(docs/benchmarks.md, "Writes in threads").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

# Threads a step's writes share: enough to keep a driver's planning and Delta's log work
# ahead of local[2]'s two cores; every thread holds a persisted frame while it writes.
WRITE_THREADS = 3


def run_all(
    tasks: Mapping[K, Callable[[], T]],
    done: Callable[[K, T], None] = lambda key, result: None,
    threads: int | None = None,
) -> None:
    """Run every task, at most `threads` (WRITE_THREADS) at once, and call done(key,
    result) in the caller's thread as each ends. Once one fails no task starts; those
    running end, and then the failure of the task first in `tasks`' order is raised, so
    a failed step leaves no write running and names the same table whatever the timing."""
    keys = list(tasks)
    failing = threading.Event()

    def guarded(task: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            if failing.is_set():
                raise _NotStarted
            try:
                return task()
            except BaseException:
                failing.set()  # before this thread takes the next task
                raise

        return run

    failed: dict[K, BaseException] = {}
    workers = max(1, min(threads or WRITE_THREADS, len(keys)))
    # Named for the caller: a write in a log or a stack dump says whose it is.
    prefix = f"{threading.current_thread().name}-write"
    with ThreadPoolExecutor(workers, prefix) as pool:
        futures = {pool.submit(guarded(tasks[key])): key for key in keys}
        try:
            for future in as_completed(futures):
                key, error = futures[future], future.exception()
                if error is None:
                    done(key, future.result())
                elif not isinstance(error, _NotStarted):
                    failed[key] = error
        except BaseException:  # `done` failed, or the caller was interrupted
            failing.set()
            raise
    if failed:
        raise failed[min(failed, key=keys.index)]


class _NotStarted(Exception):
    """A task not started because another had failed."""
