"""Issue 23: every mistake a new user makes gets one line on stderr and a documented exit
status (2: nothing was run; 1: the run failed), run through ./spark-submit.sh as a user
runs it. The cases refused before Spark run with a `java` that fails loudly if started,
so they prove no JVM starts; two sql runs start a real one."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from fleet_rebalance.cli.driver_stderr import LAUNCHER_PID_ENV
from fleet_rebalance.cli.job_failures import failure_line
from fleet_rebalance.cli.job_flags import DATE_HELP
from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.cli.launcher_help import USAGE
from fleet_rebalance.cli.run_job import run_job
from fleet_rebalance.errors import error_text
from fleet_rebalance.sql.statements import Statement, split_statements

PROJECT = Path(__file__).resolve().parent.parent
SUBMIT = PROJECT / "spark-submit.sh"
NIGHTLY = PROJECT / "jobs" / "nightly.py"
PATTERN = "'^(?P<cluster>[^/]+)/'"
# What a JVM prints on stderr before any line of ours: the launcher's module flag and
# log4j's pattern (conf/log4j2.properties).
JVM_LINE = re.compile(r"WARNING: Using incubator modules|\d\d/\d\d/\d\d \d\d:\d\d:\d\d [A-Z]+ ")
# Spark's Ivy resolving the run's --packages (Delta's connector), before the job starts.
IVY_LINE = re.compile(
    r"::|\t|\s*[|-]|Ivy Default Cache|The jars for the packages|\S+#\S+ added as a dependency"
)
FAKE_JAVA = """#!/bin/sh
if [ "$1" = "-version" ]; then echo 'openjdk version "17.0.9" 2023-10-17' >&2; exit 0; fi
echo "a JVM was started: $*" >&2
exit 99
"""


def _hash(chunks: list[bytes]) -> str:
    return hashlib.sha256(b"".join(chunks)).hexdigest()[:16]


def _venv_is_ready(venv: Path) -> str | None:
    """Why spark-submit.sh would install into `venv` (the one running these tests), or
    None: it must not, mid-run. Its hashes as spark-submit.sh computes them."""
    deps = _hash([(PROJECT / name).read_bytes() for name in ("setup.cfg", "pyproject.toml")])
    recorded = (venv / ".fleet-deps").read_text().split() if (venv / ".fleet-deps").exists() else []
    if recorded[:1] != [deps]:
        return f"{venv}: dependencies not installed by spark-submit.sh for this setup.cfg"
    urls = list(venv.glob("lib/python*/site-packages/fleet_rebalance-*.dist-info/direct_url.json"))
    if any('"editable": true' in url.read_text() for url in urls):
        return None
    files = sorted(
        (str(p.relative_to(PROJECT)) for p in (PROJECT / "src").rglob("*") if p.is_file()),
        key=str.encode,
    )
    files = [f for f in files if f.endswith((".py", "py.typed"))]
    # spark-submit.sh: `find src ... -print0 | sort -z | xargs -0 sha256sum | sha256sum`.
    lines = [f"{hashlib.sha256((PROJECT / f).read_bytes()).hexdigest()}  {f}\n" for f in files]
    src = _hash([line.encode() for line in lines])
    if (venv / ".fleet-src").exists() and (venv / ".fleet-src").read_text().strip() == src:
        return None
    return f"{venv}: spark-submit.sh would re-install fleet_rebalance into it (src/ changed)"


@pytest.fixture(scope="module")
def venv_ready() -> None:
    """These tests run spark-submit.sh in the venv running them; run them through
    `./spark-submit.sh test` (or from an editable install), never skipped."""
    why = _venv_is_ready(Path(sys.prefix))
    if why:
        pytest.fail(f"{why}: run the tests with ./spark-submit.sh test")


@pytest.fixture(scope="module")
def no_jvm_env(tmp_path_factory, venv_ready) -> dict[str, str]:
    """This venv, and a JAVA_HOME whose java passes spark-submit.sh's version check and
    fails with a marker if anything starts it."""
    home = tmp_path_factory.mktemp("fake-java")
    (home / "bin").mkdir()
    java = home / "bin" / "java"
    java.write_text(FAKE_JAVA)
    java.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != LAUNCHER_PID_ENV}
    return {**env, "FLEET_VENV": sys.prefix, "JAVA_HOME": str(home), "COLUMNS": "100"}


def submit(env: dict[str, str], *args: str, stdin: str = "", timeout: float = 120):
    return subprocess.run(
        [str(SUBMIT), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env=env,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    """One capture, dated 2026-11-20."""
    root = tmp_path_factory.mktemp("raw")
    capture = root / "c1" / "2026-11-20T0910Z" / "offsets.txt"
    capture.parent.mkdir(parents=True)
    capture.write_text("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG\n")
    return root


def refused(env: dict[str, str], *args: str, stdin: str = "") -> tuple[int, str]:
    """Exit status and the one line on stderr, asserting no JVM started and stdout
    stayed empty."""
    result = submit(env, *args, stdin=stdin)
    assert "a JVM was started" not in result.stderr, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n"), result.stderr
    return result.returncode, result.stderr.rstrip("\n")


def test_missing_conf_is_one_line_before_the_jvm(no_jvm_env):
    """Given: --conf nope.yaml (a 14-line traceback before issue 23).
    Expected: exit 2, one line naming the file, where it was looked for, what to pass."""
    assert refused(no_jvm_env, "nightly", "--conf", "nope.yaml") == (
        2,
        f"spark-submit.sh: --conf nope.yaml: no such file (relative to {PROJECT}); pass the "
        "path of a YAML conf such as conf/local.yaml",
    )


def test_a_date_without_captures_is_one_line_before_the_jvm(no_jvm_env, raw, tmp_path):
    """Given: nightly --date 2026-01-01 where only 2026-11-20 was captured (32 s, then the
    step's line and a traceback before issue 23).
    Expected: exit 1 (a failed run), the step's one line, naming the date, the root and
    the date that has captures."""
    assert refused(
        no_jvm_env,
        "nightly",
        "--date",
        "2026-01-01",
        "--raw-root",
        str(raw),
        "--warehouse",
        str(tmp_path / "wh"),
    ) == (
        1,
        f"nightly: step ingest failed for 2026-01-01: no capture files for 2026-01-01 under "
        f"{raw} (path_pattern {PATTERN}); the newest capture date there is 2026-11-20: pass "
        "--date 2026-11-20",
    )


def test_a_missing_raw_root_is_the_steps_one_line_before_the_jvm(no_jvm_env, tmp_path):
    missing = tmp_path / "missing"
    assert refused(no_jvm_env, "nightly", "--date", "2026-11-20", "--raw-root", str(missing)) == (
        1,
        f"nightly: step ingest failed for 2026-11-20: raw_root {missing}: no such directory; "
        "pass --raw-root with the directory (or URI) the captures are under",
    )


def test_a_warehouse_that_is_a_file_is_one_line_before_the_jvm(no_jvm_env, raw, tmp_path):
    """Given: --warehouse naming a regular file (390 lines of executor tracebacks after
    38 s of parsing every capture before issue 23). Expected: exit 2, one line."""
    afile = tmp_path / "afile"
    afile.write_text("")
    assert refused(
        no_jvm_env,
        "nightly",
        "--date",
        "2026-11-20",
        "--raw-root",
        str(raw),
        "--warehouse",
        str(afile),
    ) == (
        2,
        f"spark-submit.sh: --warehouse {afile}: not a directory; pass a directory for the "
        "Delta tables (created when missing)",
    )


def test_an_impossible_date_is_one_line_before_the_jvm(no_jvm_env):
    assert refused(no_jvm_env, "nightly", "--date", "2026-13-45") == (
        2,
        "spark-submit.sh: argument --date: no such day 2026-13-45: there is no month 13 (01 to 12) "
        "(see ./spark-submit.sh nightly --help)",
    )


@pytest.mark.parametrize("job", ["ingest", "replay", "metrics", "nightly"])
def test_a_backfill_ending_before_it_starts_is_one_line_before_the_jvm(no_jvm_env, job):
    """Every pipeline job backfills (--all, --from, --to); --from after --to is a
    usage error: exit 2, one line."""
    assert refused(no_jvm_env, job, "--from", "2026-11-21", "--to", "2026-11-19") == (
        2,
        "spark-submit.sh: --from 2026-11-21 is after --to 2026-11-19; pass the earlier date "
        "to --from",
    )


def test_a_backfill_without_capture_dates_is_one_line_before_the_jvm(no_jvm_env, raw, tmp_path):
    """Given: nightly --from 2026-12-01 where only 2026-11-20 was captured.
    Expected: exit 1 (the run would fail), one line naming the span, the root and the
    dates there are."""
    assert refused(
        no_jvm_env,
        "nightly",
        "--from",
        "2026-12-01",
        "--raw-root",
        str(raw),
        "--warehouse",
        str(tmp_path / "wh"),
    ) == (
        1,
        f"nightly: no capture dates from 2026-12-01 on under {raw} (path_pattern {PATTERN}); "
        "the captures there are dated 2026-11-20 to 2026-11-20",
    )


def test_sql_without_a_statement_is_one_line_before_the_jvm(no_jvm_env, tmp_path):
    assert refused(no_jvm_env, "sql", stdin="  -- nothing\n;\n") == (
        2,
        "spark-submit.sh: sql: no SQL statement on stdin",
    )
    missing = tmp_path / "nope.sql"
    assert refused(no_jvm_env, "sql", "-f", str(missing)) == (
        2,
        f"spark-submit.sh: -f {missing}: no such file; pass a file of `;`-separated SQL statements",
    )


def test_job_help_names_every_flag_with_its_default(no_jvm_env):
    """sql's --conf and --format, generate's --clusters, --hours and --seed had neither."""
    sql = submit(no_jvm_env, "sql", "--help")
    generate = submit(no_jvm_env, "generate", "--help")
    assert (sql.returncode, generate.returncode) == (0, 0)
    assert "--format {table,csv,json,markdown}" in sql.stdout
    assert "(default: table)" in sql.stdout
    flat = " ".join(generate.stdout.split())
    assert "--clusters N Kafka clusters (default: 3)" in flat
    assert "--hours H hours of captures (default: 12.0)" in flat
    assert (
        "--seed SEED random seed: the same seed writes the same fleet (default: 20261120)" in flat
    )


@pytest.mark.parametrize("job", ["ingest", "replay", "metrics", "nightly", "sql", "generate"])
def test_every_flag_of_every_job_says_what_it_is_and_its_default(job):
    for action in job_parser(job)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, (job, action.dest)
        if action.option_strings and not isinstance(action, argparse._StoreTrueAction):
            assert "default" in action.help, (job, action.dest)


def test_top_level_help_and_readme_agree_on_the_date_default():
    """conf/local.yaml says default_date: latest; the help said 'yesterday'."""
    readme = " ".join((PROJECT / "README.md").read_text().split())
    usage = " ".join(USAGE.split())
    for text in (usage, readme, " ".join(DATE_HELP.split())):
        assert "latest, the newest capture date under raw_root" in text.replace("`", "")
        assert "default: yesterday" not in text
    assert "default_date: latest" in (PROJECT / "conf" / "local.yaml").read_text()


def test_split_statements_ignores_semicolons_in_strings_and_comments():
    text = (
        'SELECT \'a;b\', "c;\\"d", `e;f` -- g;\n'
        "FROM t;\n"
        "/* h; /* nested; */ still; */\n"
        ";  \n"
        "\n"
        "SELECT 2"
    )
    assert split_statements(text) == [
        Statement(1, 1, 'SELECT \'a;b\', "c;\\"d", `e;f` -- g;\nFROM t'),
        Statement(2, 6, "SELECT 2"),
    ]
    assert split_statements(" ; -- only a comment\n/* and; */ ;") == []


def _run_nightly(monkeypatch, capsys, tmp_path, cause: BaseException, *flags: str):
    """jobs/nightly.py as the driver runs it, its first step failing with `cause`."""
    import fleet_rebalance.pipeline.nightly as nightly
    import fleet_rebalance.spark.session

    def failing_steps(spark, config, run_date):
        raise nightly.StepFailed(
            f"step ingest failed for {run_date}: {error_text(cause)}"
        ) from cause

    monkeypatch.setattr(fleet_rebalance.spark.session, "build_session", lambda *a, **k: None)
    monkeypatch.setattr(nightly, "run_steps", failing_steps)
    argv = ["--date", "2026-11-20", "--warehouse", str(tmp_path / "wh"), *flags]
    monkeypatch.setattr(sys, "argv", [str(NIGHTLY), *argv])
    with pytest.raises(SystemExit) as caught:
        runpy.run_path(str(NIGHTLY), run_name="__main__")
    captured = capsys.readouterr()
    assert captured.out == ""
    return caught.value.code, captured.err


def test_a_commit_lost_to_a_concurrent_run_is_one_line(monkeypatch, capsys, tmp_path):
    """Given: a step whose commit lost to a concurrent run (storage CommitConflictError).
    Expected: exit 1, one line saying so and what to do; the traceback only in the log
    file."""
    from fleet_rebalance.storage.errors import CommitConflictError

    log_file = tmp_path / "nightly.log"
    conflict = CommitConflictError(
        "file:///wh/offsets: the files this overwrite replaces were changed by a concurrent "
        "commit since version 3; nothing was committed"
    )
    status, err = _run_nightly(monkeypatch, capsys, tmp_path, conflict, "--log-file", str(log_file))
    assert status == 1
    assert err == (
        "nightly: step ingest failed for 2026-11-20: file:///wh/offsets: the files this "
        "overwrite replaces were changed by a concurrent commit since version 3; nothing was "
        "committed; another run wrote these tables at the same time and this one committed "
        "nothing; run it again once the other has finished\n"
    )
    logged = log_file.read_text()
    assert "Traceback" in logged and "CommitConflictError" in logged


def test_verbose_prints_the_traceback_before_the_line(monkeypatch, capsys, tmp_path):
    """Given: the ingest step's refusal of a date on a store the launcher does not list.
    Expected: with --verbose the traceback on stderr, and the one line still last."""
    cause = FileNotFoundError(
        f"no capture files for 2026-11-20 under s3://b/raw (path_pattern {PATTERN})"
    )
    status, err = _run_nightly(monkeypatch, capsys, tmp_path, cause, "--verbose")
    assert status == 1
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1] == (
        f"nightly: step ingest failed for 2026-11-20: no capture files for 2026-11-20 under "
        f"s3://b/raw (path_pattern {PATTERN}); pass --date with a date that has captures, "
        "or --raw-root"
    )


def test_a_bug_keeps_its_traceback(capsys):
    def main(args) -> int:
        raise KeyError("group_id")

    with pytest.raises(SystemExit) as caught:
        run_job("metrics", main, [])
    assert caught.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "KeyError: 'group_id'" in err


def test_delta_spark_conflicts_are_expected_and_bugs_are_not():
    class Py4JJavaError(Exception):
        pass

    Py4JJavaError.__module__ = "py4j.protocol"
    conflict = Py4JJavaError(
        "io.delta.exceptions.ConcurrentAppendException: [DELTA_CONCURRENT_APPEND] Files were "
        "added to partition [capture_date=2026-11-20] by a concurrent update."
    )
    assert failure_line(conflict).endswith("run it again once the other has finished")
    assert failure_line(ValueError("bad state")) is None


@pytest.fixture(scope="module")
def jvm_env(venv_ready) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != LAUNCHER_PID_ENV}
    return {**env, "FLEET_VENV": sys.prefix}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """A warehouse holding one small Delta table, written without Spark."""
    import pyarrow as pa
    from deltalake import write_deltalake

    root = tmp_path_factory.mktemp("warehouse")
    write_deltalake(str(root / "recommendations"), pa.table({"group_id": ["g2", "g1"]}))
    return root


def our_lines(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if line and not JVM_LINE.match(line) and not IVY_LINE.match(line)
    ]


def test_sql_syntax_error_is_one_line(jvm_env, warehouse, tmp_path):
    """Given: a syntax error (a py4j traceback and a JSON log line before issue 23).
    Expected: exit 1, Spark's own first line on stderr and nothing else of ours; the
    traceback in --log-file."""
    log_file = tmp_path / "sql.log"
    result = submit(
        jvm_env,
        "sql",
        "SELEC 1",
        "--warehouse",
        str(warehouse),
        "--log-file",
        str(log_file),
        "--master",
        "local[1]",
        timeout=600,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert our_lines(result.stderr) == [
        "sql: [PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'. SQLSTATE: 42601 (line 1, pos 0)"
    ]
    assert "ParseException" in log_file.read_text()


def test_sql_statements_from_stdin_run_in_one_jvm_until_an_unknown_table(jvm_env, warehouse):
    """Given: three statements on stdin, the third naming a table that does not exist,
    with --verbose and --format markdown.
    Expected: the first two results on stdout and nothing else there (the logs and the
    traceback go to stderr), then one line naming the statement and the tables there
    are, last on stderr; exit 1."""
    statements = (
        "SELECT 1 AS one, 'a;b|c' AS s; -- a comment;\n"
        "SELECT group_id FROM recommendations ORDER BY group_id;\n"
        "SELECT * FROM nope"
    )
    result = submit(
        jvm_env,
        "sql",
        "--warehouse",
        str(warehouse),
        "--format",
        "markdown",
        "--verbose",
        "--master",
        "local[1]",
        stdin=statements,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        "| one | s |\n|---|---|\n| 1 | a;b\\|c |\n\n| group_id |\n|---|\n| g1 |\n| g2 |\n"
    )
    lines = our_lines(result.stderr)
    assert any("INFO fleet_rebalance.spark.session: spark " in line for line in lines)
    assert "Traceback (most recent call last):" in lines
    assert lines[-1] == (
        "sql: statement 3 of 3 (line 3): [TABLE_OR_VIEW_NOT_FOUND] The table or view `nope` "
        "cannot be found. Verify the spelling and correctness of the schema and catalog. "
        "Tables: recommendations."
    )


def test_a_table_no_run_has_written_is_one_line():
    from fleet_rebalance.storage.errors import TableNotFoundError

    missing = TableNotFoundError("file:///wh/members: not a Delta table (no _delta_log)")
    assert failure_line(missing) == (
        "file:///wh/members: not a Delta table (no _delta_log); run ./spark-submit.sh ingest "
        "(or nightly) first, or pass --warehouse where it is"
    )
