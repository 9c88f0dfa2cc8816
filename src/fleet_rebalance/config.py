"""Typed job configuration read from conf/*.yaml.

One loader for every job: it fails fast on a missing file, an unknown key or a value of
the wrong type, naming the file and the dotted key, so a typo never becomes a silent
default at 2 a.m. Every value is checked here, before a SparkSession exists, so a bad
one never surfaces inside an executor task. A conf file is hostile input like any other:
its size, nesting and YAML features are bounded, and every message is one line of
bounded length. The models are pydantic's; their errors are translated into those lines.
"""

from __future__ import annotations

import ipaddress
import os
import re
import typing
import zoneinfo
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
)
from pydantic_core import ErrorDetails

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
# Config fields load_config sets, never the file.
LOADER_KEYS = ("source", "retired")
# What a pydantic type error expected, as these messages name it.
EXPECTED = {
    "string_type": "str",
    "bool_type": "bool",
    "int_type": "int",
    "float_type": "float",
    "dict_type": "a mapping",
}


def _found(value: Any) -> str:
    return f"{type(value).__name__} {shown(value)}"


# Each check raises ValueError saying what was expected (the message after the key).
def _one_of(choices: tuple[str, ...]) -> BeforeValidator:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"expected str, found {_found(value)}")
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, found {shown(value)}")
        return value

    return BeforeValidator(check)


def _within(accepts: Callable[[Any], bool], expected: str) -> AfterValidator:
    """A check of a number's range, saying the range it expected."""

    def check(value: Any) -> Any:
        if not accepts(value):
            raise ValueError(f"expected {expected}, found {shown(value)}")
        return value

    return AfterValidator(check)


def _property(value: Any) -> str:
    """Spark properties are strings; YAML turns 8 into an int and true into a bool."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ValueError(f"expected a string or number, found {_found(value)}")


def _plain_text(value: str) -> str:
    if not value.strip():
        raise ValueError(f"expected a non-empty string, found {shown(value)}")
    if not value.isprintable():
        raise ValueError(
            f"expected a string without control or format characters, found {shown(value)}"
        )
    return value


def _location_text(value: str) -> str:
    if not value.strip():
        raise ValueError(f"expected a directory or URI, found {shown(value)}")
    if not value.isprintable():
        raise ValueError(
            "expected a directory or URI without control or format characters, "
            f"found {shown(value)}"
        )
    return value


def _master(value: str) -> str:
    if not MASTER_URL.fullmatch(value):
        raise ValueError(
            "expected a Spark master URL (local, local[N], local[*], yarn, spark://HOST:PORT, "
            f"k8s://URL), found {shown(value)}"
        )
    return value


def _path_pattern(value: str) -> str:
    try:
        compiled = re.compile(value)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        raise ValueError(f"expected a regular expression, found {shown(value)} ({exc})") from None
    extra = sorted(set(compiled.groupindex) - set(PATH_GROUPS))
    if extra:
        raise ValueError(
            f"expected named groups among {', '.join(PATH_GROUPS)}, found group "
            f"{shown(extra[0])} in {shown(value)}"
        )
    return value


def _time_zone(value: str) -> str:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"expected an IANA time zone such as UTC or Europe/Paris, found {shown(value)}"
        ) from None
    return value


def _client_libraries(value: dict[str, str]) -> dict[str, str]:
    for pattern, library in value.items():
        if library not in CLIENT_LIBRARIES:
            raise ValueError(
                f"{pattern}: expected one of {', '.join(CLIENT_LIBRARIES)}, found {shown(library)}"
            )
    return value


def _no_credential(key: str) -> str:
    if key.upper() in SECRET_KEYS:
        raise ValueError(
            "credentials do not belong in a conf file; set them in the "
            "environment (or use a profile or instance role)"
        )
    return key


Key = Annotated[str, Field(min_length=1)]
Property = Annotated[str, BeforeValidator(_property)]
Properties = dict[Key, Property]
Count = Annotated[int, _within(lambda v: 1 <= v <= MAX_COUNT, f"an int from 1 to {MAX_COUNT}")]
Seconds = Annotated[int, _within(lambda v: 0 <= v <= 86_400, "whole seconds from 0 to 86400")]
Lag = Annotated[int, _within(lambda v: 0 <= v < 2**63, "an offset count from 0 to 2^63-1")]
MemoryMb = Annotated[int, _within(lambda v: 64 <= v <= 1 << 20, "MiB from 64 to 1048576")]
Positive = Annotated[float, _within(lambda v: 0.0 < v < 1e9, "a number above 0")]
SkewLimit = Annotated[
    float, _within(lambda v: 1.0 < v < 1e9, "a number above 1.0 (an even group's lag skew)")
]
Factor = Annotated[
    float,
    _within(lambda v: 1.0 <= v < 1e9, "a number of at least 1.0 (a multiple of the thresholds)"),
]
LocationText = Annotated[str, AfterValidator(_location_text)]


class Section(BaseModel):
    """A mapping of the conf: no key it does not know, no value of another type (YAML's
    `yes` is not a string, `2` not a bool), immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class StorageConfig(Section):
    schema_evolution: bool = False
    # deltalake's storage options (AWS_ENDPOINT_URL, AWS_REGION, ...), for the tables and,
    # translated, for the captures. Credentials come from the environment, never from here.
    options: dict[Annotated[Key, AfterValidator(_no_credential)], Property] = {}


