"""Fuzz the capture parsers for N minutes (issue 19) and report what broke.

The same seeds, mutations and checker as tests/test_fuzz.py (tests/fuzz_support.py),
driven by a seeded random.Random instead of hypothesis, with longer lines (past the
64 KiB sniffing window). Each variant runs in a worker process with a time limit, so
a parse that takes minutes is reported as slow instead of stalling the run.

Issue 36 adds classes judged against a second run (tests/fuzz_classes.py: far dates,
absurd log end, compressed); they take their turn with the capture kinds.

Prints, per capture kind and class: variants tried, and how many crashed, left lines
unaccounted for, stored changed values, or ran past the time limit (after SLOW_ENOUGH of
those, a kind's long lines stay short so the budget goes to finding other failures);
then how many variants used each mutation (and showed a problem); then each
distinct failure (rule broken) with the kinds it hit, and the first few with the
smallest variant that showed it, cut down to the lines and bytes that still show it
(slow ones are shown uncut). Problems the unmutated seeds already have are listed once
and not counted. Always exits 0: it is a report.

    python benchmarks/fuzz.py --minutes 2 [--seed 0] [--timeout 10] [--show 8]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# The harness lives with the tests (tests/ is not a package), as end_to_end.py's helpers do.
sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz_classes import CLASSES, Derived
from fuzz_support import (
    CRASH,
    KINDS,
    LINES,
    LONGEST,
    NUMBER_SPELLINGS,
    SEEDS,
    TEST_LONGEST,
    VALUE,
    Problem,
    Seed,
    Variant,
    check_variant,
    random_variant,
    run_capture,
)

SLOW, HARNESS = "slow", "harness"
# After this many variants of a kind ran past the limit, that kind's lines stay short:
# the slow class is known, and each more costs the whole limit of the budget.
SLOW_ENOUGH = 3
SHOWN_BYTES = 400
MINIMIZE_SECONDS = 10  # per failure shown
ROWS = (*KINDS, *CLASSES)  # capture kinds, then issue 36's classes


def _serve(connection: Connection) -> None:
    """Worker: capture files (or a class's variant) in, problems out, until the pipe
    closes. run_capture reports the parser's exceptions; one raised here is the
    checker's own."""
    while True:
        try:
            name, payload = connection.recv()
        except EOFError:
            return
        try:
            if name is None:
                found = check_variant(payload, run_capture(payload))
            else:
                found = CLASSES[name].check(payload)
        except Exception as exc:
            found = [Problem(HARNESS, f"checker raised {type(exc).__name__}", repr(exc)[:300])]
        connection.send(found)


class Worker:
    """One child process running variants; replaced when a variant runs too long."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._context = multiprocessing.get_context("fork")
        self._start()

    def _start(self) -> None:
        self._connection, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        child.close()

    def run(
        self, files: dict[str, bytes], derived: tuple[str, Derived] | None = None
    ) -> list[Problem] | None:
        """The variant's problems, or None when it ran past the time limit; `derived`:
        (class name, variant) to run that class's check instead of the files'."""
        self._connection.send(derived or (None, files))
        if self._connection.poll(self.timeout):
            try:
                return self._connection.recv()
            except EOFError:  # the worker died (a segfault in a native kernel)
                self._restart()
                return [Problem(CRASH, "worker process died", "no Python exception")]
        self._restart()
        return None

    def _restart(self) -> None:
        self._process.kill()
        self._process.join()
        self._connection.close()
        self._start()

    def close(self) -> None:
        self._connection.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()


@dataclass
class Failure:
    """One rule broken, however many variants and kinds broke it; the smallest variant
    that did is its reproducer."""

    kind: str
    problem: Problem
    variant: Variant
    count: int = 0
    kinds: Counter = field(default_factory=Counter)


@dataclass
class Tally:
    variants: Counter = field(default_factory=Counter)
    hit: dict[str, Counter] = field(default_factory=lambda: {k: Counter() for k in ROWS})
    failures: dict[tuple[str, str], Failure] = field(default_factory=dict)
    mutations: Counter = field(default_factory=Counter)  # variants using each mutation
    mutation_hits: Counter = field(default_factory=Counter)  # ... that showed a problem

    def add(self, kind: str, variant: Variant, problems: list[Problem]) -> None:
        self.variants[kind] += 1
        names = {mutation_name(what) for what in variant.mutations}
        self.mutations.update(names)
        if problems:
            self.mutation_hits.update(names)
        for problem_kind in {p.kind for p in problems}:
            self.hit[kind][problem_kind] += 1
        for key in dict.fromkeys((p.kind, p.check) for p in problems):
            problem = next(p for p in problems if (p.kind, p.check) == key)
            failure = self.failures.setdefault(key, Failure(kind, problem, variant))
            if len(variant.data) < len(failure.variant.data):  # the smallest reproduces best
                failure.kind, failure.problem, failure.variant = kind, problem, variant
            failure.count += 1
            failure.kinds[kind] += 1


def mutation_name(what: str) -> str:
    """A mutation as the tally counts it: its function's name, and for replace_number
    the spelling it put in (`replace_number 2^63-1`: issue 56's numeric edges)."""
    name = what.split("(", 1)[0]
    if name == "replace_number":
        spelled = next((n for n, _ in NUMBER_SPELLINGS if what.endswith(f" {n})")), None)
        return f"{name} {spelled}" if spelled else name
    return name


def seed_checks(worker: Worker) -> dict[str, set[str]]:
    """Per seed, the checks it fails unmutated: not blamed on any mutation."""
    known: dict[str, set[str]] = {}
    for kind in KINDS:
        for seed in SEEDS[kind]:
            found = worker.run(seed.files) or []
            known[seed.name] = {p.check for p in found}
    return known


def new_problems(problems: list[Problem] | None, known: set[str]) -> list[Problem]:
    if problems is None:
        return [Problem(SLOW, "ran past the time limit", "killed")]
    return [p for p in problems if p.check not in known]


def minimize(worker: Worker, failure: Failure, known: set[str]) -> bytes:
    """The variant's file cut down, a chunk of lines at a time, to what still shows the
    same failure (slow variants are left as they are: each try would take the limit)."""
    seed, data = failure.variant.seed, failure.variant.data
    if failure.problem.kind == SLOW or isinstance(failure.variant, Derived):
        return data  # a class's check needs its whole variant (the reference too)
    deadline = time.monotonic() + MINIMIZE_SECONDS

    def still_fails(candidate: bytes) -> bool:
        files = {**seed.files, seed.target: candidate}
        found = new_problems(worker.run(files), known)
        return any(
            p.kind == failure.problem.kind and p.check == failure.problem.check for p in found
        )

    lines = _without_chunks(data.split(b"\n"), still_fails, b"\n".join, deadline)
    for i in range(len(lines)):  # then each line's bytes, the same way

        def line_fails(part: list[bytes], i: int = i) -> bool:
            return still_fails(b"\n".join([*lines[:i], b"".join(part), *lines[i + 1 :]]))

        lines[i] = b"".join(
            _without_chunks([bytes([b]) for b in lines[i]], line_fails, list, deadline)
        )
    return b"\n".join(lines)


def _without_chunks(
    items: list[bytes], fails: Callable[[Any], bool], join: Callable, deadline: float
) -> list[bytes]:
    """`items` without every chunk whose removal keeps `fails(join(rest))` true, trying
    halves, then quarters, ... down to single items."""
    chunk = max(len(items) // 2, 1)
    while chunk >= 1 and time.monotonic() < deadline:
        start = 0
        while start < len(items) and time.monotonic() < deadline:
            candidate = items[:start] + items[start + chunk :]
            if candidate and fails(join(candidate)):
                items = candidate
            else:
                start += chunk
        chunk //= 2
    return items


def shown(data: bytes) -> str:
    text = repr(data)
    return text if len(text) <= SHOWN_BYTES else f"{text[:SHOWN_BYTES]}... ({len(data)} bytes)"


def print_table(tally: Tally, timeout: float) -> None:
    header = (
        f"{'kind / class':<16} {'variants':>9} {'crashes':>8} {'lines unaccounted':>18} "
        f"{'values changed':>15} {f'slow (>{timeout:g} s)':>13}"
    )
    print(header)
    totals: Counter = Counter()
    for kind in ROWS:
        hit = tally.hit[kind]
        row = (tally.variants[kind], hit[CRASH], hit[LINES], hit[VALUE], hit[SLOW])
        totals.update(dict(zip(("v", CRASH, LINES, VALUE, SLOW), row, strict=True)))
        print(f"{kind:<16} {row[0]:>9} {row[1]:>8} {row[2]:>18} {row[3]:>15} {row[4]:>13}")
    print(
        f"{'all':<16} {totals['v']:>9} {totals[CRASH]:>8} {totals[LINES]:>18} "
        f"{totals[VALUE]:>15} {totals[SLOW]:>13}"
    )
    print("\nmutations (variants using each / with a problem):")
    used = sorted(tally.mutations.items(), key=lambda item: (-item[1], item[0]))
    print("  " + ", ".join(f"{name} {n}/{tally.mutation_hits[name]}" for name, n in used))


def print_failures(tally: Tally, worker: Worker, known: dict[str, set[str]], show: int) -> None:
    failures = list(tally.failures.values())
    print(f"\ndistinct failures (rule broken; variants per capture kind): {len(failures)}")
    for failure in failures:
        kinds = ", ".join(f"{k} {n}" for k, n in failure.kinds.most_common())
        print(f"  [{failure.problem.kind}] {failure.problem.check}  ({kinds})")
    for number, failure in enumerate(failures[:show], start=1):
        seed: Seed = failure.variant.seed
        small = minimize(worker, failure, known.get(seed.name, set()))
        print(f"\n{number}. {failure.kind} / [{failure.problem.kind}] {failure.problem.check}")
        print(f"   seed: {seed.name} ({seed.target})")
        print(f"   mutations: {'; '.join(failure.variant.mutations)}")
        print(f"   problem: {str(failure.problem)[:SHOWN_BYTES]}")
        print(f"   reproducer ({len(small)} of {len(failure.variant.data)} bytes): {shown(small)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per variant")
    parser.add_argument("--show", type=int, default=8, help="failures to print in full")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    worker = Worker(args.timeout)
    known = seed_checks(worker)
    tally = Tally()
    started = time.monotonic()
    deadline = started + args.minutes * 60
    turn = 0
    while time.monotonic() < deadline:
        kind = ROWS[turn % len(ROWS)]  # round robin: every kind and class gets its share
        turn += 1
        longest = TEST_LONGEST if tally.hit[kind][SLOW] >= SLOW_ENOUGH else LONGEST
        if kind in CLASSES:
            variant = CLASSES[kind].make(rng, longest)
            found = worker.run(variant.files, (kind, variant))
        else:
            variant = random_variant(rng.choice(SEEDS[kind]), rng, longest)
            found = worker.run(variant.files)
        tally.add(kind, variant, new_problems(found, known.get(variant.seed.name, set())))
    elapsed = time.monotonic() - started

    total = sum(tally.variants.values())
    print(
        f"fuzz: {elapsed / 60:.1f} min, --seed {args.seed}, {total} variants "
        f"({total / elapsed:.0f}/s), {sum(map(len, SEEDS.values()))} seeds, "
        f"time limit {args.timeout:g} s per variant"
    )
    seed_failures = sorted({(n, c) for n, checks in known.items() for c in checks})
    if seed_failures:
        print("problems of the unmutated seeds (not counted below):")
        for name, check in seed_failures:
            print(f"  {name}: {check}")
    shortened = [k for k in ROWS if tally.hit[k][SLOW] >= SLOW_ENOUGH]
    if shortened:
        print(
            f"after {SLOW_ENOUGH} slow variants, lines of at most {TEST_LONGEST:,} bytes "
            f"were added for: {', '.join(shortened)}"
        )
    print()
    print_table(tally, args.timeout)
    print_failures(tally, worker, known, args.show)
    worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
