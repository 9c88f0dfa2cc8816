"""Locations: URIs in canonical form, joined as URIs, and deltalake's storage options
translated for pyarrow's filesystems. No Spark."""

from __future__ import annotations

import os

import pytest

from fleet_rebalance.config import Config
from fleet_rebalance.filesystems import Location, LocationError, location, s3_arguments
from fleet_rebalance.spark.session import executor_credentials


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("/data/wh", "/data/wh"),
        ("file:///data/wh%20a/", "/data/wh a"),
        ("file:/data/wh", "/data/wh"),
        ("s3://bucket/wh/", "s3://bucket/wh"),
        ("S3A://bucket/a b#c", "s3a://bucket/a b#c"),
        ("gs://bucket", "gs://bucket"),
        ("abfss://container@account.dfs.core.windows.net/wh", None),
    ],
)
def test_uris_are_canonical(given, canonical):
    got = location(given).uri
    assert got == (canonical or given)


def test_relative_paths_are_taken_from_the_current_directory():
    assert location("wh").uri == os.path.join(os.getcwd(), "wh")


def test_children_join_as_uris_and_keep_the_options():
    wh = location("s3://bucket/wh", {"AWS_REGION": "eu-west-1"})
    assert wh.child("offsets", "_delta_log").uri == "s3://bucket/wh/offsets/_delta_log"
    assert wh.child("offsets").options == {"AWS_REGION": "eu-west-1"}
    assert location("/a b/wh#1").child("t").uri == "/a b/wh#1/t"


def test_deltalake_gets_remote_keys_percent_encoded_and_local_paths_as_they_are():
    """deltalake parses a URI as a URL: a raw `#` would end the key."""
    assert Location("s3://bucket/wh a#b/t").delta_uri == "s3://bucket/wh%20a%23b/t"
    assert Location("/wh a#b/t").delta_uri == "/wh a#b/t"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("ftp://host/wh", "unsupported scheme 'ftp'"),
        ("s3:///wh", "no bucket"),
        ("file://host/wh", "name no host"),
    ],
)
def test_unusable_uris_say_why(uri, message):
    with pytest.raises(LocationError, match=message):
        location(uri)


def test_s3_options_become_pyarrow_arguments():
    options = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }
    assert s3_arguments(options, {}) == {
        "region": "us-east-1",
        "endpoint_override": "127.0.0.1:9000",
        "scheme": "http",
    }
    # pyarrow ignores AWS_ENDPOINT_URL in the environment; we pass it on.
    assert s3_arguments({}, {"AWS_ENDPOINT_URL": "https://minio:9000"})["endpoint_override"] == (
        "minio:9000"
    )


def test_plain_http_needs_allow_http():
    with pytest.raises(LocationError, match="AWS_ALLOW_HTTP"):
        s3_arguments({"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}, {})


def test_executors_get_the_drivers_credentials_only_for_remote_locations():
    env = {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret", "HOME": "/root"}
    remote = Config(raw_root="/data/raw", warehouse="s3://bucket/wh")
    assert executor_credentials(remote, env) == {
        "spark.executorEnv.AWS_ACCESS_KEY_ID": "id",
        "spark.executorEnv.AWS_SECRET_ACCESS_KEY": "secret",
    }
    assert executor_credentials(Config(raw_root="/data/raw", warehouse="/wh"), env) == {}