class CaptureConfig(Section):
    # Regex over the path relative to raw_root; named groups cluster, timestamp, group.
    path_pattern: Annotated[str, AfterValidator(_path_pattern)] = r"^(?P<cluster>[^/]+)/"
    # Zone the brokers' log4j timestamps are written in.
    log_timezone: Annotated[str, AfterValidator(_time_zone)] = "UTC"
    # Memory one parse task may use, in MiB: a file larger than that allows is parsed a
    # chunk of lines at a time (capture/chunks.py), whatever its size.
    max_memory_mb: MemoryMb = 512
    # A compressed capture inflating past this many MiB, or past max_inflation_ratio
    # times its compressed size (once past 64 MiB), is refused unread: a compression
    # bomb or no capture (capture/compressed.py).
    max_inflated_mb: MemoryMb = 8192
    max_inflation_ratio: Count = 100


class MetricsConfig(Section):
    # offsets.topic.num.partitions of the clusters (Kafka's default 50): which
    # __consumer_offsets partition, and so which broker, coordinates each group.
    offsets_topic_partitions: Count = 50
    # Burrow's `intervals`: offsets per partition in one evaluation window.
    burrow_intervals: Count = 10
    # Burrow's `allowed-lag`: a current lag at most this is OK whatever the window shows.
    burrow_allowed_lag: Lag = 0
    # Groups listed per ranking in the nightly summary and report.
    report_top: Count = 10
    # The static-membership what-if's session.timeout.ms, in seconds: a restarted member
    # back within it would not have rebalanced with group.instance.id set.
    static_session_timeout_s: Count = 300
    # A consumer back under the same identity (group.instance.id, host or client id)
    # within this many seconds of leaving restarted: its leave and its return are one
    # incident, named for how it left (deploy_restart, session_timeout, poll_timeout).
    rejoin_window_s: Count = 600
    # A capture is stamped when it starts and its views are taken up to this many seconds
    # later: a generation logged as ending in between is before the capture when the
    # capture already shows its member change.
    capture_skew_s: Seconds = 10
    # session.timeout.ms of a consumer the coordinator expired whose log does not give it
    # (replay/session_timeouts.py): its absence counts this long before its expiry line.
    # The Java consumer's default since Kafka 3.0 (KIP-735), librdkafka's, and the
    # brokers' group.consumer.session.timeout.ms for consumer-protocol groups.
    session_timeout_ms: Count = 45_000
    # client.id glob -> the client library of the consumers it matches ("kafka" or
    # "librdkafka"): a librdkafka leader's group is judged against librdkafka's own
    # assignors. Without a match, librdkafka's default client.id `rdkafka` is librdkafka.
    client_libraries: Annotated[Properties, AfterValidator(_client_libraries)] = {}
    # A KIP-848 member behind its target epoch in captures spanning this many seconds
    # is stuck reconciling (the consumer's max.poll.interval.ms, 5 minutes by default).
    reconcile_stuck_s: Seconds = 300
    # group_health: a group needs attention at this many rebalances in a day (initial
    # joins not counted), or at this mean lag skew (max member lag / mean member lag)
    # when some partition lagged at least attention_min_lag messages.
    attention_rebalances: Count = 6
    attention_lag_skew: SkewLimit = 2.0
    attention_min_lag: Lag = 1000
    # A change is recommended only when it saves at least this much in cost against what
    # the group runs: paused partition-seconds or messages delayed (paused partitions
    # where no log times the rebalances), or lowers the mean lag skew this much (or
    # balances the group) while a partition lagged attention_min_lag messages; never for
    # rebalances alone (else `keep`, with what the best change would have saved). A
    # protocol migration whose brokers need upgrading first must gain
    # migration_gain_factor times as much. A consumer back with a new member id after
    # crash_loop_restarts session expiries in a day is a crash loop (fix_crash_loop).
    change_min_seconds_saved: Positive = 60.0
    change_min_messages_delayed_saved: Count = 10_000
    change_min_paused_partitions_saved: Count = 12
    change_min_skew_gain: Positive = 0.25
    migration_gain_factor: Factor = 3.0
    crash_loop_restarts: Count = 3
    # rack_aware (client.rack, the brokers' replica selector, a rack-aware assignor) is
    # recommended only when it keeps at least this many GB (10^9 bytes) a day of the
    # group's reads in their zone; its cost is that at zones.price_per_gb. 50 GB is 1.00 a
    # day at AWS's 0.02 (365 a year): below it a day's traffic varies by as much, and a
    # group's rolling restart and the later reads follower fetching brings (a follower
    # serves a record once it learns the high watermark) are not worth it.
    change_min_cross_zone_gb_saved: Positive = 50.0


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value)
    except ValueError:
        raise ValueError(f"expected a CIDR such as 10.0.0.0/16, found {shown(value)}") from None
    return value


