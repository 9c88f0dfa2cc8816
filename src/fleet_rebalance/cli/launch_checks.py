"""What a job would refuse, refused by the launcher before the JVM's 10-40 s start."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from fleet_rebalance.cli.job_args import (
    check_assignors,
    check_date_flags,
    date_span,
    default_run_date,
    job_config,
    latest_capture_date,
)
from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.cli.registry import JOBS
from fleet_rebalance.cli.sql_input import read_stdin_sql, sql_statements
from fleet_rebalance.config import Config
from fleet_rebalance.date_span import capture_span
from fleet_rebalance.errors import NO_RAW_ROOT_HINT, JobFailed, UsageError, error_text
from fleet_rebalance.filesystems import location
from fleet_rebalance.sql.statements import split_statements


def check_launch(
    job: str,
    argv: Sequence[str],
    *,
    read_conf: bool = True,
    here: bool = True,
    stdin: TextIO | None = None,
) -> list[str]:
    """Everything a job would refuse, refused before the JVM starts; returns the job's
    arguments (sql statements read from stdin become its QUERY: the JVM does not pass
    stdin on to the driver). Raises UsageError or ConfigError (exit 2), or JobFailed
    (exit 1) for what the run would fail on: a local raw_root that is missing or has no
    captures for the run's date.

    read_conf=False: the conf is not read (it may exist only where the driver runs).
    here=False: the driver runs elsewhere (cluster deploy mode), so paths on this machine
    (-f, --log-file, raw_root, warehouse) say nothing about it and are not checked.
    """
    argv = list(argv)
    reads = JOBS[job].reads
    args = job_parser(job).parse_args(argv)
    check_date_flags(args)
    if here and args.log_file:
        check_log_file(args.log_file)
    if job == "generate":
        if here:
            check_directory_arg(f"--out {args.out}", Path(args.out), "for the captures")
        return argv
    if job == "sql":
        if args.query is None and args.file is None:
            text = read_stdin_sql(stdin)
            if not split_statements(text):
                raise UsageError("sql: no SQL statement on stdin")
            argv += ["--", text]
        elif here or args.file is None:
            sql_statements(args, None)
    if job == "replay" and here:
        check_assignors(args.assignors)
    if not read_conf:
        return argv
    config = job_config(args, job)
    if not here:
        return argv
    check_warehouse(args, config, must_exist=reads == "tables")
    if not hasattr(args, "date"):
        return argv  # no run date (sql, maintain)
    if _local_path(config.raw_root) is None:
        return argv  # an object store is listed by the job only, not twice
    # What the job (and its ingest step) would find listing raw_root, found now, and
    # reported in the job's own words (exit 1: the run failed, as it would have).
    span = date_span(args)
    if span is not None:
        if reads == "captures":
            capture_span(config, span)
    elif args.date is None and config.default_date == "latest":
        latest_capture_date(config)
    elif reads == "captures":
        check_captures(job, config, args.date or default_run_date(config))
    return argv


def _named(args: argparse.Namespace, key: str, value: str) -> str:
    """How a message names raw_root or warehouse: by its flag when one gave it."""
    if getattr(args, key, None) is not None:
        return f"--{key.replace('_', '-')} {value}"
    return f"{args.conf}: {key} {value}"


def _local_path(uri: str) -> Path | None:
    place = location(uri)
    return Path(place.fs_path) if place.is_local else None


def _blocking_file(path: Path) -> Path | None:
    """The path itself or its nearest existing ancestor, when that is not a directory
    (nothing can be created under it)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def check_directory_arg(name: str, path: Path, purpose: str) -> None:
    """A directory a run writes under must be one, or be creatable."""
    blocking = _blocking_file(path)
    if blocking == path:
        raise UsageError(
            f"{name}: not a directory; pass a directory {purpose} (created when missing)"
        )
    if blocking is not None:
        raise UsageError(f"{name}: {blocking} is not a directory; pass a directory {purpose}")


def check_warehouse(args: argparse.Namespace, config: Config, *, must_exist: bool) -> None:
    """A local warehouse must be a directory, or creatable: a regular file there failed
    every parse task after the whole day was parsed."""
    path = _local_path(config.warehouse)
    if path is None:
        return
    name = _named(args, "warehouse", config.warehouse)
    check_directory_arg(name, path, "for the Delta tables")
    if must_exist and not path.is_dir():
        raise UsageError(
            f"{name}: no such directory, so no tables to read; run ./spark-submit.sh "
            "nightly (or ingest) first, or pass --warehouse where the tables are"
        )


def check_captures(job: str, config: Config, day: dt.date) -> None:
    """The ingest step's refusals (no raw_root, a date without captures) made before the
    JVM starts, by the same rule (capture.store listing, ingest_files.select) and in the
    words the job would use."""
    from fleet_rebalance.capture import store
    from fleet_rebalance.pipeline.ingest_files import select

    step = f"step ingest failed for {day}: " if job == "nightly" else ""
    root = location(config.raw_root, config.storage.options)
    pattern = config.capture.path_pattern
    try:
        files = store.survey(root, pattern)
    except FileNotFoundError as exc:
        raise JobFailed(f"{step}{error_text(exc)}; {NO_RAW_ROOT_HINT}") from None
    if any(raw.path_date == day for raw in files):
        return
    chosen = select(store.with_log_kinds(root, files, day), day)
    if chosen.has_captures:
        return
    latest = store.latest_capture_date(root, files)
    message = f"no capture files for {day} under {config.raw_root} (path_pattern {pattern!r})"
    if chosen.rejected:
        message += (
            f"; {len(chosen.rejected)} file(s) with no valid capture time in their path "
            f"were rejected, e.g. {chosen.rejected[0].relative!r}"
        )
    if latest is not None:
        message += f"; the newest capture date there is {latest}: pass --date {latest}"
    else:
        message += "; no file there is dated: check --raw-root and capture.path_pattern"
    raise JobFailed(step + message)


def check_log_file(name: str) -> None:
    path = Path(name)
    if path.is_dir():
        raise UsageError(f"--log-file {name}: is a directory; pass a file to append the log to")
    if not path.parent.is_dir():
        raise UsageError(f"--log-file {name}: no such directory {path.parent}")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise UsageError(f"--log-file {name}: not writable")
