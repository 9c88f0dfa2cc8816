"""The capture agent's YAML config, loaded into typed dataclasses that fail fast.

Secrets never sit in the file: a client property's value may be `${NAME}` (an
environment variable, also inside a longer string) or `file:/path` (the file's text,
one trailing newline dropped). Properties whose name says they hold a secret
(`sasl.password`, `ssl.key.password`, `*.secret`, `sasl.jaas.config`, ...) must use one
of the two, so a pasted password is refused before it can end up in a backup of the
config. Every resolved value is remembered in `AgentConfig.secrets` so the log filter
(redaction.py) can blank it out of any line, librdkafka's included.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet_rebalance.agent.destination import (
    parse_compression,
    parse_raw_root,
    parse_storage_options,
)
from fleet_rebalance.agent.errors import ConfigError
from fleet_rebalance.agent.writer import Compression
from fleet_rebalance.filesystems import Location
from fleet_rebalance.yaml_file import read_yaml

ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
FILE_PREFIX = "file:"
# Property names that carry a credential in librdkafka's configuration.
SECRET_PROPERTY = re.compile(
    r"(password|secret|token|sasl\.jaas\.config|sasl\.oauthbearer\.config|ssl\.key\.pem"
    r"|ssl_key|\.pem$)",
    re.IGNORECASE,
)
# A cluster name is the first directory of every capture path: one plain segment.
CLUSTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

DEFAULT_INTERVAL_S = 300.0
DEFAULT_REQUEST_TIMEOUT_S = 30.0
DEFAULT_BACKOFF_INITIAL_S = 5.0
DEFAULT_BACKOFF_MAX_S = 300.0
DEFAULT_DESCRIBE_BATCH = 200
DEFAULT_TOPICS_BATCH = 500
DEFAULT_OFFSETS_IN_FLIGHT = 64
DEFAULT_LIST_OFFSETS_BATCH = 10_000
MIN_INTERVAL_S = 1.0  # capture directories are named to the second


@dataclass(frozen=True)
class GroupFilter:
    """Which listed groups are captured: any include pattern matches (re.search) and
    no exclude pattern does."""

    include: tuple[re.Pattern[str], ...] = (re.compile(""),)
    exclude: tuple[re.Pattern[str], ...] = ()

    def wants(self, group_id: str) -> bool:
        return any(p.search(group_id) for p in self.include) and not any(
            p.search(group_id) for p in self.exclude
        )


@dataclass(frozen=True)
class Timeouts:
    request_s: float = DEFAULT_REQUEST_TIMEOUT_S
    # The whole capture of one cluster; defaults to the interval so cycles never pile up.
    cycle_s: float = DEFAULT_INTERVAL_S


@dataclass(frozen=True)
class Backoff:
    initial_s: float = DEFAULT_BACKOFF_INITIAL_S
    max_s: float = DEFAULT_BACKOFF_MAX_S

    def delay(self, failures: int) -> float:
        """Seconds before the next attempt after `failures` failed cycles in a row."""
        return min(self.max_s, self.initial_s * 2 ** max(0, failures - 1))


@dataclass(frozen=True)
class Batching:
    describe_groups: int = DEFAULT_DESCRIBE_BATCH
    describe_topics: int = DEFAULT_TOPICS_BATCH
    offsets_in_flight: int = DEFAULT_OFFSETS_IN_FLIGHT
    list_offsets_partitions: int = DEFAULT_LIST_OFFSETS_BATCH


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    bootstrap_servers: str
    # librdkafka properties with secrets resolved: never logged, never written.
    client: dict[str, str] = field(default_factory=dict, repr=False)
    groups: GroupFilter = field(default_factory=GroupFilter)

    def admin_properties(self) -> dict[str, str]:
        return {**self.client, "bootstrap.servers": self.bootstrap_servers}


@dataclass(frozen=True)
class AgentConfig:
    raw_root: Path | Location  # a Location when it is on an object store
    clusters: tuple[ClusterConfig, ...]
    interval_s: float = DEFAULT_INTERVAL_S
    timeouts: Timeouts = field(default_factory=Timeouts)
    backoff: Backoff = field(default_factory=Backoff)
    batching: Batching = field(default_factory=Batching)
    secrets: frozenset[str] = field(default_factory=frozenset, repr=False)
    compression: Compression | None = None


def load_config(path: Path | str, env: dict[str, str] | None = None) -> AgentConfig:
    """Read and validate the YAML at `path`; ConfigError names the bad key."""
    path = Path(path)
    document = read_yaml(path)  # the job's hardened loader: no aliases, duplicates, bombs
    return parse_config(document, os.environ if env is None else env, base=path.parent)


TOP_KEYS = {
    "raw_root",
    "storage",
    "compression",
    "interval_s",
    "timeouts",
    "backoff",
    "batching",
    "groups",
    "clusters",
}
CLUSTER_KEYS = {"name", "bootstrap_servers", "client", "groups"}


def parse_config(document: Any, env: Any, base: Path = Path(".")) -> AgentConfig:
    """The config from a parsed YAML document; `env` resolves `${NAME}`, `base` relative
    paths (raw_root, file: secrets)."""
    top = _mapping(document, "the capture config")
    _known(top, TOP_KEYS, "the capture config")
    secrets: set[str] = set()
    interval = _number(top, "interval_s", DEFAULT_INTERVAL_S, minimum=MIN_INTERVAL_S)
    timeouts = _mapping(top.get("timeouts", {}), "timeouts")
    backoff = _mapping(top.get("backoff", {}), "backoff")
    batching = _mapping(top.get("batching", {}), "batching")
    default_filter = _filter(top.get("groups", {}), "groups")
    raw_root = parse_raw_root(top.get("raw_root"), parse_storage_options(top.get("storage")), base)
    clusters = top.get("clusters")
    if not isinstance(clusters, list) or not clusters:
        raise ConfigError("clusters: expected a non-empty list, found " + _shown(clusters))
    parsed = tuple(
        _cluster(c, f"clusters[{i}]", env, base, secrets, default_filter)
        for i, c in enumerate(clusters)
    )
    names = [c.name for c in parsed]
    if len(set(names)) != len(names):
        raise ConfigError(f"clusters: names must be unique, found {names}")
    return AgentConfig(
        raw_root=raw_root,
        compression=parse_compression(top.get("compression")),
        clusters=parsed,
        interval_s=interval,
        timeouts=Timeouts(
            request_s=_number(timeouts, "request_s", DEFAULT_REQUEST_TIMEOUT_S, "timeouts."),
            cycle_s=_number(timeouts, "cycle_s", interval, "timeouts."),
        ),
        backoff=Backoff(
            initial_s=_number(backoff, "initial_s", DEFAULT_BACKOFF_INITIAL_S, "backoff."),
            max_s=_number(backoff, "max_s", DEFAULT_BACKOFF_MAX_S, "backoff."),
        ),
        batching=Batching(
            describe_groups=_count(batching, "describe_groups", DEFAULT_DESCRIBE_BATCH),
            describe_topics=_count(batching, "describe_topics", DEFAULT_TOPICS_BATCH),
            offsets_in_flight=_count(batching, "offsets_in_flight", DEFAULT_OFFSETS_IN_FLIGHT),
            list_offsets_partitions=_count(
                batching, "list_offsets_partitions", DEFAULT_LIST_OFFSETS_BATCH
            ),
        ),
        secrets=frozenset(s for s in secrets if s),
    )


def _cluster(
    value: Any, where: str, env: Any, base: Path, secrets: set[str], default: GroupFilter
) -> ClusterConfig:
    cluster = _mapping(value, where)
    _known(cluster, CLUSTER_KEYS, where)
    name = cluster.get("name")
    if not isinstance(name, str) or not CLUSTER_NAME.match(name):
        raise ConfigError(
            f"{where}.name: expected a plain directory name ([A-Za-z0-9._-], not starting "
            f"with '.'), found {_shown(name)}"
        )
    bootstrap = cluster.get("bootstrap_servers")
    if isinstance(bootstrap, list) and bootstrap and all(isinstance(b, str) for b in bootstrap):
        bootstrap = ",".join(bootstrap)
    if not isinstance(bootstrap, str) or not bootstrap:
        raise ConfigError(
            f"{where}.bootstrap_servers: expected host:port[,host:port], found {_shown(bootstrap)}"
        )
    client: dict[str, str] = {}
    for key, raw in _mapping(cluster.get("client", {}), f"{where}.client").items():
        if not isinstance(key, str):
            raise ConfigError(f"{where}.client: property names are strings, found {key!r}")
        if key == "bootstrap.servers":
            raise ConfigError(f"{where}.client.bootstrap.servers: set bootstrap_servers instead")
        client[key] = _property(raw, key, f"{where}.client.{key}", env, base, secrets)
    groups = _filter(cluster["groups"], f"{where}.groups") if "groups" in cluster else default
    return ClusterConfig(name=name, bootstrap_servers=bootstrap, client=client, groups=groups)


def _property(raw: Any, key: str, where: str, env: Any, base: Path, secrets: set[str]) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int | float):
        return str(raw)
    if not isinstance(raw, str):
        raise ConfigError(f"{where}: expected a string or number, found {type(raw).__name__}")
    referenced = raw.startswith(FILE_PREFIX) or ENV_REFERENCE.search(raw) is not None
    if SECRET_PROPERTY.search(key) and not referenced:
        raise ConfigError(
            f"{where}: a secret must come from the environment (${{NAME}}) or a file "
            "(file:/path), not be written in the config"
        )
    if raw.startswith(FILE_PREFIX):
        secret_path = Path(raw[len(FILE_PREFIX) :])
        secret_path = secret_path if secret_path.is_absolute() else base / secret_path
        try:
            value = secret_path.read_text(encoding="utf-8").removesuffix("\n")
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read {secret_path}: {exc.strerror}") from None
        secrets.add(value)
        return value

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ConfigError(f"{where}: environment variable {name} is not set")
        secrets.add(env[name])
        return env[name]

    value = ENV_REFERENCE.sub(substitute, raw)
    if value != raw:
        secrets.add(value)
    return value


def _filter(value: Any, where: str) -> GroupFilter:
    spec = _mapping(value, where)
    unknown = set(spec) - {"include", "exclude"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; expected include, exclude")
    include = _patterns(spec.get("include"), f"{where}.include")
    return GroupFilter(
        include=include or (re.compile(""),),
        exclude=_patterns(spec.get("exclude"), f"{where}.exclude"),
    )


def _patterns(value: Any, where: str) -> tuple[re.Pattern[str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of regular expressions, found {_shown(value)}")
    compiled = []
    for pattern in value:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ConfigError(f"{where}: {pattern!r} is not a regular expression: {exc}") from None
    return tuple(compiled)


def _known(spec: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in set(spec) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; expected some of {sorted(known)}")


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping, found {type(value).__name__}")
    return value


def _number(
    spec: dict[str, Any], key: str, default: float, prefix: str = "", minimum: float = 0.0
) -> float:
    value = spec.get(key, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value <= 0
        or value < minimum
    ):
        at_least = f" of at least {minimum:g}" if minimum else ""
        raise ConfigError(
            f"{prefix}{key}: expected a positive number of seconds{at_least}, found {_shown(value)}"
        )
    return float(value)


def _count(spec: dict[str, Any], key: str, default: int) -> int:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"batching.{key}: expected a positive integer, found {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