Zone = Annotated[str, AfterValidator(_plain_text)]
Cidr = Annotated[str, AfterValidator(_cidr)]
BrokerId = Annotated[int, _within(lambda v: 0 <= v <= MAX_COUNT, "a broker id from 0 to 2^31-1")]
RecordBytes = Annotated[
    int, _within(lambda v: 1 <= v <= 1 << 30, "bytes per record from 1 to 1073741824")
]
Price = Annotated[float, _within(lambda v: 0.0 <= v < 1e6, "a price of 0 or more per GB")]


class ZonesConfig(Section):
    # The zone of a consumer without client.rack: the longest of these CIDRs holding its
    # host ("10.1.0.0/16": us-east-1a). No match and no rack: its zone is unknown.
    consumer_cidrs: dict[Cidr, Zone] = {}
    # The zone of a broker no capture gives a broker.rack (cluster: {broker id: zone}).
    brokers: dict[Key, dict[BrokerId, Zone]] = {}
    # Stored bytes per record of a topic, for the bytes of partitions whose log-dir sizes
    # are not captured (those bytes are `estimated`); without one they are unknown.
    record_bytes: dict[Key, RecordBytes] = {}
    default_record_bytes: RecordBytes | None = None
    # What reading one GB (10^9 bytes) across zones costs, in the bill's currency: on AWS
    # $0.01 out of one zone and $0.01 into the other.
    price_per_gb: Price = 0.02


class ReportConfig(Section):
    # The report's "last N days" section reads group_health and lag_distribution for
    # these many dates up to the run date (its partitions only).
    history_days: Count = 14


