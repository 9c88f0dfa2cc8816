"""What a job's parsed flags resolve to: its conf, and its run date or backfill span."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet_rebalance.cli.arg_types import date_problem
from fleet_rebalance.cli.exit_status import usage_exit
from fleet_rebalance.cli.job_flags import DEFAULT_CONF
from fleet_rebalance.config import Config, ConfigError, load_config
from fleet_rebalance.date_span import DateSpan
from fleet_rebalance.errors import NO_RAW_ROOT_HINT, JobFailed, UsageError, error_text
from fleet_rebalance.filesystems import location

# Set by spark-submit.sh: the project directory it runs from.
PROJECT_DIR_ENV = "FLEET_PROJECT_DIR"


@dataclass(frozen=True)
class JobArgs:
    """A pipeline job's conf (with the flags' overrides), and its date or backfill."""

    config: Config
    run_date: dt.date | None  # None: a backfill over `span`
    extra: argparse.Namespace
    span: DateSpan | None = None


def parse_job_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, today: dt.date | None = None
) -> JobArgs:
    """Flags, conf and run date of a pipeline job; a mistake exits 2 with one line."""
    try:
        args = parser.parse_args(argv)
        return job_args(parser.prog, args, today)
    except (UsageError, ConfigError) as exc:
        usage_exit(parser.prog, exc)


def job_args(job: str, args: argparse.Namespace, today: dt.date | None = None) -> JobArgs:
    """The conf and run date behind a pipeline job's parsed flags."""
    if job == "replay":
        check_assignors(args.assignors)
    config = job_config(args, job)
    span = date_span(args)
    run_date = None if span else args.date or default_run_date(config, today)
    return JobArgs(config, run_date, args, span)


def check_date_flags(args: argparse.Namespace) -> None:
    """--date, --all and --from/--to exclude each other (argparse says so for the first
    two); --from must not be after --to."""
    first, last = getattr(args, "from_date", None), getattr(args, "to_date", None)
    if first is None and last is None:
        return
    flag = "--from" if first else "--to"
    if getattr(args, "date", None) is not None:
        raise UsageError(f"{flag} and --date: pass --date for one date, or --from/--to for a range")
    if getattr(args, "all", False):
        raise UsageError(f"{flag} and --all: pass --all for every date, or --from/--to")
    if first and last and first > last:
        raise UsageError(f"--from {first} is after --to {last}; pass the earlier date to --from")


def date_span(args: argparse.Namespace) -> DateSpan | None:
    """The backfill a pipeline job's flags ask for, or None for one date."""
    first, last = getattr(args, "from_date", None), getattr(args, "to_date", None)
    if getattr(args, "all", False) or first or last:
        return DateSpan(first, last)
    return None


def job_config(args: argparse.Namespace, job: str) -> Config:
    """The conf with the command line's overrides, after the flags' own checks; a
    missing conf file is named with where it was looked for."""
    check_date_flags(args)
    path = default_conf() if args.conf == DEFAULT_CONF else Path(args.conf)
    if not path.exists() and not path.is_symlink():
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()})"
        if args.conf == DEFAULT_CONF:
            raise UsageError(
                f"{DEFAULT_CONF}, the default --conf, not found{where}; run from the project "
                "directory or pass --conf FILE"
            )
        raise UsageError(
            f"--conf {args.conf}: no such file{where}; pass the path of a YAML conf such as "
            f"{DEFAULT_CONF}"
        )
    return load_config(path, raw_root=getattr(args, "raw_root", None), warehouse=args.warehouse)


def default_conf() -> Path:
    """The default --conf: conf/local.yaml in the current directory, else the one of the
    project spark-submit.sh runs from (so it works from any directory)."""
    here = Path(DEFAULT_CONF)
    project = os.environ.get(PROJECT_DIR_ENV)
    if here.exists() or not project:
        return here
    return Path(project) / DEFAULT_CONF


def default_run_date(config: Config, today: dt.date | None = None) -> dt.date:
    """The date a run without --date processes: the conf's default_date."""
    if config.default_date == "latest":
        return latest_capture_date(config)
    return (today or dt.datetime.now(dt.UTC).date()) - dt.timedelta(days=1)


def latest_capture_date(config: Config) -> dt.date:
    """The newest capture date under raw_root (default_date: latest); JobFailed when
    there is none, or raw_root is missing."""
    from fleet_rebalance.capture import store

    root = location(config.raw_root, config.storage.options)
    try:
        date = store.latest_capture_date(root, store.discover(root, config.capture.path_pattern))
    except FileNotFoundError as exc:
        raise JobFailed(
            f"default_date is latest but {error_text(exc)}; {NO_RAW_ROOT_HINT}"
        ) from None
    if date is None:
        raise JobFailed(
            f"default_date is latest but no dated capture is under {config.raw_root}; "
            "check --raw-root and capture.path_pattern, or pass --date"
        )
    problem = date_problem(date)
    if problem:
        raise JobFailed(f"default_date is latest but the latest capture is dated {date}: {problem}")
    return date


def check_assignors(names: str | None) -> None:
    """replay's --assignors, each loaded as the replay tasks will (a plug-in imported):
    an unknown name would otherwise fail every task on the executors."""
    if names is None:
        return
    from fleet_rebalance.assignors import get_assignor
    from fleet_rebalance.replay.assignor_runs import OBSERVED

    for name in names.split(","):
        if name == OBSERVED:
            continue
        try:
            get_assignor(name)
        except ValueError as exc:
            raise UsageError(f"--assignors: {error_text(exc)}") from None
