"""Where raw captures and tables live: one URI and its store's filesystem.

raw_root and warehouse are URIs (DESIGN.md "Where the data lives"): a local path,
file://, s3:// or s3a://, gs://, abfs:// or abfss://. `storage.options` are keyed as the
deltalake package's storage options; the same map, translated, opens the store with
pyarrow.fs for everything Python reads or writes outside a Delta commit. Credentials are
never in it: they come from the environment or the provider chain of every process.

Spark-free: the capture parsers on the executors use it as much as the driver does.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

if TYPE_CHECKING:  # imported where a store is opened: a launch that refuses never does
    import pyarrow.fs as pafs

LOCAL = "file"
S3_SCHEMES = ("s3", "s3a")
GCS_SCHEMES = ("gs", "gcs")
AZURE_SCHEMES = ("abfs", "abfss", "az", "adl")
SCHEMES = (LOCAL, *S3_SCHEMES, *GCS_SCHEMES, *AZURE_SCHEMES)
# Keys whose values authenticate: they belong in the environment, never in a conf file
# that is copied around, shipped to executors and shown in Spark's UI.
SECRET_KEYS = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_STORAGE_ACCOUNT_KEY",
        "AZURE_STORAGE_ACCESS_KEY",
        "AZURE_STORAGE_SAS_KEY",
        "AZURE_STORAGE_TOKEN",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_SERVICE_ACCOUNT_KEY",
    }
)
# Environment variables an executor needs to reach the stores, copied from the driver's.
CREDENTIAL_ENV = (
    *sorted(SECRET_KEYS),
    "AWS_PROFILE",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
)


class LocationError(ValueError):
    """A URI this project cannot read or write."""


@dataclass(frozen=True)
class Location:
    """A directory or file on one store. `uri` is canonical: an absolute local path
    (no scheme, not percent-encoded: names may hold spaces, `#`, `%` and quotes), or
    scheme://bucket/key without a trailing slash."""

    uri: str
    options: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def scheme(self) -> str:
        return LOCAL if self.is_local else self.uri.split("://", 1)[0]

    @property
    def is_local(self) -> bool:
        return "://" not in self.uri

    def child(self, *parts: str) -> Location:
        return Location(posixpath.join(self.uri, *parts), self.options)

    def filesystem(self) -> tuple[pafs.FileSystem, str]:
        """The store's pyarrow filesystem and this location's path on it."""
        return _filesystem(self.scheme, _frozen(self.options)), self.fs_path

    @property
    def fs_path(self) -> str:
        if self.is_local:
            return self.uri
        return self.uri.split("://", 1)[1]

    @property
    def delta_uri(self) -> str:
        """The URI as the deltalake package takes it: a local path as it is, a remote key
        percent-encoded (deltalake parses it as a URL: a raw `#` would end the path)."""
        if self.is_local:
            return self.uri
        scheme, rest = self.uri.split("://", 1)
        bucket, _, key = rest.partition("/")
        return f"{scheme}://{bucket}/{quote(key, safe='/')}" if key else self.uri

    def __str__(self) -> str:
        return self.uri


def location(uri: str, options: Mapping[str, str] | None = None) -> Location:
    """A URI in canonical form; a relative local path is taken from the current directory."""
    options = dict(options or {})
    if "://" not in uri and not uri.startswith("file:"):
        return Location(os.path.abspath(uri), options)
    # No fragments: `#` is part of a key or a directory name, never a fragment marker.
    parts = urlsplit(uri, allow_fragments=False)
    scheme = parts.scheme.lower()
    if scheme == LOCAL:
        if parts.netloc not in ("", "localhost"):
            raise LocationError(f"{uri}: file:// URIs name no host (file:///path)")
        return Location(os.path.abspath(unquote(parts.path)), options)
    if scheme not in SCHEMES:
        raise LocationError(
            f"{uri}: unsupported scheme {scheme!r}: expected a local path, file://, "
            "s3://, s3a://, gs://, abfs:// or abfss://"
        )
    if not parts.netloc:
        raise LocationError(f"{uri}: no bucket or container after {scheme}://")
    path = parts.path.rstrip("/")
    return Location(f"{scheme}://{parts.netloc}{path}", options)


def _frozen(options: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k.upper(), str(v)) for k, v in options.items()))


_FILESYSTEMS: dict[tuple, pafs.FileSystem] = {}


def _filesystem(scheme: str, options: tuple[tuple[str, str], ...]) -> pafs.FileSystem:
    """One filesystem per store and options in each process (an S3 client is costly)."""
    key = (scheme, options)
    if key not in _FILESYSTEMS:
        _FILESYSTEMS[key] = _open_filesystem(scheme, dict(options))
    return _FILESYSTEMS[key]


def _open_filesystem(scheme: str, options: dict[str, str]) -> pafs.FileSystem:
    import pyarrow.fs as pafs

    if scheme == LOCAL:
        return pafs.LocalFileSystem()
    if scheme in S3_SCHEMES:
        return pafs.S3FileSystem(**s3_arguments(options, os.environ))
    if scheme in GCS_SCHEMES:
        # Credentials from GOOGLE_APPLICATION_CREDENTIALS or the metadata server.
        return pafs.GcsFileSystem()
    return pafs.AzureFileSystem(**azure_arguments(options))


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


def s3_arguments(options: Mapping[str, str], env: Mapping[str, str]) -> dict[str, object]:
    """deltalake's S3 options as pyarrow.fs.S3FileSystem's arguments. Credentials are
    left to the AWS SDK's default chain (environment, profile, instance role)."""
    endpoint = options.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT_URL")
    allow_http = _truthy(options.get("AWS_ALLOW_HTTP") or env.get("AWS_ALLOW_HTTP"))
    arguments: dict[str, object] = {}
    region = options.get("AWS_REGION") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        arguments["region"] = region
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        arguments["endpoint_override"] = parts.netloc
        arguments["scheme"] = parts.scheme
        if parts.scheme == "http" and not allow_http:
            raise LocationError(
                f"AWS_ENDPOINT_URL {endpoint} is plain http: set storage.options "
                "AWS_ALLOW_HTTP: 'true' to allow it"
            )
    if options.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"):
        arguments["force_virtual_addressing"] = _truthy(options["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"])
    return arguments


def azure_arguments(options: Mapping[str, str]) -> dict[str, object]:
    account = options.get("AZURE_STORAGE_ACCOUNT_NAME") or os.environ.get(
        "AZURE_STORAGE_ACCOUNT_NAME"
    )
    if not account:
        raise LocationError("abfs:// needs storage.options AZURE_STORAGE_ACCOUNT_NAME")
    arguments: dict[str, object] = {"account_name": account}
    key = os.environ.get("AZURE_STORAGE_ACCOUNT_KEY")
    if key:
        arguments["account_key"] = key
    return arguments


def exists(fs: pafs.FileSystem, path: str) -> bool:
    import pyarrow.fs as pafs

    return fs.get_file_info(path).type != pafs.FileType.NotFound


def write_bytes(loc: Location, data: bytes) -> None:
    """Replace the file whole: an object store's PUT is atomic; a local file is written
    under a name of this process's own and renamed (two runs may finish together)."""
    fs, path = loc.filesystem()
    if not loc.is_local:
        with fs.open_output_stream(path) as stream:
            stream.write(data)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)
