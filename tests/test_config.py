from pathlib import Path

import pytest

from fleet_rebalance.config import Config, ConfigError, load_config

PROJECT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return path


def test_local_yaml_is_the_embedded_default():
    config = load_config(PROJECT / "conf" / "local.yaml", base_dir=PROJECT)
    assert config.master == "local[*]"
    assert config.warehouse == str(PROJECT / "warehouse")
    assert config.raw_root == str(PROJECT / "data" / "sample")
    assert config.storage.schema_evolution is False
    assert config.spark["spark.sql.shuffle.partitions"] == "8"


def test_flags_override_the_file_and_paths_become_absolute(tmp_path):
    path = write(tmp_path, "warehouse: wh\nraw_root: /data/raw\n")
    config = load_config(path, warehouse="other", base_dir=tmp_path)
    assert config.warehouse == str(tmp_path / "other")
    assert config.raw_root == "/data/raw"
    assert config.table_path("offsets") == str(tmp_path / "other" / "offsets")


def test_object_store_paths_are_kept_as_given(tmp_path):
    config = load_config(write(tmp_path, "warehouse: s3a://bucket/wh\n"))
    assert config.warehouse == "s3a://bucket/wh"


def test_table_uris_join_as_uris_not_as_local_paths(tmp_path):
    config = load_config(
        write(tmp_path, "warehouse: s3://bucket/wh/\nraw_root: file:///data/raw\n")
    )
    assert config.table_path("offsets") == "s3://bucket/wh/offsets"
    assert config.raw_root == "/data/raw"


def test_the_s3_example_conf_loads():
    config = load_config(PROJECT / "conf" / "s3.example.yaml")
    assert config.raw_root == "s3://my-bucket/kafka-captures"
    assert config.storage.options == {"AWS_REGION": "eu-west-1"}


def test_credentials_in_storage_options_are_refused(tmp_path):
    path = write(tmp_path, "storage:\n  options:\n    AWS_SECRET_ACCESS_KEY: x\n")
    with pytest.raises(ConfigError, match=r"storage.options.AWS_SECRET_ACCESS_KEY: credentials"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("warehouse: ftp://host/wh\n", r"warehouse: ftp://host/wh: unsupported scheme 'ftp'"),
        ("warehouse: s3:///wh\n", r"warehouse: s3:///wh: no bucket"),
    ],
)
def test_storage_mistakes_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_empty_file_gives_defaults(tmp_path):
    config = load_config(write(tmp_path, ""), base_dir=tmp_path)
    assert config.master == Config().master
    assert config.source == str(tmp_path / "job.yaml")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.yaml: configuration file not found"):
        load_config(tmp_path / "nope.yaml")


def test_unknown_key_is_named_with_its_section(tmp_path):
    with pytest.raises(ConfigError, match=r"job\.yaml: unknown key storage\.engin "):
        load_config(write(tmp_path, "storage:\n  engin: delta-rs\n"))


def test_unknown_top_level_key(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key warehous \(known: "):
        load_config(write(tmp_path, "warehous: x\n"))


def test_wrong_type_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"storage\.schema_evolution: expected bool, found str"):
        load_config(write(tmp_path, "storage:\n  schema_evolution: 'yes please'\n"))


def test_bool_is_not_a_string(tmp_path):
    with pytest.raises(ConfigError, match=r"master: expected str, found bool"):
        load_config(write(tmp_path, "master: true\n"))


def test_retired_keys_are_dropped_with_a_line_saying_why(tmp_path):
    """A conf from before delta-spark wrote every table, or before changes were weighed
    by cost alone, still runs; the session's build logs each line once."""
    text = (
        "storage:\n  engine: delta-rs\n  reader: arrow\n"
        "metrics:\n  change_min_rebalances_saved: 2\n"
    )
    config = load_config(write(tmp_path, text))
    assert config.retired == (
        f"{tmp_path / 'job.yaml'}: storage.engine is no longer read (every table is written "
        "and read by delta-spark; the delta-rs engine is gone)",
        f"{tmp_path / 'job.yaml'}: storage.reader is no longer read (tables are read by "
        "delta-spark; there is no other reader to choose)",
        f"{tmp_path / 'job.yaml'}: metrics.change_min_rebalances_saved is no longer read (a "
        "change is recommended for what it saves in paused partition-seconds or messages "
        "delayed, never for a count of rebalances)",
    )
    assert config.storage.schema_evolution is False


def test_spark_properties_become_strings(tmp_path):
    config = load_config(write(tmp_path, "spark:\n  a.b: 4\n  c.d: true\n"))
    assert config.spark == {"a.b": "4", "c.d": "true"}


def test_section_must_be_a_mapping(tmp_path):
    with pytest.raises(ConfigError, match=r"storage: expected a mapping, found str"):
        load_config(write(tmp_path, "storage: delta-rs\n"))


def test_attention_limits_take_whole_numbers_and_refuse_an_even_skew(tmp_path):
    """YAML reads `3` as an int; a float key takes it. A lag skew of 1.0 is an even group:
    as a limit it would flag every group with lag."""
    config = load_config(write(tmp_path, "metrics:\n  attention_lag_skew: 3\n"))
    assert config.metrics.attention_lag_skew == 3.0
    assert isinstance(config.metrics.attention_lag_skew, float)
    with pytest.raises(ConfigError, match=r"metrics.attention_lag_skew: expected a number above"):
        load_config(write(tmp_path, "metrics:\n  attention_lag_skew: 1.0\n"))
    with pytest.raises(ConfigError, match=r"attention_lag_skew: expected float, found bool"):
        load_config(write(tmp_path, "metrics:\n  attention_lag_skew: true\n"))


def test_the_readmes_configuration_table_is_the_models_defaults():
    """Every key of the conf is in the README's table, with Config()'s own default:
    a default is written once, in config.py, and the table follows it."""
    import re

    from pydantic import BaseModel

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = dict(re.findall(r"^\| `([a-z_.*]+)` \| `?([^|`]*)`?[^|]*\| ", readme, re.M))

    def shown(value: object) -> str:
        if isinstance(value, bool):
            return str(value).lower()
        if value is None:
            return "null"
        return "{}" if value == {} else str(value)

    config = Config()
    expected = {}
    for top in Config.model_fields:
        value = getattr(config, top)
        if top in ("source", "retired"):
            continue
        if top == "spark":
            expected["spark.*"] = "none (local.yaml: "
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                expected[f"{top}.{name}"] = shown(getattr(value, name))
        else:
            expected[top] = shown(value)
    assert table == expected
