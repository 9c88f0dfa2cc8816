"""The capture agent's YAML config, loaded into typed pydantic models that fail fast.

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
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from fleet_rebalance.agent.destination import (
    parse_compression,
    parse_raw_root,
    parse_storage_options,
)
from fleet_rebalance.agent.errors import ConfigError
from fleet_rebalance.agent.writer import Compression
from fleet_rebalance.filesystems import Location
from fleet_rebalance.yaml_file import read_yaml, shown

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
MIN_INTERVAL_S = 1.0  # capture directories are named to the second
# A cycle is also the default deadline of one cluster's capture, so cycles never pile up.
DEFAULT_INTERVAL_S = 300.0
MATCH_ALL = re.compile("")


class PropertyError(ValueError):
    """A client property that cannot be used, named by its key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key


def _seconds(value: Any, minimum: float = 0.0) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value <= 0
        or value < minimum
    ):
        at_least = f" of at least {minimum:g}" if minimum else ""
        raise ValueError(f"expected a positive number of seconds{at_least}, found {shown(value)}")
    return float(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a positive integer, found {shown(value)}")
    return value


def _patterns(value: Any) -> tuple[re.Pattern[str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, str | re.Pattern) for v in value
    ):
        raise ValueError(f"expected a list of regular expressions, found {shown(value)}")
    compiled = []
    for pattern in value:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return tuple(compiled)


def _cluster_name(value: Any) -> str:
    if not isinstance(value, str) or not CLUSTER_NAME.match(value):
        raise ValueError(
            "expected a plain directory name ([A-Za-z0-9._-], not starting "
            f"with '.'), found {shown(value)}"
        )
    return value


def _bootstrap_servers(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(b, str) for b in value):
        value = ",".join(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected host:port[,host:port], found {shown(value)}")
    return value


Seconds = Annotated[float, BeforeValidator(_seconds)]
Count = Annotated[int, BeforeValidator(_count)]
Patterns = Annotated[tuple[re.Pattern[str], ...], BeforeValidator(_patterns)]


class Section(BaseModel):
    """A mapping of the capture config: no key it does not know, immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, data: Any) -> Any:
        """An empty section is all defaults; a missing required key is checked as None,
        so its message says what was expected."""
        if data is None:
            data = {}
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"expected a mapping, found {type(data).__name__}")
        required = (name for name, info in cls.model_fields.items() if info.is_required())
        return {**dict.fromkeys(required), **data}


class GroupFilter(Section):
    """Which listed groups are captured: any include pattern matches (re.search) and
    no exclude pattern does."""

    include: Patterns = (MATCH_ALL,)
    exclude: Patterns = ()

    @field_validator("include")
    @classmethod
    def _all_by_default(cls, value: tuple[re.Pattern[str], ...]) -> tuple[re.Pattern[str], ...]:
        return value or (MATCH_ALL,)

    def wants(self, group_id: str) -> bool:
        return any(p.search(group_id) for p in self.include) and not any(
            p.search(group_id) for p in self.exclude
        )


class Timeouts(Section):
    request_s: Seconds = 30.0
    # The whole capture of one cluster; a file's default is its own interval_s.
    cycle_s: Seconds = DEFAULT_INTERVAL_S


class Backoff(Section):
    initial_s: Seconds = 5.0
    max_s: Seconds = 300.0

    def delay(self, failures: int) -> float:
        """Seconds before the next attempt after `failures` failed cycles in a row."""
        return min(self.max_s, self.initial_s * 2 ** max(0, failures - 1))


class Batching(Section):
    describe_groups: Count = 200
    describe_topics: Count = 500
    offsets_in_flight: Count = 64
    list_offsets_partitions: Count = 10_000


class ClusterConfig(Section):
    name: Annotated[str, BeforeValidator(_cluster_name)]
    bootstrap_servers: Annotated[str, BeforeValidator(_bootstrap_servers)]
    # librdkafka properties with secrets resolved: never logged, never written.
    client: dict[str, str] = Field(default={}, repr=False)
    groups: GroupFilter = GroupFilter()

    @field_validator("client", mode="before")
    @classmethod
    def _resolved(cls, value: Any, info: ValidationInfo) -> Any:
        """A file's properties with their secrets resolved (the context says from which
        environment and directory); properties built in code are taken as given."""
        if info.context is None:
            return value
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"expected a mapping, found {type(value).__name__}")
        client = {}
        for key, raw in value.items():
            if not isinstance(key, str):
                raise ValueError(f"property names are strings, found {key!r}")
            if key == "bootstrap.servers":
                raise PropertyError(key, "set bootstrap_servers instead")
            client[key] = _property(raw, key, **info.context)
        return client

    def admin_properties(self) -> dict[str, str]:
        return {**self.client, "bootstrap.servers": self.bootstrap_servers}


class AgentConfig(Section):
    raw_root: Path | Location  # a Location when it is on an object store
    clusters: tuple[ClusterConfig, ...]
    interval_s: Seconds = DEFAULT_INTERVAL_S
    timeouts: Timeouts = Timeouts()
    backoff: Backoff = Backoff()
    batching: Batching = Batching()
    # Every resolved secret, for the log filter (redaction.py); never from the file.
    secrets: frozenset[str] = Field(default=frozenset(), repr=False)
    compression: Compression | None = None


# The file's keys: the config's own, but its secrets, and what parse_config reads into
# them (storage into raw_root, groups into each cluster's filter).
TOP_KEYS = (set(AgentConfig.model_fields) - {"secrets"}) | {"storage", "groups"}
Model = TypeVar("Model", bound=BaseModel)


def load_config(path: Path | str, env: dict[str, str] | None = None) -> AgentConfig:
    """Read and validate the YAML at `path`; ConfigError names the bad key."""
    path = Path(path)
    document = read_yaml(path)  # the job's hardened loader: no aliases, duplicates, bombs
    return parse_config(document, os.environ if env is None else env, base=path.parent)


def parse_config(document: Any, env: Any, base: Path = Path(".")) -> AgentConfig:
    """The config from a parsed YAML document; `env` resolves `${NAME}`, `base` relative
    paths (raw_root, file: secrets)."""
    top = {} if document is None else document
    if not isinstance(top, dict):
        raise ConfigError(f"the capture config: expected a mapping, found {type(top).__name__}")
    unknown = sorted(str(k) for k in set(top) - TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"the capture config: unknown key(s) {unknown}; expected some of {sorted(TOP_KEYS)}"
        )
    try:
        interval = _seconds(top.get("interval_s", DEFAULT_INTERVAL_S), minimum=MIN_INTERVAL_S)
    except ValueError as exc:
        raise ConfigError(f"interval_s: {exc}") from None
    timeouts = top.get("timeouts")
    if timeouts is None or isinstance(timeouts, dict):
        timeouts = {"cycle_s": interval, **(timeouts or {})}
    default_filter = _validated(GroupFilter, top.get("groups"), "groups")
    raw_root = parse_raw_root(top.get("raw_root"), parse_storage_options(top.get("storage")), base)
    clusters = top.get("clusters")
    if not isinstance(clusters, list) or not clusters:
        raise ConfigError(f"clusters: expected a non-empty list, found {shown(clusters)}")
    secrets: set[str] = set()
    context = {"env": env, "base": base, "secrets": secrets}
    parsed = tuple(
        _validated(
            ClusterConfig,
            {"groups": default_filter, **c} if isinstance(c, dict) else c,
            f"clusters[{i}]",
            context,
        )
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
        timeouts=_validated(Timeouts, timeouts, "timeouts"),
        backoff=_validated(Backoff, top.get("backoff"), "backoff"),
        batching=_validated(Batching, top.get("batching"), "batching"),
        secrets=frozenset(s for s in secrets if s),
    )


def _validated(
    model: type[Model], value: Any, where: str, context: dict[str, Any] | None = None
) -> Model:
    """`value` as a `model`, or ConfigError naming the key under `where`."""
    try:
        return model.model_validate(value, context=context)
    except ValidationError as exc:
        raise ConfigError(_refusal(exc, model, where)) from None


def _refusal(exc: ValidationError, model: type[BaseModel], where: str) -> str:
    """pydantic's first error as the one line a reader fixes: unknown keys first, all of
    them, then the first value."""
    errors = exc.errors()
    extra = [e for e in errors if e["type"] in ("extra_forbidden", "invalid_key")]
    error = (extra or errors)[0]
    loc = list(error["loc"])
    if extra:
        section: Any = model
        for part in loc[:-1]:
            if isinstance(part, str):
                section = section.model_fields[part].annotation
        names = sorted(str(e["loc"][-1]) for e in extra if e["loc"][:-1] == error["loc"][:-1])
        known = sorted(section.model_fields)
        return f"{_key(where, loc[:-1])}: unknown key(s) {names}; expected some of {known}"
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, PropertyError):
        loc.append(cause.key)
    return f"{_key(where, loc)}: {cause if cause is not None else error['msg']}"


def _key(where: str, loc: list[int | str]) -> str:
    return where + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _property(raw: Any, key: str, env: Any, base: Path, secrets: set[str]) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int | float):
        return str(raw)
    if not isinstance(raw, str):
        raise PropertyError(key, f"expected a string or number, found {type(raw).__name__}")
    referenced = raw.startswith(FILE_PREFIX) or ENV_REFERENCE.search(raw) is not None
    if SECRET_PROPERTY.search(key) and not referenced:
        raise PropertyError(
            key,
            "a secret must come from the environment (${NAME}) or a file "
            "(file:/path), not be written in the config",
        )
    if raw.startswith(FILE_PREFIX):
        secret_path = Path(raw[len(FILE_PREFIX) :])
        secret_path = secret_path if secret_path.is_absolute() else base / secret_path
        try:
            value = secret_path.read_text(encoding="utf-8").removesuffix("\n")
        except OSError as exc:
            raise PropertyError(key, f"cannot read {secret_path}: {exc.strerror}") from None
        secrets.add(value)
        return value

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise PropertyError(key, f"environment variable {name} is not set")
        secrets.add(env[name])
        return env[name]

    value = ENV_REFERENCE.sub(substitute, raw)
    if value != raw:
        secrets.add(value)
    return value