class Config(Section):
    app_name: Annotated[str, AfterValidator(_plain_text)] = "fleet_rebalance"
    master: Annotated[str, AfterValidator(_master)] = "local[*]"
    raw_root: LocationText = "data/sample"
    warehouse: LocationText = "warehouse"
    # Date a run processes without --date: "yesterday" (UTC) or "latest" (the newest
    # capture date under raw_root; what the bundled sample wants).
    default_date: Annotated[DefaultDate, _one_of(DEFAULT_DATES)] = "yesterday"
    storage: StorageConfig = StorageConfig()
    capture: CaptureConfig = CaptureConfig()
    metrics: MetricsConfig = MetricsConfig()
    report: ReportConfig = ReportConfig()
    zones: ZonesConfig = ZonesConfig()
    # Extra Spark properties, applied by build_session (e.g. spark.sql.shuffle.partitions).
    spark: Properties = {}
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
    flags = {
        key: value
        for key, value in {"raw_root": raw_root, "warehouse": warehouse}.items()
        if value is not None
    }
    for key, value in flags.items():
        try:
            _location_text(value)
        except ValueError as exc:
            raise ConfigError(f"{key} given on the command line: {exc}") from None
    if isinstance(raw, dict):
        clash = sorted(set(raw) & set(LOADER_KEYS))
        if clash:
            raise ConfigError(_unknown(path, (clash[0],)))
        raw = {**raw, **flags, "source": str(path), "retired": retired}
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_refusal(exc, path)) from None
    conf_dir = path.absolute().parent
    flags_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    resolved: dict[str, str] = {}
    for key in PATH_KEYS:
        base = flags_dir if key in flags else conf_dir
        try:
            resolved[key] = location(_absolute(getattr(config, key), base)).uri
        except LocationError as exc:
            raise ConfigError(f"{path}: {key}: {exc}") from exc
    config = config.model_copy(update=resolved)
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


def _refusal(exc: ValidationError, path: Path) -> str:
    """pydantic's first error as one line naming the file and the dotted key: a bad key
    before a bad value, as a reader fixes them."""
    error = min(exc.errors(), key=_precedence)
    loc, kind, found = error["loc"], error["type"], error["input"]
    if kind == "extra_forbidden" and loc[-1] != "":
        return _unknown(path, loc)
    if kind == "value_error":
        # A key's own check (storage.options) names the key.
        loc = tuple(part for part in loc if part != "[key]")
        problem = str(error["ctx"]["error"])
    elif kind in ("invalid_key", "extra_forbidden") or loc[-1:] == ("[key]",):
        key = "" if kind == "extra_forbidden" else found
        loc = loc[:-2] if loc[-1:] == ("[key]",) else loc[:-1]
        problem = f"expected string keys, found {_found(key)}"
    elif kind == "model_type":
        problem = f"expected a mapping, found {type(found).__name__}"
    elif kind in EXPECTED:
        problem = f"expected {EXPECTED[kind]}, found {_found(found)}"
    else:
        problem = f"{error['msg']}, found {_found(found)}"
    return f"{path}: {'.'.join(map(str, loc)) or 'top level'}: {problem}"


def _precedence(error: ErrorDetails) -> tuple[int, tuple[int | str, ...]]:
    """Keys that are not strings, then unknown keys (alphabetically), then values of
    the wrong type, then values a check refuses."""
    kinds = ("invalid_key", "extra_forbidden")
    rank = kinds.index(error["type"]) if error["type"] in kinds else len(kinds)
    rank += error["type"] == "value_error"
    return rank, error["loc"] if error["type"] == "extra_forbidden" else ()


def _unknown(path: Path, loc: tuple[int | str, ...]) -> str:
    section: BaseModel = Config()
    for part in loc[:-1]:
        section = getattr(section, str(part))
    known = sorted(set(type(section).model_fields) - set(LOADER_KEYS))
    prefix = "".join(f"{part}." for part in loc[:-1])
    name = one_line(str(loc[-1]), VALUE_CHARS)
    return f"{path}: unknown key {prefix}{name} (known: {', '.join(known)})"


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
