"""spark-submit.sh's routing of flags, tested without starting Spark."""

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fleet_rebalance.cli.launch_args import split_args
from fleet_rebalance.cli.launcher import main
from fleet_rebalance.cli.spark_command import (
    resolve_master,
    resolve_packages,
    spark_submit_command,
)
from fleet_rebalance.errors import JobFailed, UsageError

PROJECT = Path(__file__).resolve().parent.parent


def test_job_flags_and_spark_flags_are_separated():
    launch = split_args(
        [
            "ingest",
            "--date",
            "2026-11-20",
            "--master",
            "yarn",
            "--conf",
            "conf/prod.yaml",
            "--conf",
            "spark.executor.memory=8g",
            "--packages",
            "a:b:1",
            "--deploy-mode=cluster",
            "--",
            "--num-executors",
            "4",
        ]
    )
    assert launch.job == "ingest"
    assert launch.job_args == ["--date", "2026-11-20", "--conf", "conf/prod.yaml"]
    assert launch.master == "yarn"
    assert launch.deploy_mode == "cluster"
    assert launch.spark_args == [
        "--conf",
        "spark.executor.memory=8g",
        "--packages",
        "a:b:1",
        "--num-executors",
        "4",
    ]


def test_test_job_passes_everything_to_pytest():
    launch = split_args(["test", "-k", "config", "--master", "x"])
    assert launch.job_args == ["-k", "config", "--master", "x"]


def test_unknown_job_and_missing_values_are_usage_errors():
    with pytest.raises(UsageError, match=r"unknown job 'ingset'"):
        split_args(["ingset"])
    with pytest.raises(UsageError, match=r"--master needs a value"):
        split_args(["ingest", "--master"])
    with pytest.raises(UsageError, match="no job given"):
        split_args([])


