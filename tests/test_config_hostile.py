"""Conf files as hostile input (issue 19): every refusal is one ConfigError line of
bounded length naming the file and the key or line, raised while loading, never later
inside Spark."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import pytest
import yaml

from fleet_rebalance.config import ConfigError, load_config, shown
from fleet_rebalance.yaml_file import MAX_CONF_BYTES, MESSAGE_CHARS

# Nine levels of nine aliases: 9**9 (387 million) strings once expanded, in 350 bytes.
ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
app_name: [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def write(tmp_path: Path, content: str | bytes, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def refusal(path: Path, **overrides) -> str:
    """The one-line message load_config refuses path with."""
    with pytest.raises(ConfigError) as caught:
        load_config(path, base_dir=path.parent, **overrides)
    message = str(caught.value)
    assert "\n" not in message and len(message) <= MESSAGE_CHARS
    return message


def test_alias_bomb_is_refused_without_being_expanded(tmp_path):
    """Given: the 350-byte billion-laughs bomb from the issue, its aliases in app_name.
    Then: refused at its first anchor, in one short line.
    Expected: loading allocates kilobytes, not the gigabytes the expansion takes."""
    path = write(tmp_path, ALIAS_BOMB, "bomb.yaml")
    tracemalloc.start()
    try:
        message = refusal(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == (
        f"{path}: line 1: YAML anchors and aliases are not allowed in a conf file (found anchor &a)"
    )
    assert peak < 4 * 1024 * 1024


def test_a_quoted_value_never_expands_shared_structure():
    """Given: the bomb as plain yaml.safe_load builds it (387 million strings, shared).
    Expected: quoting it in a message shows a bounded prefix, as the issue's 2 GiB
    message should have been."""
    bomb = yaml.safe_load(ALIAS_BOMB)["app_name"]
    text = shown(bomb)
    assert text.startswith("[[[...], [...], [...], [...], [...], ...], [[...], ")
    assert text.endswith(", ...]") and len(text) < 300


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("master: *m\n", "line 1: .* \\(found alias \\*m\\)"),
        ("base: &b {engine: auto}\nstorage:\n  <<: *b\n", "line 1: .* \\(found anchor &b\\)"),
        ("storage:\n  engine: &e auto\n", "line 2: .* \\(found anchor &e\\)"),
    ],
)
def test_any_anchor_or_alias_is_refused_at_its_line(tmp_path, text, found):
    with pytest.raises(ConfigError, match=rf"job\.yaml: {found}"):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize(
    ("content", "byte", "offset"),
    [
        ("app_name: x\n".encode("utf-16"), "0xff", 0),  # with a byte order mark
        ("app_name: x\n".encode("utf-16-le"), "0x00", 1),
        ("app_name: café\n".encode("latin-1"), "0xe9", 13),
        (random.Random(19).randbytes(512).replace(b"\0", b"") + b"\xff", None, None),
    ],
)
def test_binary_or_non_utf8_conf_is_not_utf8_text(tmp_path, content, byte, offset):
    message = refusal(write(tmp_path, content))
    assert message.startswith(f"{tmp_path / 'job.yaml'}: not UTF-8 text (byte 0x")
    assert message.endswith("); expected a YAML configuration file in UTF-8")
    if byte:
        assert f"(byte {byte} at offset {offset})" in message


@pytest.mark.parametrize(
    ("text", "found"),
    [("- a\n- b\n", "list"), ("just words\n", "str"), ("42\n", "int")],
)
def test_top_level_must_be_a_mapping(tmp_path, text, found):
    assert refusal(write(tmp_path, text)).endswith(
        f"job.yaml: top level: expected a mapping, found {found}"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1: x\n", "top level: expected string keys, found int 1"),
        ("spark:\n  ~: x\n", "spark: expected string keys, found NoneType None"),
        (
            "storage:\n  options:\n    '': x\n",
            "storage.options: expected string keys, found str ''",
        ),
        ("master: yarn\nwarehouse: w\nmaster: local\n", "line 3: duplicate key 'master'"),
        ("app_name: " + "[" * 40 + "]" * 40 + "\n", "line 1: nested deeper than 32 levels"),
        ("default_date: 2026-02-30\n", "line 1: not a valid timestamp: day is out of range"),
        ("report_top: " + "9" * 5000 + "\n", "line 1: not a valid int: Exceeds the limit"),
        ("a: [1,\n", "not valid YAML: line 2, column 1: expected the node content"),
        ('app_name: "\x07"\n', "not valid YAML: line 1: character '\\x07' is not allowed"),
    ],
)
def test_malformed_yaml_names_the_line_or_key(tmp_path, text, message):
    assert message in refusal(write(tmp_path, text)).replace(str(tmp_path / "job.yaml: "), "")


def test_oversized_file_and_directory_are_refused(tmp_path):
    big = write(tmp_path, "# x\n" * (MAX_CONF_BYTES // 4 + 1))
    assert refusal(big) == f"{big}: larger than {MAX_CONF_BYTES} bytes; not a configuration file"
    folder = tmp_path / "conf.yaml"
    folder.mkdir()
    assert refusal(folder) == (f"{folder}: not a regular file; expected a YAML configuration file")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "capture:\n  path_pattern: '(?P<cluster>[^/]+'\n",
            "capture.path_pattern: expected a regular expression, found '(?P<cluster>[^/]+' "
            "(missing ), unterminated subpattern at position 0)",
        ),
        (
            "capture:\n  path_pattern: '^(?P<clustr>[^/]+)/'\n",
            "capture.path_pattern: expected named groups among cluster, timestamp, group, "
            "found group 'clustr' in '^(?P<clustr>[^/]+)/'",
        ),
        (
            "capture:\n  log_timezone: Mars/Olympus\n",
            "capture.log_timezone: expected an IANA time zone such as UTC or Europe/Paris, "
            "found 'Mars/Olympus'",
        ),
        ("capture:\n  log_timezone: ''\n", "capture.log_timezone: expected an IANA time zone"),
        ("capture:\n  log_timezone: ../../etc/passwd\n", "capture.log_timezone: expected an"),
        ("capture:\n  log_timezone: " + "a" * 5000 + "\n", "capture.log_timezone: expected an"),
        ("master: local[0]\n", "master: expected a Spark master URL (local, local[N], "),
        ("master: ''\n", "master: expected a Spark master URL"),
        ("master: mesos://m:5050\n", "master: expected a Spark master URL"),
        ("app_name: ''\n", "app_name: expected a non-empty string, found ''"),
        (
            'app_name: "fleet\\u202eteelf"\n',
            "app_name: expected a string without control or format characters, "
            "found 'fleet\\u202eteelf'",
        ),
        ("raw_root: ''\n", "raw_root: expected a directory or URI, found ''"),
        ("warehouse: '  '\n", "warehouse: expected a directory or URI, found '  '"),
        ('warehouse: "wh\\0"\n', "warehouse: expected a directory or URI without control"),
        ("metrics:\n  report_top: 0\n", "metrics.report_top: expected an int from 1 to 2147483647"),
        (
            "metrics:\n  burrow_intervals: 2147483648\n",
            "metrics.burrow_intervals: expected an int from 1 to 2147483647, found 2147483648",
        ),
        (
            "metrics:\n  burrow_allowed_lag: -1\n",
            "metrics.burrow_allowed_lag: expected an offset count from 0 to 2^63-1, found -1",
        ),
        (
            "metrics:\n  offsets_topic_partitions: -50\n",
            "metrics.offsets_topic_partitions: expected an int from 1 to 2147483647",
        ),
        ("default_date: today\n", "default_date: expected one of yesterday, latest, found 'today'"),
        (
            "warehouse: s3://b/wh\nstorage:\n  options:\n    AWS_ENDPOINT_URL: http://minio:9000\n",
            "storage.options: AWS_ENDPOINT_URL http://minio:9000 is plain http",
        ),
    ],
)
def test_values_used_late_are_checked_at_load(tmp_path, monkeypatch, text, message):
    """Given: a value that used to fail only once Spark ran (a regex compiled in the
    ingest, a zone read in the executors' parse tasks, a master URL in the JVM).
    Then/Expected: load_config refuses it, naming the dotted key and what was expected."""
    monkeypatch.delenv("AWS_ALLOW_HTTP", raising=False)
    path = write(tmp_path, text)
    assert refusal(path).startswith(f"{path}: {message}")


def test_custom_patterns_zones_and_masters_that_work_still_load(tmp_path):
    text = (
        "master: local[4, 2]\n"
        "capture:\n"
        "  path_pattern: '^(?P<cluster>[^/]+)/(?P<group>[^/]+)/(?P<timestamp>[^/]+)/'\n"
        "  log_timezone: Europe/Paris\n"
    )
    config = load_config(write(tmp_path, text), base_dir=tmp_path)
    assert config.capture.log_timezone == "Europe/Paris"
    assert config.master == "local[4, 2]"
    for master in ("local", "local[*]", "yarn", "spark://h:7077", "k8s://https://h:6443"):
        assert load_config(write(tmp_path, f"master: '{master}'\n")).master == master


def test_values_quoted_in_messages_are_cut_with_an_ellipsis(tmp_path):
    """Given: a 100,000-character value of the wrong type, and a key as long.
    Expected: the message quotes a few hundred characters of each, ending in '...'."""
    named = f"{tmp_path / 'job.yaml'}: "  # the bounds are on what follows the file's name

    def quoted(text: str) -> str:
        message = refusal(write(tmp_path, text))
        assert message.startswith(named), message
        return message.removeprefix(named)

    said = quoted("master: [" + ", ".join(["xxxxxxxxxx"] * 10_000) + "]\n")
    assert said.startswith("master: expected str, found list [")
    assert "..." in said and len(said) < 230
    said = quoted("master: '" + "y" * 100_000 + "'\n")
    assert "..." in said and len(said) < 330
    # YAML caps implicit keys at 1024 characters; an explicit one (`? key`) has no cap.
    said = quoted("? " + "k" * 100_000 + "\n: 1\n")
    assert said.startswith("unknown key kkkk") and "..." in said
    assert len(said) < 330


def test_empty_command_line_overrides_are_refused_not_ignored(tmp_path):
    path = write(tmp_path, "raw_root: data\n")
    assert refusal(path, raw_root="") == (
        "raw_root given on the command line: expected a directory or URI, found ''"
    )
    assert refusal(path, warehouse=" ").startswith("warehouse given on the command line:")
