"""A real S3 API for tests: moto's server as a subprocess on 127.0.0.1, so that Hadoop's
S3A (the tables, through delta-spark), pyarrow's S3FileSystem (the captures), deltalake
(reads outside Spark) and boto3 all talk plain HTTP to one endpoint, exactly as they
would to S3, and nothing ever leaves the machine. They need only the endpoint, the
region and AWS_ALLOW_HTTP (checked against moto 5.2.5).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import pyarrow.fs as pafs

REGION = "us-east-1"
# Host settings that would override the fake credentials or pick another profile.
HOST_AWS_VARS = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


@dataclass(frozen=True)
class MotoS3:
    """One running moto server: where it is and how each client should reach it."""

    endpoint: str

    @property
    def host_port(self) -> str:
        """`127.0.0.1:PORT`, the form pyarrow's `endpoint_override` wants."""
        return self.endpoint.split("://", 1)[1]

    @property
    def env(self) -> dict[str, str]:
        """Variables for this process and its children (Spark's Python workers, job
        subprocesses): fake credentials, and no way to fall back to real AWS (config
        files, instance metadata, proxies)."""
        no_proxy = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1,localhost"]))
        return {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "NO_PROXY": no_proxy,
            "no_proxy": no_proxy,
        }

    @property
    def storage_options(self) -> dict[str, str]:
        """deltalake storage options for the job conf: no secrets (those come from the
        environment). Nothing else is needed for safe concurrent commits in 1.6.6."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": REGION,
            "AWS_ALLOW_HTTP": "true",
        }

    def client(self) -> Any:
        """A boto3 S3 client that does not depend on os.environ."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def filesystem(self) -> pafs.S3FileSystem:
        """pyarrow's S3 filesystem on this server (pyarrow ignores AWS_ENDPOINT_URL)."""
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(
            access_key="testing",
            secret_key="testing",
            region=REGION,
            endpoint_override=self.host_port,
            scheme="http",
        )

    def create_bucket(self, name: str) -> None:
        """A bucket (moto rejects names shorter than 3 characters)."""
        self.client().create_bucket(Bucket=name)

    def list_keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key under `prefix`, sorted, following pagination."""
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    # http.client, unlike urllib, never goes through a proxy from the environment.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/")
        return connection.getresponse().status < 500
    except OSError:
        return False
    finally:
        connection.close()


def _stop(process: subprocess.Popen) -> None:
    # Its own session, so the signal reaches anything the server started.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT)


def _tail(log: IO[bytes]) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-2000:]


def _start(log: IO[bytes]) -> tuple[subprocess.Popen, int]:
    """Start the server on a free port; retry a few ports, as another process may take
    the one we picked before moto binds it."""
    for _ in range(3):
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            if _answers(port):
                return process, port
            time.sleep(0.1)
        _stop(process)
    raise RuntimeError(f"moto server did not start:\n{_tail(log)}")


@contextlib.contextmanager
def moto_s3() -> Iterator[MotoS3]:
    """A moto S3 server for the duration of the block, always stopped afterwards.
    It does not touch os.environ (the `s3` fixture does)."""
    with tempfile.TemporaryFile() as log:
        process, port = _start(log)
        try:
            yield MotoS3(endpoint=f"http://127.0.0.1:{port}")
        finally:
            _stop(process)


@pytest.fixture(scope="session")
def s3() -> Iterator[MotoS3]:
    """One server per test session, its variables in os.environ until the session ends
    (so the JVM, pyarrow and Spark's Python workers find the fake credentials)."""
    with moto_s3() as server, pytest.MonkeyPatch.context() as patch:
        for name in HOST_AWS_VARS:
            patch.delenv(name, raising=False)
        for name, value in server.env.items():
            patch.setenv(name, value)
        yield server
