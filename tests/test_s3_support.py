"""The moto S3 helper itself: it answers S3 calls from pyarrow and boto3 (Hadoop's S3A
is the storage suite's), and the server is gone once the block ends."""

from __future__ import annotations

import os
import socket

import pyarrow.fs as pafs
import pytest
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


def test_the_server_is_stopped_after_the_block():
    before = dict(os.environ)
    with moto_s3() as server:
        server.create_bucket("short-lived")
        assert server.list_keys("short-lived") == []
        port = int(server.host_port.rsplit(":", 1)[1])
    assert dict(os.environ) == before
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass
