"""Typed job configuration read from conf/*.yaml.

One loader for every job: it fails fast on a missing file, an unknown key or a value of
the wrong type, naming the file and the dotted key, so a typo never becomes a silent
default at 2 a.m.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fleet_rebalance.filesystems import SECRET_KEYS, LocationError, location

ENGINES = ("auto", "delta-rs", "delta-spark")
READERS = ("auto", "spark", "arrow")


class ConfigError(ValueError):
    """A configuration file that cannot be used as it is."""


@dataclass(frozen=True)
class StorageConfig:
    engine: str = "auto"
    schema_evolution: bool = False
    # deltalake's storage options (AWS_ENDPOINT_URL, AWS_REGION, ...), for the tables and,
    # translated, for the captures. Credentials come from the environment, never from here.
    options: dict[str, str] = field(default_factory=dict)
    # How the delta-rs engine reads Parquet: auto (Spark's reader where the JVM has a
    # filesystem for the scheme, else Arrow on the executors), spark or arrow.
    reader: str = "auto"


@dataclass(frozen=True)
class CaptureConfig:
    # Regex over the path relative to raw_root; named groups cluster, timestamp, group.
    path_pattern: str = r"^(?P<cluster>[^/]+)/"
    # Zone the brokers' log4j timestamps are written in.
    log_timezone: str = "UTC"


@dataclass(frozen=True)
class MetricsConfig:
    # offsets.topic.num.partitions of the clusters (Kafka's default 50): which
    # __consumer_offsets partition, and so which broker, coordinates each group.
    offsets_topic_partitions: int = 50
    # Burrow's `intervals`: offsets per partition in one evaluation window.
    burrow_intervals: int = 10
    # Groups listed per ranking in the nightly summary and report.
    report_top: int = 10


@dataclass(frozen=True)
class Config:
    app_name: str = "fleet_rebalance"
    master: str = "local[*]"
    raw_root: str = "data/sample"
    warehouse: str = "warehouse"
    # Date a run processes without --date: "yesterday" (UTC) or "latest" (the newest
    # capture date under raw_root; what the bundled sample wants).
    default_date: str = "yesterday"
    storage: StorageConfig = field(default_factory=StorageConfig)
    capture: CaptureConfig = field(default_factory=CaptureConfig)
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    # Extra Spark properties, applied by build_session (e.g. spark.sql.shuffle.partitions).
    spark: dict[str, str] = field(default_factory=dict)
    source: str = "<defaults>"

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

    Relative raw_root and warehouse paths are made absolute against base_dir (default:
    the current directory), so executors and later steps see the same location.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: configuration file not found")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if raw is None:
        raw = {}
    values = _build(Config, raw, path, prefix="")
    config = Config(**{**values, "source": str(path)})
    overrides = {k: v for k, v in {"raw_root": raw_root, "warehouse": warehouse}.items() if v}
    config = dataclasses.replace(config, **overrides)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    resolved = {}
    for key in ("raw_root", "warehouse"):
        value = getattr(config, key)
        local = "://" not in value and not value.startswith("file:")
        try:
            resolved[key] = location(str(base / value) if local else value).uri
        except LocationError as exc:
            raise ConfigError(f"{path}: {key}: {exc}") from exc
    return dataclasses.replace(config, **resolved)


def _build(cls: type, raw: Any, path: Path, prefix: str) -> dict[str, Any]:
    where = prefix.rstrip(".") or "top level"
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: {where}: expected a mapping, found {type(raw).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if f.name != "source"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {prefix}{unknown[0]!s} (known: {', '.join(sorted(known))})"
        )
    values: dict[str, Any] = {}
    for name, value in raw.items():
        key = f"{prefix}{name}"
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            values[name] = hint(**_build(hint, value, path, prefix=f"{key}."))
        else:
            values[name] = _check(value, hint, path, key)
    if "default_date" in values and values["default_date"] not in ("yesterday", "latest"):
        raise ConfigError(
            f"{path}: {prefix}default_date: expected yesterday or latest, "
            f"found {values['default_date']!r}"
        )
    for name in ("offsets_topic_partitions", "burrow_intervals", "report_top"):
        if name in values and values[name] < 1:
            raise ConfigError(
                f"{path}: {prefix}{name}: expected a positive int, found {values[name]}"
            )
    secrets = sorted(k for k in values.get("options", {}) if k.upper() in SECRET_KEYS)
    if prefix == "storage." and secrets:
        raise ConfigError(
            f"{path}: storage.options.{secrets[0]}: credentials do not belong in a conf "
            "file; set them in the environment (or use a profile or instance role)"
        )
    if "reader" in values and values["reader"] not in READERS:
        raise ConfigError(
            f"{path}: {prefix}reader: expected one of {', '.join(READERS)}, "
            f"found {values['reader']!r}"
        )
    if "engine" in values and values["engine"] not in ENGINES:
        raise ConfigError(
            f"{path}: {prefix}engine: expected one of {', '.join(ENGINES)}, "
            f"found {values['engine']!r}"
        )
    return values


def _check(value: Any, hint: Any, path: Path, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {key}: expected a mapping, found {value!r}")
        # Spark properties are strings; YAML turns 8 into an int and true into a bool.
        return {str(k): _spark_value(v, path, f"{key}.{k}") for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(hint):
            return None
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    # bool is an int in Python; YAML's `yes` must not pass as a count or vice versa.
    if not isinstance(value, hint) or (hint is not bool and isinstance(value, bool)):
        raise ConfigError(
            f"{path}: {key}: expected {hint.__name__}, found {type(value).__name__} {value!r}"
        )
    return value


def _spark_value(value: Any, path: Path, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(f"{path}: {key}: expected a string or number, found {value!r}")
