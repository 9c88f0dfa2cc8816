"""Kafka's own assignors from the kafka-4 jars (jvm/harness/AssignorHarness.java), run on
our cases: the oracle of tests/test_assignors_java.py and the Java column of
benchmarks/assignors.py. A case is the golden file's dict (tests/data/
kafka_assignor_golden.json): assignor, partitions_per_topic, partition_racks, members in
JoinGroup order."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from fleet_rebalance.assignors import Subscription, TopicPartition

PROJECT = Path(__file__).resolve().parent.parent
HARNESS = PROJECT / "jvm" / "harness" / "AssignorHarness.java"
JAR_SET = "kafka-4"


def case(
    assignor: str,
    partitions: dict[str, int],
    subscriptions: dict[str, Subscription],
    racks: dict[TopicPartition, list[str]] | None = None,
    topic_ids: dict[str, str] | None = None,
) -> dict:
    """Our assignor's inputs as a harness case (topic_ids: the uniform assignor's)."""
    extra = {"topic_ids": topic_ids} if topic_ids else {}
    return {
        **extra,
        "assignor": assignor,
        "partitions_per_topic": partitions,
        "partition_racks": [[tp.topic, tp.partition, r] for tp, r in (racks or {}).items()],
        "members": [
            [
                m,
                list(s.topics),
                [[tp.topic, tp.partition] for tp in s.owned_partitions],
                s.generation,
                s.group_instance_id,
                s.rack,
            ]
            for m, s in subscriptions.items()
        ],
    }


def run(cases: list[dict], budget_ms: float = 0) -> list[dict]:
    """Each case's {"assignment": {member: [TopicPartition]}, "median_ms", "runs"} from
    Kafka's classes; with budget_ms each case is timed after a warm-up run."""
    from fleet_rebalance.jvm import classpath

    jars = os.pathsep.join(str(j) for j in classpath(PROJECT, JAR_SET))
    with tempfile.TemporaryDirectory(prefix="assignor-harness-") as tmp:
        work = Path(tmp)
        subprocess.run(
            ["javac", "-nowarn", "-d", str(work), "-cp", jars, str(HARNESS)],
            check=True, capture_output=True,
        )  # fmt: skip
        (work / "cases.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")
        subprocess.run(
            ["java", "-Xss16m", "-cp", f"{work}{os.pathsep}{jars}", "AssignorHarness",
             str(work / "cases.json"), str(work / "out.json"), str(budget_ms)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        results = json.loads((work / "out.json").read_text(encoding="utf-8"))["cases"]
    for result in results:
        result["assignment"] = {
            m: sorted(TopicPartition(t, p) for t, p in tps)
            for m, tps in result["assignment"].items()
        }
    return results


def regenerate_golden(
    path: Path = PROJECT / "tests" / "data" / "kafka_assignor_golden.json",
) -> int:
    """Replace the golden file's Kafka outputs with this jar set's; returns how many changed."""
    golden = json.loads(path.read_text(encoding="utf-8"))
    inputs = [{k: v for k, v in c.items() if k != "kafka"} for c in golden["cases"]]
    changed = 0
    for stored, result in zip(golden["cases"], run(inputs), strict=True):
        fresh = {
            m: [[tp.topic, tp.partition] for tp in tps] for m, tps in result["assignment"].items()
        }
        changed += _sorted(stored["kafka"]) != _sorted(fresh)
        stored["kafka"] = fresh
    path.write_text(json.dumps(golden, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return changed


def _sorted(assignment: dict) -> dict:
    return {m: sorted(map(tuple, tps)) for m, tps in assignment.items()}


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--regenerate-golden"]:
        sys.exit("usage: python tests/java_assignors.py --regenerate-golden")
    print(f"{regenerate_golden()} cases changed")
