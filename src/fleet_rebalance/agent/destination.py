"""Where the agent writes: raw_root, the store's options, and compression.

raw_root takes what the jobs take (a local path, file://, s3://, s3a://, gs://, abfs://,
abfss://) and is opened through the same filesystem layer (filesystems.Location), so a
snapshot lands where ingest and the jobs' capture discovery look. `storage.options`
are the jobs' non-secret store options (AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP,
AZURE_STORAGE_ACCOUNT_NAME, ...); credentials come from the environment or the
provider chain, and a credential key in the file is refused, as the jobs refuse it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fleet_rebalance.agent.errors import ConfigError
from fleet_rebalance.agent.writer import GZIP, Compression
from fleet_rebalance.filesystems import (
    AZURE_SCHEMES,
    S3_SCHEMES,
    SECRET_KEYS,
    Location,
    LocationError,
    azure_arguments,
    location,
    s3_arguments,
)

NONE = "none"


def parse_raw_root(raw_root: Any, options: Mapping[str, str], base: Path) -> Path | Location:
    """A local raw_root as a Path (relative paths start at the config's directory), a
    remote one as a Location carrying the store options; ConfigError names the key."""
    if not isinstance(raw_root, str) or not raw_root:
        raise ConfigError(
            "raw_root: expected a directory path or a s3://, gs:// or abfs:// URI, found "
            + repr(raw_root)
        )
    if "://" not in raw_root and not raw_root.startswith("file:"):
        return base / raw_root if not os.path.isabs(raw_root) else Path(raw_root)
    try:
        root = location(raw_root, options)
    except LocationError as exc:
        raise ConfigError(f"raw_root: {exc}") from None
    if root.is_local:
        return Path(root.uri)
    try:
        if root.scheme in S3_SCHEMES:
            s3_arguments(options, os.environ)
        if root.scheme in AZURE_SCHEMES:
            azure_arguments(options)
    except LocationError as exc:
        raise ConfigError(f"storage.options: {exc}") from None
    return root


def parse_storage_options(storage: Any) -> dict[str, str]:
    """`storage: {options: {KEY: value}}`, the jobs' spelling; no credential keys."""
    if storage is None:
        return {}
    if not isinstance(storage, dict) or set(storage) - {"options"}:
        raise ConfigError(f"storage: expected a mapping with one key, options, found {storage!r}")
    options = storage.get("options") or {}
    if not isinstance(options, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float | bool) for k, v in options.items()
    ):
        raise ConfigError("storage.options: expected a mapping of option names to values")
    secrets = sorted(k for k in options if k.upper() in SECRET_KEYS)
    if secrets:
        raise ConfigError(
            f"storage.options.{secrets[0]}: credentials do not belong in a conf file; set "
            "them in the environment (or use a profile or instance role)"
        )
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}


def parse_compression(value: Any) -> Compression | None:
    """`compression: none | gzip` (default none)."""
    if value is None or value == NONE:
        return None
    if value != GZIP:
        raise ConfigError(f"compression: expected none or gzip, found {value!r}")
    return GZIP
