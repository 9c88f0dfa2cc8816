"""spark/job_threads.run_all without Spark: how many run at once, where `done` runs,
and which failure a step reports."""

from __future__ import annotations

import threading
import time

import pytest

from fleet_rebalance.spark.job_threads import run_all


class Tasks:
    """Tasks that record how many of them run at once and which started."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = self.most = 0
        self.started: list[str] = []
        self.threads: set[str] = set()

    def task(self, key: str, seconds: float = 0.02, error: Exception | None = None):
        def run() -> str:
            with self.lock:
                self.started.append(key)
                self.threads.add(threading.current_thread().name)
                self.running += 1
                self.most = max(self.most, self.running)
            time.sleep(seconds)
            with self.lock:
                self.running -= 1
            if error is not None:
                raise error
            return key.upper()

        return run


def test_results_reach_done_in_the_callers_thread_with_at_most_threads_at_once():
    tasks = Tasks()
    seen: list[tuple[str, str, threading.Thread]] = []
    keys = [f"t{i}" for i in range(7)]
    run_all(
        {key: tasks.task(key) for key in keys},
        lambda key, result: seen.append((key, result, threading.current_thread())),
        threads=3,
    )
    assert sorted((key, result) for key, result, _ in seen) == [(k, k.upper()) for k in keys]
    assert {thread for *_, thread in seen} == {threading.current_thread()}
    assert tasks.most == 3
    # Named for the caller (test_faults tells two runs' writes apart by it).
    assert all(
        name.startswith(f"{threading.current_thread().name}-write") for name in tasks.threads
    )


def test_a_failure_starts_no_other_task_and_lets_the_running_ones_end():
    tasks = Tasks()
    done: list[str] = []
    with pytest.raises(ValueError, match="a"):
        run_all(
            {
                "a": tasks.task("a", 0.01, ValueError("a")),
                "b": tasks.task("b", 0.2),
                "c": tasks.task("c"),
                "d": tasks.task("d"),
            },
            lambda key, result: done.append(key),
            threads=2,
        )
    assert tasks.started == ["a", "b"] and tasks.running == 0
    assert done == ["b"]  # it ran on; its write is registered


def test_of_two_failures_the_first_in_the_tasks_order_is_raised():
    tasks = Tasks()
    with pytest.raises(KeyError, match="first"):
        run_all(
            {
                "first": tasks.task("first", 0.1, KeyError("first")),
                "second": tasks.task("second", 0.0, KeyError("second")),
            },
            threads=2,
        )
