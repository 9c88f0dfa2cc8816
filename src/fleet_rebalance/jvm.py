"""The Kafka jars the tests run (jvm/pom.xml: the Kafka lab's brokers, tools and
clients, and the Java assignor harness), fetched from Maven Central once, when a test
first needs a set, and found again from then on. The jobs need none of them: Spark
resolves its own packages (spark/packages.py).

Each set is a profile of jvm/pom.xml; `mvn dependency:build-classpath` resolves it into
the local Maven repository (~/.m2) and writes its jars' paths to .jvm/<set>.classpath,
stamped with the pom's digest so an edited pom is resolved again. Processes that need a
set at once (.ci/run's two pytest processes) take turns: one resolves, the rest read it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

SETS = ("kafka-3.9", "kafka-4")
CACHE = ".jvm"
POM = Path("jvm") / "pom.xml"
TIMEOUT_S = 1800


class JvmDependencyError(RuntimeError):
    """A set's jars cannot be had; the message is one line saying what to do."""


def classpath(project: Path, name: str) -> list[Path]:
    """The jars of set `name`, resolving it first when it never was (or the pom changed)."""
    if name not in SETS:
        raise ValueError(f"unknown JVM dependency set {name!r} (sets: {', '.join(SETS)})")
    project = project.resolve()
    pom = project / POM
    listing = project / CACHE / f"{name}.classpath"
    stamp = listing.with_suffix(".pom-sha256")
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()
    listing.parent.mkdir(parents=True, exist_ok=True)
    with listing.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not listing.is_file() or not stamp.is_file() or stamp.read_text().strip() != digest:
            _resolve(pom, name, listing)
            stamp.write_text(digest + "\n")
        jars = _listed(listing)
        if not all(j.is_file() for j in jars):  # ~/.m2 was cleaned since: resolve again
            _resolve(pom, name, listing)
            jars = _listed(listing)
    return jars


def _listed(listing: Path) -> list[Path]:
    return [Path(p) for p in listing.read_text().strip().split(os.pathsep) if p]


def _resolve(pom: Path, name: str, listing: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JvmDependencyError(
            f"Maven (mvn) is needed to fetch the {name} jars ({POM}) and is not on PATH: "
            "install it (e.g. apt-get install maven)"
        )
    command = [
        mvn, "-q", "-B", "-f", str(pom), "-P", name, "dependency:build-classpath",
        f"-Dmdep.outputFile={listing}",
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise JvmDependencyError(
            f"fetching the {name} jars from Maven Central took over {TIMEOUT_S} s: is the "
            "registry reachable?"
        ) from exc
    if done.returncode != 0 or not listing.is_file():
        errors = [line for line in done.stdout.splitlines() if line.startswith("[ERROR]")]
        why = errors[0].removeprefix("[ERROR] ") if errors else done.stderr.strip()[:300]
        raise JvmDependencyError(f"could not fetch the {name} jars ({POM}) with mvn: {why}")
