"""The brokers' optional views (FORMATS 1.7, docs/formats-brokers.md), as a generated
cluster's tools print them: `kafka-configs.sh --describe --entity-type brokers --all`
(each broker's broker.rack among its configs) and `kafka-log-dirs.sh --describe` (each
replica's bytes on its broker's disk).

A replica's size is its partition's records times its topic's stored bytes per record
(record_bytes, drawn once per cluster and topic from the seed, apart from the fleet's
own random stream): every record the partition ever took is still on disk (the
generator models no retention), and every in-sync replica holds them all, so sizes only
grow and a partition's growth over its log-end growth is its topic's bytes per record.
Only the topics the topics view holds are listed (no __consumer_offsets).
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping

from fleet_rebalance.generate.render import KafkaVersion, TopicView

LOG_DIR = "/var/lib/kafka/data"
QUERYING = "Querying brokers for log directories information"
# Stored (compressed) bytes per record: small JSON events to fat ones.
RECORD_BYTES = (120, 1800)
PORT = 9092


@functools.cache
def record_bytes(seed: int, cluster: str, topic: str) -> int:
    """`topic`'s stored bytes per record on `cluster`: fixed by the seed, and by nothing
    else, so a topic added mid-run does not move another's."""
    return random.Random(f"{seed}/{cluster}/{topic}/record-bytes").randint(*RECORD_BYTES)


def _config(name: str, value: str, default: str | None = None, static: bool = True) -> str:
    sources = [f"STATIC_BROKER_CONFIG:{name}={value}"] if static else []
    if default is not None:
        sources.append(f"DEFAULT_CONFIG:{name}={default}")
    return f"  {name}={value} sensitive=false synonyms={{{', '.join(sources)}}}"


def _broker_configs(cluster: str, broker: int, rack: str, version: KafkaVersion) -> list[str]:
    """A few of the ~300 configs `--all` prints, enough to read like one: ConfigCommand
    prints them sorted by name, each with where it was set; KRaft brokers (4.x) also have
    node.id and process.roles."""
    configs = {
        "advertised.listeners": _config(
            "advertised.listeners", f"PLAINTEXT://kafka-{broker}.{cluster}.example.net:{PORT}"
        ),
        "auto.create.topics.enable": _config("auto.create.topics.enable", "false", "true"),
        "broker.id": _config("broker.id", str(broker), "-1"),
        "broker.rack": _config("broker.rack", rack),
        "default.replication.factor": _config("default.replication.factor", "3", "1"),
        "log.dirs": _config("log.dirs", LOG_DIR),
        "log.retention.hours": _config("log.retention.hours", "168", "168", static=False),
        "min.insync.replicas": _config("min.insync.replicas", "2", "1"),
        "offsets.topic.num.partitions": _config(
            "offsets.topic.num.partitions", "50", "50", static=False
        ),
        "replica.selector.class": "  replica.selector.class=null sensitive=false synonyms={}",
    }
    if version.startswith("4."):
        configs["node.id"] = _config("node.id", str(broker))
        configs["process.roles"] = _config("process.roles", "broker")
    return [configs[name] for name in sorted(configs)]


def brokers_view(cluster: str, racks: Mapping[int, str], version: KafkaVersion) -> str:
    """kafka-configs.sh --describe --entity-type brokers --all of brokers `racks` (id ->
    broker.rack): a block per broker, then the cluster's default block (empty: no
    dynamic defaults)."""
    lines: list[str] = []
    for broker in sorted(racks):
        lines.append(f"All configs for broker {broker} are:")
        lines += _broker_configs(cluster, broker, racks[broker], version)
    lines.append("Default configs for brokers in the cluster are:")
    return "\n".join(lines) + "\n"


def log_dirs_view(
    brokers: list[int], topics: Mapping[str, TopicView], sizes: Mapping[tuple[str, int], int]
) -> str:
    """kafka-log-dirs.sh --describe: two lines, then one JSON document with every replica
    of `topics` on its broker, `sizes[(topic, partition)]` bytes each (in sync: no lag).
    The keys in the order the real tool's Jackson printed them (3.9.2 and 4.4.0)."""
    held: dict[int, list[dict[str, object]]] = {b: [] for b in brokers}
    for name, topic in topics.items():
        for partition, replicas in sorted(topic.replicas.items()):
            for broker in replicas:
                held[broker].append(
                    {
                        "partition": f"{name}-{partition}",
                        "size": sizes[(name, partition)],
                        "offsetLag": 0,
                        "isFuture": False,
                    }
                )
    document = {
        "brokers": [
            {"broker": b, "logDirs": [{"partitions": held[b], "error": None, "logDir": LOG_DIR}]}
            for b in brokers
        ],
        "version": 1,
    }
    return (
        f"{QUERYING}\n"
        f"Received log directory information from brokers {','.join(map(str, brokers))}\n"
        f"{json.dumps(document, separators=(',', ':'))}\n"
    )