def test_master_comes_from_flag_then_conf_then_default(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("master: local[3]\n")
    assert resolve_master(split_args(["ingest", "--master", "yarn"]), PROJECT) == "yarn"
    assert resolve_master(split_args(["ingest", "--conf", str(conf)]), PROJECT) == "local[3]"
    assert resolve_master(split_args(["ingest"]), PROJECT) == "local[*]"


def test_local_command_applies_spark_defaults_and_runs_the_job_script():
    launch = split_args(["nightly", "--date", "2026-11-20"])
    command = spark_submit_command(launch, PROJECT, Path("/v"), "local[*]")
    assert command[:5] == [
        "/v/bin/spark-submit",
        "--master",
        "local[*]",
        "--properties-file",
        str(PROJECT / "conf" / "spark-defaults.conf"),
    ]
    assert command[-3:] == [str(PROJECT / "jobs" / "nightly.py"), "--date", "2026-11-20"]
    assert "--archives" not in command
    java_options = command[command.index("--driver-java-options") + 1].split()
    assert java_options[-1] == "-XX:+UseParallelGC"


def test_cluster_command_ships_the_packed_venv():
    launch = split_args(["nightly", "--master", "spark://127.0.0.1:7077"])
    packages = ["io.delta:delta-spark_4.1_2.13:4.4.0", "org.apache.hadoop:hadoop-aws:3.4.2"]
    command = spark_submit_command(launch, PROJECT, Path("/v"), "spark://127.0.0.1:7077", packages)
    joined = " ".join(command)
    assert f"--archives {PROJECT / '.venv.tar.gz'}#environment" in joined
    assert "spark.pyspark.python=./environment/bin/python" in joined
    assert "spark.pyspark.driver.python=/v/bin/python" in joined
    assert f"--packages {packages[0]},{packages[1]}" in joined
    assert "UseParallelGC" not in joined  # the cluster's collector


def test_cluster_deploy_mode_runs_the_driver_in_the_archive_too():
    launch = split_args(["nightly", "--master", "yarn", "--deploy-mode", "cluster"])
    command = spark_submit_command(launch, PROJECT, Path("/v"), "yarn")
    assert "spark.pyspark.driver.python=./environment/bin/python" in command


def test_missing_job_says_not_available_and_fails(tmp_path, monkeypatch, capsys):
    (tmp_path / "jobs").mkdir()
    monkeypatch.setenv("FLEET_PROJECT_DIR", str(tmp_path))
    assert main(["replay", "--date", "2026-11-20"]) == 2
    assert "job 'replay' is not available yet" in capsys.readouterr().err


def test_help_lists_every_job(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for job in ("ingest", "replay", "metrics", "nightly", "sql", "generate", "test"):
        assert f"  {job} " in out
    assert "--delta-packages" not in out


def test_nightly_help_lists_pipeline_flags():
    result = subprocess.run(
        [sys.executable, str(PROJECT / "jobs" / "nightly.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for flag in ("--conf", "--raw-root", "--warehouse", "--date", "--all"):
        assert flag in result.stdout


def _fake_bin(tmp_path: Path, java_version: str | None) -> Path:
    """A PATH with the few tools spark-submit.sh needs before its Java check."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "awk", "cut", "env"):
        os.symlink(
            subprocess.check_output(["bash", "-c", f"command -v {tool}"], text=True).strip(),
            bin_dir / tool,
        )
    if java_version:
        java = bin_dir / "java"
        java.write_text(f"#!{bin_dir}/bash\necho 'openjdk version \"{java_version}\" 2021' >&2\n")
        java.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize(
    ("java", "message"),
    [
        (None, "Java 17 or newer is required but 'java' was not found"),
        ("11.0.20", "Java 17 or newer is required, found '11.0.20'"),
        ("1.8.0_392", "Java 17 or newer is required, found '1.8.0_392'"),
    ],
)
def test_spark_submit_sh_refuses_missing_or_old_java(tmp_path, java, message):
    bin_dir = _fake_bin(tmp_path, java)
    result = subprocess.run(
        [str(bin_dir / "bash"), str(PROJECT / "spark-submit.sh"), "nightly"],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"spark-submit.sh: {message}")


ALIAS_BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]"
            for prev, name in zip("abcdefg", "bcdefgh", strict=True)
        ),
        f"app_name: [{', '.join(['*h'] * 9)}]",
        "",
    ]
)


@pytest.fixture
def no_jvm(monkeypatch):
    """main() in-process with the project's jobs, failing loudly if it would start the
    JVM (spark-submit) or any other process."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"the launcher went on to run {args[0]!r}")

    monkeypatch.setenv("FLEET_PROJECT_DIR", str(PROJECT))
    monkeypatch.setattr(os, "execve", refuse)
    monkeypatch.setattr(subprocess, "call", refuse)


@pytest.mark.parametrize(
    ("argv", "files", "expected"),
    [
        (
            ["nightly", "--conf", "{bomb.yaml}"],
            {"bomb.yaml": ALIAS_BOMB},
            "{bomb.yaml}: line 1: YAML anchors and aliases are not allowed in a conf file "
            "(found anchor &a)",
        ),
        (
            ["ingest", "--conf", "{u16.yaml}"],
            {"u16.yaml": "app_name: x\n".encode("utf-16")},
            "{u16.yaml}: not UTF-8 text (byte 0xff at offset 0); expected a YAML "
            "configuration file in UTF-8",
        ),
        (
            ["nightly", "--conf", "{tz.yaml}"],
            {"tz.yaml": "capture:\n  log_timezone: Mars/Olympus\n"},
            "{tz.yaml}: capture.log_timezone: expected an IANA time zone such as UTC or "
            "Europe/Paris, found 'Mars/Olympus'",
        ),
        (
            ["replay", "--conf", "{re.yaml}", "--assignors", "range"],
            {"re.yaml": "capture:\n  path_pattern: '(?P<cluster>'\n"},
            "{re.yaml}: capture.path_pattern: expected a regular expression, found "
            "'(?P<cluster>' (missing ), unterminated subpattern at position 0)",
        ),
        (
            ["nightly", "--raw-root", ""],
            {},
            "argument --raw-root: expected a directory or URI, found '' "
            "(see ./spark-submit.sh nightly --help)",
        ),
        (
            ["ingest", "--warehouse=", "--date", "2026-11-20"],
            {},
            "argument --warehouse: expected a directory or URI, found '' "
            "(see ./spark-submit.sh ingest --help)",
        ),
        (["metrics", "--conf", ""], {}, "--conf needs a value, found an empty one (see "),
        (["nightly", "--master", ""], {}, "--master needs a value, found an empty one (see "),
        (
            ["nightly", "--date", "0001-01-01"],
            {},
            "argument --date: expected a date from 1970-01-02 to 9999-12-30, found 0001-01-01 "
            "(see ./spark-submit.sh nightly --help)",
        ),
        (
            ["sql", "SELECT 1", "--conf", "{m.yaml}"],
            {"m.yaml": "master: local[0]\n"},
            "{m.yaml}: master: expected a Spark master URL",
        ),
        (["ingset"], {}, "unknown job 'ingset' (jobs: ingest, "),
    ],
)
def test_hostile_input_is_refused_before_the_jvm_in_one_line(
    tmp_path, no_jvm, capsys, argv, files, expected
):
    """Given: spark-submit.sh's arguments from issue 19's reproductions.
    Then: the launcher refuses them in-process, before spark-submit starts a JVM.
    Expected: exit 2 and exactly one line on stderr, naming the flag or file and key."""

    def placed(text: str) -> str:
        for name in files:
            text = text.replace(f"{{{name}}}", str(tmp_path / name))
        return text

    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main([placed(arg) for arg in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("spark-submit.sh: " + placed(expected))


def test_a_flag_before_the_job_says_flags_go_after_it(no_jvm, capsys):
    assert main(["--conf", "nope.yaml", "nightly"]) == 2
    assert capsys.readouterr().err == (
        "spark-submit.sh: --conf before the job: flags go after it "
        "(./spark-submit.sh <job> --conf)\n"
    )


def test_job_help_is_printed_without_starting_the_job(no_jvm, capsys):
    assert main(["sql", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: sql ")
    assert "{table,csv,json,markdown}" in out


def test_sql_statements_on_stdin_become_its_query_and_the_driver_gets_our_stderr(
    tmp_path, monkeypatch
):
    """Given: sql with its statements on stdin, which the JVM never passes on to the
    driver. Then: the launcher reads them and hands them over after `--`; it names
    itself as the JVM's pid so the driver can write its logs to this stderr."""
    from fleet_rebalance.cli.driver_stderr import LAUNCHER_PID_ENV

    launched = {}

    def execve(path, command, env):
        launched.update(command=command, env=env)
        raise SystemExit(0)

    monkeypatch.setenv("FLEET_PROJECT_DIR", str(PROJECT))
    monkeypatch.chdir(PROJECT)
    monkeypatch.setattr(os, "execve", execve)
    statements = "-- first\nSELECT 1;\nSELECT 2\n"
    with pytest.raises(SystemExit):
        main(["sql", "--warehouse", str(tmp_path), "--format", "csv"], io.StringIO(statements))
    assert launched["command"][-7:] == [
        str(PROJECT / "jobs" / "sql.py"),
        "--warehouse",
        str(tmp_path),
        "--format",
        "csv",
        "--",
        statements,
    ]
    assert launched["env"][LAUNCHER_PID_ENV] == str(os.getpid())


def test_assignors_are_checked_before_the_jvm(no_jvm, capsys):
    assert main(["replay", "--date", "2026-11-20", "--assignors", "range,stiky"]) == 2
    assert capsys.readouterr().err.startswith(
        "spark-submit.sh: --assignors: unknown assignor 'stiky': expected one of range, "
    )


def test_a_refused_flag_imports_no_arrow_spark_or_pandas():
    """Given: the launcher refusing --date 2026-13-45 in a fresh interpreter.
    Expected: none of pyarrow, pyspark, pandas or numpy imported (pyarrow alone cost a
    refusal about 0.3 s of CPU)."""
    code = (
        "import sys\n"
        "from fleet_rebalance.cli.launcher import main\n"
        "status = main(['nightly', '--date', '2026-13-45'])\n"
        "print(status, *sorted({name.split('.')[0] for name in sys.modules}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env={**os.environ, "FLEET_PROJECT_DIR": str(PROJECT)},
        timeout=60,
    )
    status, *imported = result.stdout.split()
    assert status == "2", result.stderr
    assert not {"pyarrow", "pyspark", "pandas", "numpy"} & set(imported)
    assert "argument --date: no such day 2026-13-45" in result.stderr


def test_every_run_resolves_delta_and_an_s3_warehouse_hadoop_aws_too(tmp_path):
    """Delta's connector as configure_spark_with_delta_pip names it, hadoop-aws of
    pyspark's Hadoop for an S3 warehouse, and the user's --packages (one flag: spark-submit
    keeps only the last); a --jars bringing delta-spark replaces Delta's package."""
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    from fleet_rebalance.cli import spark_command
    from fleet_rebalance.spark.packages import delta_package, s3a_package

    builder = configure_spark_with_delta_pip(SparkSession.builder)
    assert builder._options["spark.jars.packages"] == delta_package()
    assert s3a_package() == "org.apache.hadoop:hadoop-aws:3.4.2"
    conf = tmp_path / "c.yaml"
    conf.write_text("warehouse: /tmp/wh\n")
    local = split_args(["nightly", "--conf", str(conf), "--packages", "a:b:1,c:d:2"])
    assert spark_command.jvm_packages(local, PROJECT) == [delta_package(), "a:b:1", "c:d:2"]
    assert local.spark_args == []
    conf.write_text("warehouse: s3://b/wh\n")
    remote = split_args(["nightly", "--conf", str(conf), "--conf", "spark.jars.packages=a:b:1"])
    assert spark_command.jvm_packages(remote, PROJECT) == [delta_package(), s3a_package(), "a:b:1"]
    theirs = split_args(["nightly", "--conf", str(conf), "--", "--jars", "/x/delta-spark_4.1.jar"])
    assert spark_command.jvm_packages(theirs, PROJECT) == []


def ivy_settings(tmp_path: Path, root: str) -> Path:
    """Ivy settings (spark.jars.ivySettings) whose one resolver is the Maven repository
    at `root`."""
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(
        '<ivysettings><settings defaultResolver="only"/><resolvers>'
        f'<ibiblio name="only" m2compatible="true" root="{root}"/>'
        "</resolvers></ivysettings>"
    )
    return settings


def test_an_unreachable_maven_central_is_one_line_naming_the_packages(tmp_path):
    """A machine that cannot fetch the packages (here: Ivy pointed at a closed port of
    127.0.0.1 and an empty cache, through the run's own spark.jars.ivy* settings) fails
    in the launcher with one line, before the job's JVM."""
    settings = ivy_settings(tmp_path, "http://127.0.0.1:1/maven2/")
    ivy = [
        "--conf",
        f"spark.jars.ivy={tmp_path / 'ivy'}",
        "--conf",
        f"spark.jars.ivySettings={settings}",
    ]
    with pytest.raises(JobFailed) as caught:
        resolve_packages(Path(sys.prefix), ["io.delta:delta-spark_4.1_2.13:4.4.0"], ivy)
    assert str(caught.value).startswith(
        "Spark could not fetch its JVM packages (io.delta:delta-spark_4.1_2.13:4.4.0) from "
        "Maven Central: "
    )
    assert "--jars" in str(caught.value) and "\n" not in str(caught.value)


def test_packages_resolve_outside_an_activated_venv(tmp_path, monkeypatch):
    """The README's first run: an empty Ivy cache, and python3 on PATH without pyspark
    (the venv is not activated). The package is served by a Maven-layout directory."""
    artifact = tmp_path / "m2" / "com" / "example" / "tiny" / "1.0"
    artifact.mkdir(parents=True)
    (artifact / "tiny-1.0.pom").write_text(
        "<project><modelVersion>4.0.0</modelVersion><groupId>com.example</groupId>"
        "<artifactId>tiny</artifactId><version>1.0</version></project>"
    )
    with zipfile.ZipFile(artifact / "tiny-1.0.jar", "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    settings = ivy_settings(tmp_path, f"{(tmp_path / 'm2').as_uri()}/")
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to("/usr/bin/false")
    monkeypatch.setenv("PATH", f"{bare}{os.pathsep}{os.environ['PATH']}")
    for name in ("SPARK_HOME", "PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON"):
        monkeypatch.delenv(name, raising=False)
    ivy = tmp_path / "ivy"
    conf = ["--conf", f"spark.jars.ivy={ivy}", "--conf", f"spark.jars.ivySettings={settings}"]
    resolve_packages(Path(sys.prefix), ["com.example:tiny:1.0"], conf)
    assert (ivy / "jars" / "com.example_tiny-1.0.jar").is_file()


def test_packages_in_spark_s_cache_are_not_resolved_again(tmp_path, monkeypatch):
    from fleet_rebalance.cli import spark_command

    jars = tmp_path / "ivy" / "jars"
    jars.mkdir(parents=True)
    (jars / "io.delta_delta-spark_4.1_2.13-4.4.0.jar").write_bytes(b"")
    monkeypatch.setattr(spark_command.subprocess, "run", pytest.fail)
    resolve_packages(
        Path("/v"),
        ["io.delta:delta-spark_4.1_2.13:4.4.0"],
        ["--conf", f"spark.jars.ivy={tmp_path / 'ivy'}"],
    )


def test_no_maven_is_one_line_saying_what_to_install(tmp_path, monkeypatch, capsys):
    from fleet_rebalance import jvm

    project = tmp_path / "project"
    (project / "jvm").mkdir(parents=True)
    (project / "jvm" / "pom.xml").write_text((PROJECT / "jvm" / "pom.xml").read_text())
    monkeypatch.setattr(jvm.shutil, "which", lambda name: None)
    with pytest.raises(
        jvm.JvmDependencyError,
        match=r"Maven \(mvn\) is needed to fetch the "
        r"kafka-4 jars \(jvm/pom.xml\) and is not on PATH: install it",
    ):
        jvm.classpath(project, "kafka-4")


def test_hadoop_aws_matches_the_hadoop_of_spark_home_where_spark_submit_set_it(
    tmp_path, monkeypatch
):
    """A cluster-mode driver may import pyspark from SPARK_HOME's pyspark.zip, beside
    no jars: the Hadoop version is read from SPARK_HOME's jars first."""
    from fleet_rebalance.spark.packages import hadoop_version

    (tmp_path / "jars").mkdir()
    (tmp_path / "jars" / "hadoop-client-api-9.8.7.jar").write_bytes(b"")
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert hadoop_version() == "9.8.7"
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "elsewhere"))
    assert hadoop_version() == "3.4.2"  # the installed pyspark's own
