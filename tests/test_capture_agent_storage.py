"""fleet-capture writing to object storage and compressing: what the agent writes to an
s3:// raw_root (the suite's moto server) and as gzip is found by the jobs' capture
discovery (capture/store/) and parses to the same bronze rows as a plain local
snapshot of the same moment (capture/bronze_batches.parse_file, no Spark)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from fake_admin import FakeAdmin
from test_capture_agent import AT, Lines, config_for, east

from fleet_rebalance.agent.config import parse_config
from fleet_rebalance.agent.errors import ConfigError
from fleet_rebalance.agent.runner import run_once
from fleet_rebalance.agent.snapshot import BROKERS_FILE, GROUPS_FILE, TOPICS_FILE
from fleet_rebalance.agent.writer import write_snapshot
from fleet_rebalance.capture.bronze_batches import parse_file
from fleet_rebalance.capture.paths import DEFAULT_PATH_PATTERN
from fleet_rebalance.capture.store import discover, survey
from fleet_rebalance.filesystems import Location

SNAPSHOT = "east/captures/2026-11-20T091000Z"
PLAIN = [f"{SNAPSHOT}/{name}" for name in (BROKERS_FILE, GROUPS_FILE, TOPICS_FILE)]
GZIPPED = [f"{name}.gz" for name in PLAIN]
CLUSTERS = [{"name": "east", "bootstrap_servers": "east:9092"}]


def bronze(root: Location) -> dict[str, dict]:
    """Every discovered file's bronze rows by file name without `.gz`, with the file's
    status, quarantine and failed groups; source_file (which names the stored file, .gz
    or not) is left out of the rows and checked apart."""
    found = {}
    for raw in discover(root, DEFAULT_PATH_PATTERN):
        file = {
            "relative": raw.relative,
            "cluster": raw.cluster,
            "captured_at": raw.captured_at,
            "group": raw.group,
        }
        result, sha = parse_file(root, file, path_pattern=DEFAULT_PATH_PATTERN, log_timezone=None)
        assert sha is not None and result.reconciles()
        tables = {}
        for table in sorted(set(result.rows) | set(result.batches)):
            rows = result.records(table)
            assert {r["source_file"] for r in rows} == {raw.relative}
            tables[table] = sorted(
                ({k: v for k, v in r.items() if k != "source_file"} for r in rows), key=repr
            )
        name = raw.relative.removesuffix(".gz")
        found[name] = {
            "kind": result.kind,
            "status": result.status,
            "quarantine": result.quarantine,
            "failed_groups": result.failed_groups,
            "tables": tables,
        }
    return found


def capture(config) -> None:
    assert run_once(config, {"east": FakeAdmin(east())}, Lines(), now=lambda: AT) == 0


def s3_config(s3, bucket: str, **extra):
    s3.create_bucket(bucket)
    document = {
        "raw_root": f"s3://{bucket}/raw",
        "storage": {"options": s3.storage_options},
        "clusters": CLUSTERS,
        **extra,
    }
    return parse_config(document, {})


@pytest.fixture
def plain_rows(tmp_path) -> dict[str, dict]:
    raw = tmp_path / "plain"
    capture(config_for(raw, "east"))
    rows = bronze(Location(str(raw)))
    assert sorted(rows) == PLAIN
    assert [rows[name]["kind"] for name in PLAIN] == ["brokers", "jsonl", "topics"]
    assert rows[PLAIN[0]]["tables"]["brokers"]
    assert rows[PLAIN[1]]["tables"]["group_states"]
    return rows


def test_a_gzip_snapshot_ingests_to_the_same_bronze_rows_as_the_plain_one(tmp_path, plain_rows):
    """Given the same moment captured plain and with compression: gzip, Then the gzip
    files are named `<name>.gz`, are gzip (magic bytes, whole stream), and parse to the
    same rows, statuses and failed groups; Expected: equal bronze."""
    raw = tmp_path / "gz"
    capture(config_for(raw, "east", compression="gzip"))
    for relative in GZIPPED:
        data = (raw / relative).read_bytes()
        assert data[:2] == b"\x1f\x8b"
        assert gzip.decompress(data) == (tmp_path / "plain" / relative[:-3]).read_bytes()
    assert bronze(Location(str(raw))) == plain_rows


def test_an_s3_raw_root_receives_the_snapshot_and_discovery_finds_it(s3, plain_rows):
    """Given raw_root s3://bucket/raw with the jobs' storage.options (credentials only in
    the environment), When one cycle runs, Then the bucket holds the snapshot's keys and
    the jobs' discovery lists them with cluster and time; Expected: same bronze rows as
    the local snapshot."""
    config = s3_config(s3, "agent-raw-plain")
    assert (
        isinstance(config.raw_root, Location) and config.raw_root.uri == "s3://agent-raw-plain/raw"
    )
    capture(config)
    assert s3.list_keys("agent-raw-plain") == [f"raw/{k}" for k in PLAIN]
    found = discover(config.raw_root, DEFAULT_PATH_PATTERN)
    assert [(f.relative, f.cluster, f.captured_at) for f in found] == [
        (k, "east", AT) for k in PLAIN
    ]
    assert bronze(config.raw_root) == plain_rows


def test_a_gzip_snapshot_on_s3_ingests_like_the_plain_local_one(s3, plain_rows):
    """Given raw_root on S3 and compression: gzip, Then the keys end in .gz and the
    snapshot parses, read back through the store, to the plain local rows."""
    config = s3_config(s3, "agent-raw-gzip", compression="gzip")
    assert config.compression == "gzip"
    capture(config)
    assert s3.list_keys("agent-raw-gzip") == [f"raw/{k}" for k in GZIPPED]
    assert bronze(config.raw_root) == plain_rows


def test_a_snapshot_that_fails_while_being_made_publishes_nothing_on_s3(s3):
    """Given a snapshot whose second file's lines fail half-way, Then no key at all is
    written (every file is made whole before the first upload); Expected: empty bucket,
    and the error passes to the caller (the cycle reports it)."""
    config = s3_config(s3, "agent-raw-broken")

    def failing():
        yield '{"group_id": "g"}'
        raise OSError("disk full while spooling")

    files = [(GROUPS_FILE, ['{"group_id": "a"}']), (TOPICS_FILE, failing())]
    with pytest.raises(OSError, match="disk full"):
        write_snapshot(config.raw_root, "east", AT, files)
    assert s3.list_keys("agent-raw-broken") == []
    with pytest.raises(FileNotFoundError, match="no such directory"):
        survey(config.raw_root, DEFAULT_PATH_PATTERN)  # not even an empty prefix


def test_a_rerun_on_s3_replaces_the_snapshot_files(s3):
    """Given two writes of the same second, Then the second's bytes replace the first's
    under the same keys (one put each, never a duplicate)."""
    config = s3_config(s3, "agent-raw-rerun")
    write_snapshot(config.raw_root, "east", AT, [(GROUPS_FILE, ['{"group_id": "a"}'])])
    write_snapshot(config.raw_root, "east", AT, [(GROUPS_FILE, ['{"group_id": "b"}'])])
    assert s3.list_keys("agent-raw-rerun") == [f"raw/{SNAPSHOT}/{GROUPS_FILE}"]
    body = s3.client().get_object(Bucket="agent-raw-rerun", Key=f"raw/{SNAPSHOT}/{GROUPS_FILE}")
    assert body["Body"].read() == b'{"group_id": "b"}\n'


def test_file_uri_and_relative_paths_stay_local_directories(tmp_path):
    """Given raw_root as file:///abs or a relative path, Then it is a local directory
    (relative to the config's directory), written with the staging-directory rename."""
    absolute = parse_config({"raw_root": f"file://{tmp_path}/raw", "clusters": CLUSTERS}, {})
    assert absolute.raw_root == tmp_path / "raw" and absolute.compression is None
    relative = parse_config({"raw_root": "raw", "clusters": CLUSTERS}, {}, base=tmp_path)
    assert relative.raw_root == tmp_path / "raw"
    explicit = parse_config(
        {"raw_root": "raw", "compression": "none", "clusters": CLUSTERS}, {}, base=tmp_path
    )
    assert explicit.compression is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"raw_root": "s3://b/raw", "storage": {"options": {"AWS_SECRET_ACCESS_KEY": "x"}}},
            r"storage\.options\.AWS_SECRET_ACCESS_KEY: credentials do not belong",
        ),
        (
            {"raw_root": "s3://b/raw", "storage": {"opts": {}}},
            "storage: expected a mapping with one key, options",
        ),
        (
            {"raw_root": "s3://b/raw", "storage": {"options": ["AWS_REGION"]}},
            "storage.options: expected a mapping",
        ),
        (
            {
                "raw_root": "s3://b/raw",
                "storage": {"options": {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"}},
            },
            "storage.options: AWS_ENDPOINT_URL http://127.0.0.1:9 is plain http",
        ),
        ({"raw_root": "s3://", "compression": "gzip"}, "raw_root: s3://: no bucket"),
        ({"raw_root": "abfs://container/raw"}, "AZURE_STORAGE_ACCOUNT_NAME"),
        ({"raw_root": "r", "compression": "zstd"}, "compression: expected none or gzip"),
        ({"raw_root": "r", "compression": True}, "compression: expected none or gzip"),
    ],
)
def test_bad_storage_settings_are_refused_with_the_key(extra, message, monkeypatch):
    """Given a bad raw_root, storage or compression, Then ConfigError names the key."""
    for name in ("AWS_ALLOW_HTTP", "AWS_ENDPOINT_URL", "AZURE_STORAGE_ACCOUNT_NAME"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match=message):
        parse_config({"clusters": CLUSTERS, **extra}, {}, base=Path("/tmp"))


def test_a_missing_bucket_fails_the_cycle_with_its_reason(s3):
    """Given raw_root in a bucket that does not exist, Then the cycle is reported as
    FAILED with the store's reason (exit status 1 for --once), nothing raised."""
    document = {
        "raw_root": "s3://agent-raw-no-such-bucket/raw",
        "storage": {"options": s3.storage_options},
        "clusters": CLUSTERS,
    }
    lines = Lines()
    config = parse_config(document, {})
    assert run_once(config, {"east": FakeAdmin(east())}, lines, now=lambda: AT) == 1
    (line,) = lines.lines
    assert " east FAILED in " in line and "agent-raw-no-such-bucket" in line
