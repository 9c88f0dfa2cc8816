"""Typed job configuration read from conf/*.yaml.

One loader for every job: it fails fast on a missing file, an unknown key or a value of
the wrong type, naming the file and the dotted key, so a typo never becomes a silent
default at 2 a.m. Every value is checked here, before a SparkSession exists, so a bad
one never surfaces inside an executor task. A conf file is hostile input like any other:
its size, nesting and YAML features are bounded, and every message is one line of
bounded length.
"""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fleet_rebalance.filesystems import (
    AZURE_SCHEMES,
    S3_SCHEMES,
    SECRET_KEYS,
    LocationError,
    azure_arguments,
    location,
    s3_arguments,
)
from fleet_rebalance.yaml_file import (
    VALUE_CHARS,
    ConfigError,
    one_line,
    read_yaml,
    shown,
)

# The modes a conf file chooses among: default_date.
DefaultDate = Literal["yesterday", "latest"]
DEFAULT_DATES: tuple[DefaultDate, ...] = typing.get_args(DefaultDate)
# What metrics.client_libraries maps a client.id to (replay/client_library.py).
ClientLibrary = Literal["kafka", "librdkafka"]
CLIENT_LIBRARIES: tuple[ClientLibrary, ...] = typing.get_args(ClientLibrary)
# Keys an older conf may set that mean nothing now: the run logs why, once, and goes on.
RETIRED_KEYS = {
    "storage": {
        "engine": "every table is written and read by delta-spark; the delta-rs engine is gone",
        "reader": "tables are read by delta-spark; there is no other reader to choose",
    },
    "metrics": {
        "change_min_rebalances_saved": "a change is recommended for what it saves in "
        "paused partition-seconds or messages delayed, never for a count of rebalances",
    },
}
# Config keys holding a location; a relative one is relative to the conf file's directory.
PATH_KEYS = ("raw_root", "warehouse")
# Named groups parse_capture_path reads from capture.path_pattern; any other name would
# be silently ignored.
PATH_GROUPS = ("cluster", "timestamp", "group")
# The counts go to numpy int64 arithmetic and Spark int columns.
MAX_COUNT = 2**31 - 1
# What Spark's SparkContext and spark-submit accept as a master URL.
MASTER_URL = re.compile(
    r"local(\[([1-9][0-9]*|\*)(\s*,\s*[0-9]+)?\])?"
    r"|local-cluster\[\s*[0-9]+\s*,\s*[0-9]+\s*,\s*[0-9]+\s*\]"
    r"|yarn|spark://\S+|k8s://\S+"
)


@dataclass(frozen=True)
class StorageConfig:
    schema_evolution: bool = False
    # deltalake's storage options (AWS_ENDPOINT_URL, AWS_REGION, ...), for the tables and,
    # translated, for the captures. Credentials come from the environment, never from here.
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CaptureConfig:
    # Regex over the path relative to raw_root; named groups cluster, timestamp, group.
    path_pattern: str = r"^(?P<cluster>[^/]+)/"
    # Zone the brokers' log4j timestamps are written in.
    log_timezone: str = "UTC"
    # Memory one parse task may use, in MiB: a file larger than that allows is parsed a
    # chunk of lines at a time (capture/chunks.py), whatever its size.
    max_memory_mb: int = 512
    # A compressed capture inflating past this many MiB, or past max_inflation_ratio
    # times its compressed size (once past 64 MiB), is refused unread: a compression
    # bomb or no capture (capture/compressed.py).
    max_inflated_mb: int = 8192
    max_inflation_ratio: int = 100


@dataclass(frozen=True)
class MetricsConfig:
    # offsets.topic.num.partitions of the clusters (Kafka's default 50): which
    # __consumer_offsets partition, and so which broker, coordinates each group.
    offsets_topic_partitions: int = 50
    # Burrow's `intervals`: offsets per partition in one evaluation window.
    burrow_intervals: int = 10
    # Burrow's `allowed-lag`: a current lag at most this is OK whatever the window shows.
    burrow_allowed_lag: int = 0
    # Groups listed per ranking in the nightly summary and report.
    report_top: int = 10
    # The static-membership what-if's session.timeout.ms, in seconds: a restarted member
    # back within it would not have rebalanced with group.instance.id set.
    static_session_timeout_s: int = 300
    # A consumer back under the same identity (group.instance.id, host or client id)
    # within this many seconds of leaving restarted: its leave and its return are one
    # incident, named for how it left (deploy_restart, session_timeout, poll_timeout).
    rejoin_window_s: int = 600
    # A capture is stamped when it starts and its views are taken up to this many seconds
    # later: a generation logged as ending in between is before the capture when the
    # capture already shows its member change.
    capture_skew_s: int = 10
    # session.timeout.ms of a consumer the coordinator expired whose log does not give it
    # (replay/session_timeouts.py): its absence counts this long before its expiry line.
    # The Java consumer's default since Kafka 3.0 (KIP-735), librdkafka's, and the
    # brokers' group.consumer.session.timeout.ms for consumer-protocol groups.
    session_timeout_ms: int = 45_000
    # client.id glob -> the client library of the consumers it matches ("kafka" or
    # "librdkafka"): a librdkafka leader's group is judged against librdkafka's own
    # assignors. Without a match, librdkafka's default client.id `rdkafka` is librdkafka.
    client_libraries: dict[str, str] = field(default_factory=dict)
    # A KIP-848 member behind its target epoch in captures spanning this many seconds
    # is stuck reconciling (the consumer's max.poll.interval.ms, 5 minutes by default).
    reconcile_stuck_s: int = 300
    # group_health: a group needs attention at this many rebalances in a day (initial
    # joins not counted), or at this mean lag skew (max member lag / mean member lag)
    # when some partition lagged at least attention_min_lag messages.
    attention_rebalances: int = 6
    attention_lag_skew: float = 2.0
    attention_min_lag: int = 1000
    # A change is recommended only when it saves at least this much in cost against what
    # the group runs: paused partition-seconds or messages delayed (paused partitions
    # where no log times the rebalances), or lowers the mean lag skew this much (or
    # balances the group) while a partition lagged attention_min_lag messages; never for
    # rebalances alone (else `keep`, with what the best change would have saved). A
    # protocol migration whose brokers need upgrading first must gain
    # migration_gain_factor times as much. A consumer back with a new member id after
    # crash_loop_restarts session expiries in a day is a crash loop (fix_crash_loop).
    change_min_seconds_saved: float = 60.0
    change_min_messages_delayed_saved: int = 10_000
    change_min_paused_partitions_saved: int = 12
    change_min_skew_gain: float = 0.25
    migration_gain_factor: float = 3.0
    crash_loop_restarts: int = 3


@dataclass(frozen=True)
class ReportConfig:
    # The report's "last N days" section reads group_health and lag_distribution for
    # these many dates up to the run date (its partitions only).
    history_days: int = 14


@dataclass(frozen=True)
class Config:
    app_name: str = "fleet_rebalance"
    master: str = "local[*]"
    raw_root: str = "data/sample"
    warehouse: str = "warehouse"
    # Date a run processes without --date: "yesterday" (UTC) or "latest" (the newest
    # capture date under raw_root; what the bundled sample wants).
    default_date: DefaultDate = "yesterday"
    storage: StorageConfig = field(default_factory=StorageConfig)
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    # Extra Spark properties, applied by build_session (e.g. spark.sql.shuffle.partitions).
    spark: dict[str, str] = field(default_factory=dict)
    source: str = "<defaults>"
    # One line per retired key the file set (RETIRED_KEYS), logged by build_session.
    retired: tuple[str, ...] = ()

    def table_path(self, name: str) -> str:
        return location(self.warehouse).child(name).uri


def load_config(
    path: str | Path,
    *,
    raw_root: str | None = None,
    warehouse: str | None = None,
    base_dir: str | Path | None = None,
) -> Config:
    """Read one YAML file; flags given on the command line override its values.

    Relative paths (PATH_KEYS) are made absolute, so executors and later steps see the
    same location: those in the file against the file's directory (a conf means the
    same wherever it is run from), those given here (the command line's) against
    base_dir (default: the current directory).
    """
    path = Path(path)
    raw = read_yaml(path)
    raw, retired = _without_retired({} if raw is None else raw, path)
    values = _build(Config, raw, path, prefix="")
    config = Config(**{**values, "source": str(path), "retired": retired})
    overrides = {"raw_root": raw_root, "warehouse": warehouse}
    for key, value in overrides.items():
        problem = None if value is None else _location_text(value)
        if problem:
            raise ConfigError(f"{key} given on the command line: {problem}")
    config = dataclasses.replace(
        config,
        raw_root=config.raw_root if raw_root is None else raw_root,
        warehouse=config.warehouse if warehouse is None else warehouse,
    )
    _validate(config, path)
    conf_dir = path.absolute().parent
    flags_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    resolved: dict[str, str] = {}
    for key in PATH_KEYS:
        value = getattr(config, key)
        base = conf_dir if overrides[key] is None else flags_dir
        try:
            resolved[key] = location(_absolute(value, base)).uri
        except LocationError as exc:
            raise ConfigError(f"{path}: {key}: {exc}") from exc
    config = dataclasses.replace(
        config, raw_root=resolved["raw_root"], warehouse=resolved["warehouse"]
    )
    _check_store_options(config, path)
    return config


def _absolute(value: str, base: Path) -> str:
    """A local relative path joined to base (`..` folded); a URI or absolute path as is."""
    if "://" in value or value.startswith("file:") or Path(value).is_absolute():
        return value
    return os.path.normpath(base / value)


def _without_retired(raw: Any, path: Path) -> tuple[Any, tuple[str, ...]]:
    """`raw` without RETIRED_KEYS, and a line saying why for each it set."""
    if not isinstance(raw, dict):
        return raw, ()
    lines = []
    for section, keys in RETIRED_KEYS.items():
        values = raw.get(section)
        if not isinstance(values, dict):
            continue
        for key, why in keys.items():
            if key in values:
                lines.append(f"{path}: {section}.{key} is no longer read ({why})")
        raw = {**raw, section: {k: v for k, v in values.items() if k not in keys}}
    return raw, tuple(lines)


def _build(cls: type, raw: Any, path: Path, prefix: str) -> dict[str, Any]:
    where = prefix.rstrip(".") or "top level"
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: {where}: expected a mapping, found {type(raw).__name__}")
    _check_keys(raw, path, where)
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if f.name not in ("source", "retired")}
    unknown = sorted(set(raw) - known)
    if unknown:
        name = one_line(unknown[0], VALUE_CHARS)
        raise ConfigError(f"{path}: unknown key {prefix}{name} (known: {', '.join(sorted(known))})")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        key = f"{prefix}{name}"
        hint = hints[name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[name] = hint(**_build(hint, value, path, prefix=f"{key}."))
        else:
            values[name] = _check(value, hint, path, key)
    return values


def _check_keys(raw: dict, path: Path, where: str) -> None:
    for key in raw:
        if not isinstance(key, str) or not key:
            raise ConfigError(
                f"{path}: {where}: expected string keys, found {type(key).__name__} {shown(key)}"
            )


def _check(value: Any, hint: Any, path: Path, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(
                f"{path}: {key}: expected a mapping, found {type(value).__name__} {shown(value)}"
            )
        _check_keys(value, path, key)
        # Spark properties are strings; YAML turns 8 into an int and true into a bool.
        return {k: _spark_value(v, path, f"{key}.{k}") for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(hint):
            return None
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is Literal:
        # The type is checked here, the choice among the modes by CHECKS (_one_of).
        hint = type(typing.get_args(hint)[0])
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)  # YAML reads `2` as an int
    # bool is an int in Python; YAML's `yes` must not pass as a count or vice versa.
    if not isinstance(value, hint) or (hint is not bool and isinstance(value, bool)):
        raise ConfigError(
            f"{path}: {key}: expected {hint.__name__}, found {type(value).__name__} {shown(value)}"
        )
    return value


def _spark_value(value: Any, path: Path, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(
        f"{path}: {key}: expected a string or number, found {type(value).__name__} {shown(value)}"
    )


# Each check returns what was expected (the message after the key), or None.
Check = Callable[[Any], "str | None"]


def _one_of(choices: tuple[str, ...]) -> Check:
    def check(value: str) -> str | None:
        if value in choices:
            return None
        return f"expected one of {', '.join(choices)}, found {shown(value)}"

    return check


def _plain_text(value: str) -> str | None:
    if not value.strip():
        return f"expected a non-empty string, found {shown(value)}"
    if not value.isprintable():
        return f"expected a string without control or format characters, found {shown(value)}"
    return None


def _location_text(value: str) -> str | None:
    if not value.strip():
        return f"expected a directory or URI, found {shown(value)}"
    if not value.isprintable():
        return (
            "expected a directory or URI without control or format characters, "
            f"found {shown(value)}"
        )
    return None


def _master(value: str) -> str | None:
    if MASTER_URL.fullmatch(value):
        return None
    return (
        "expected a Spark master URL (local, local[N], local[*], yarn, spark://HOST:PORT, "
        f"k8s://URL), found {shown(value)}"
    )


def _count(value: int) -> str | None:
    if 1 <= value <= MAX_COUNT:
        return None
    return f"expected an int from 1 to {MAX_COUNT}, found {shown(value)}"


def _client_libraries(value: dict[str, str]) -> str | None:
    for pattern, library in value.items():
        if library not in CLIENT_LIBRARIES:
            return (
                f"{pattern}: expected one of {', '.join(CLIENT_LIBRARIES)}, found {shown(library)}"
            )
    return None


def _skew_limit(value: float) -> str | None:
    if 1.0 < value < 1e9:
        return None
    return f"expected a number above 1.0 (an even group's lag skew), found {shown(value)}"


def _positive(value: float) -> str | None:
    if 0.0 < value < 1e9:
        return None
    return f"expected a number above 0, found {shown(value)}"


def _factor(value: float) -> str | None:
    if 1.0 <= value < 1e9:
        return None
    return f"expected a number of at least 1.0 (a multiple of the thresholds), found {shown(value)}"


def _seconds(value: int) -> str | None:
    if 0 <= value <= 86_400:
        return None
    return f"expected whole seconds from 0 to 86400, found {shown(value)}"


def _lag(value: int) -> str | None:
    if 0 <= value < 2**63:
        return None
    return f"expected an offset count from 0 to 2^63-1, found {shown(value)}"


def _memory_mb(value: int) -> str | None:
    if 64 <= value <= 1 << 20:
        return None
    return f"expected MiB from 64 to 1048576, found {shown(value)}"


def _path_pattern(value: str) -> str | None:
    try:
        compiled = re.compile(value)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        return f"expected a regular expression, found {shown(value)} ({exc})"
    extra = sorted(set(compiled.groupindex) - set(PATH_GROUPS))
    if extra:
        return (
            f"expected named groups among {', '.join(PATH_GROUPS)}, found group "
            f"{shown(extra[0])} in {shown(value)}"
        )
    return None


def _time_zone(value: str) -> str | None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"expected an IANA time zone such as UTC or Europe/Paris, found {shown(value)}"
    return None


def _options(options: dict[str, str]) -> str | None:
    secrets = sorted(k for k in options if k.upper() in SECRET_KEYS)
    if secrets:
        return (
            f"{secrets[0]}: credentials do not belong in a conf file; set them in the "
            "environment (or use a profile or instance role)"
        )
    return None


CHECKS: dict[str, Check] = {
    "app_name": _plain_text,
    "master": _master,
    "raw_root": _location_text,
    "warehouse": _location_text,
    "default_date": _one_of(DEFAULT_DATES),
    "capture.path_pattern": _path_pattern,
    "capture.log_timezone": _time_zone,
    "capture.max_memory_mb": _memory_mb,
    "capture.max_inflated_mb": _memory_mb,
    "capture.max_inflation_ratio": _count,
    "metrics.offsets_topic_partitions": _count,
    "metrics.burrow_intervals": _count,
    "metrics.burrow_allowed_lag": _lag,
    "metrics.report_top": _count,
    "metrics.static_session_timeout_s": _count,
    "metrics.attention_rebalances": _count,
    "metrics.attention_lag_skew": _skew_limit,
    "metrics.attention_min_lag": _lag,
    "metrics.rejoin_window_s": _count,
    "metrics.capture_skew_s": _seconds,
    "metrics.session_timeout_ms": _count,
    "metrics.client_libraries": _client_libraries,
    "metrics.reconcile_stuck_s": _seconds,
    "metrics.change_min_seconds_saved": _positive,
    "metrics.change_min_messages_delayed_saved": _count,
    "metrics.change_min_paused_partitions_saved": _count,
    "metrics.change_min_skew_gain": _positive,
    "metrics.migration_gain_factor": _factor,
    "metrics.crash_loop_restarts": _count,
    "report.history_days": _count,
}


def _validate(config: Config, path: Path) -> None:
    for key, check in CHECKS.items():
        value: Any = config
        for part in key.split("."):
            value = getattr(value, part)
        problem = check(value)
        if problem:
            raise ConfigError(f"{path}: {key}: {problem}")
    problem = _options(config.storage.options)
    if problem:
        raise ConfigError(f"{path}: storage.options.{problem}")


def _check_store_options(config: Config, path: Path) -> None:
    """What opening the stores' filesystems would refuse later, refused now."""
    schemes = {location(uri).scheme for uri in (config.raw_root, config.warehouse)}
    options = config.storage.options
    try:
        if schemes & set(S3_SCHEMES):
            s3_arguments(options, os.environ)
        if schemes & set(AZURE_SCHEMES):
            azure_arguments(options)
    except LocationError as exc:
        raise ConfigError(f"{path}: storage.options: {exc}") from exc
