"""The moto S3 helper itself: it answers S3 calls from pyarrow, boto3 and delta-rs, it
refuses a second If-None-Match put, so concurrent Delta writers lose no commit, and
the server is gone once the block ends."""

from __future__ import annotations

import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from botocore.exceptions import ClientError
from deltalake import DeltaTable, write_deltalake
from s3_support import REGION, moto_s3, s3  # noqa: F401


def test_put_and_list_round_trip_through_pyarrow_and_boto3(s3):  # noqa: F811
    s3.create_bucket("roundtrip")
    # Credentials from the environment only, as the project's filesystems get them.
    fs = pafs.S3FileSystem(endpoint_override=s3.host_port, scheme="http", region=REGION)
    with fs.open_output_stream("roundtrip/a/one.txt") as out:
        out.write(b"one")
    s3.client().put_object(Bucket="roundtrip", Key="a/b/two.txt", Body=b"two")
    assert s3.list_keys("roundtrip") == ["a/b/two.txt", "a/one.txt"]
    assert s3.list_keys("roundtrip", "a/b/") == ["a/b/two.txt"]
    listed = fs.get_file_info(pafs.FileSelector("roundtrip/a", recursive=True))
    assert {i.path for i in listed if i.type == pafs.FileType.File} == {
        "roundtrip/a/one.txt",
        "roundtrip/a/b/two.txt",
    }
    with s3.filesystem().open_input_stream("roundtrip/a/b/two.txt") as stream:
        assert stream.read() == b"two"
    # pyarrow keeps the emptied "directory" as a marker object; delete_dir drops it.
    fs.delete_dir_contents("roundtrip/a")
    assert s3.list_keys("roundtrip") == ["a/"]
    fs.delete_dir("roundtrip/a")
    assert s3.list_keys("roundtrip") == []


def test_moto_refuses_a_second_put_if_none_match(s3):  # noqa: F811
    """What makes delta-rs commits safe on S3: `_delta_log/N.json` is put If-None-Match."""
    s3.create_bucket("conditional")
    client = s3.client()
    client.put_object(Bucket="conditional", Key="k", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError, match="PreconditionFailed"):
        client.put_object(Bucket="conditional", Key="k", Body=b"second", IfNoneMatch="*")
    assert client.get_object(Bucket="conditional", Key="k")["Body"].read() == b"first"


def test_concurrent_delta_writers_lose_no_commit(s3):  # noqa: F811
    s3.create_bucket("deltas")
    uri, options = "s3://deltas/t", s3.storage_options
    write_deltalake(uri, pa.table({"x": [0]}), storage_options=options)
    for value in (1, 3, 5):
        # Both opened at the same version, released together.
        tables = [DeltaTable(uri, storage_options=options) for _ in range(2)]
        barrier = threading.Barrier(2)

        def append(table: DeltaTable, x: int, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            write_deltalake(table, pa.table({"x": [x]}), mode="append")

        with ThreadPoolExecutor(2) as pool:
            done = [pool.submit(append, t, value + i) for i, t in enumerate(tables)]
        for future in done:
            future.result()
    table = DeltaTable(uri, storage_options=options)
    assert table.version() == 6
    assert sorted(table.to_pyarrow_table()["x"].to_pylist()) == list(range(7))


def test_the_server_is_stopped_after_the_block():
    before = dict(os.environ)
    with moto_s3() as server:
        server.create_bucket("short-lived")
        assert server.list_keys("short-lived") == []
        port = int(server.host_port.rsplit(":", 1)[1])
    assert dict(os.environ) == before
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass
