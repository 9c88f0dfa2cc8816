"""Flags every pipeline job shares, and the job skeleton around them.

Everything a command line can get wrong is refused here, in one line and with exit
status 2, before a job builds its SparkSession; spark-submit.sh's launcher runs the same
checks (check_job_args) before it even starts the JVM.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from fleet_rebalance.config import Config, ConfigError, load_config, one_line, shown

DEFAULT_CONF = "conf/local.yaml"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# A run date's previous day (the replay's carried-over state) and next day (the end of
# its window) must exist, and captures are stamped in Unix time.
FIRST_DATE = dt.date(1970, 1, 2)
LAST_DATE = dt.date(9999, 12, 30)
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
USAGE_STATUS = 2


class UsageError(ValueError):
    """A command line that cannot be run as given. The message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class JobParser(argparse.ArgumentParser):
    """argparse whose mistakes raise UsageError (one line) rather than printing the
    usage block and exiting, so the launcher can check a job's flags in-process."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclass(frozen=True)
class JobArgs:
    config: Config
    run_date: dt.date | None  # None means --all
    extra: argparse.Namespace


def error_text(exc: BaseException) -> str:
    """What a failure message says about exc: its text on one line, or its type when
    str(exc) is empty (a bare OverflowError, an assert), never nothing."""
    text = str(exc).strip()
    return one_line(text) if text else type(exc).__name__


def iso_date(text: str) -> dt.date:
    # fromisoformat alone would also take 20261120 and 2026-W47-5.
    try:
        date = dt.date.fromisoformat(text) if ISO_DATE.fullmatch(text) else None
    except ValueError:  # 2026-02-30
        date = None
    if date is None:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, found {shown(text)}")
    problem = date_problem(date)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return date


def date_problem(date: dt.date) -> str | None:
    if FIRST_DATE <= date <= LAST_DATE:
        return None
    return f"expected a date from {FIRST_DATE} to {LAST_DATE}, found {date.isoformat()}"


def non_empty(what: str) -> Callable[[str], str]:
    """An argparse type refusing an empty or blank value: `--raw-root ""` (an unset
    variable in a scheduler's template) must not fall back to the conf's value."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {what}, found {shown(text)}")
        return text

    return check


def pipeline_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = JobParser(prog=prog, description=description)
    parser.add_argument(
        "--conf",
        default=DEFAULT_CONF,
        type=non_empty("a YAML configuration file"),
        metavar="FILE",
        help=f"job configuration YAML (default: {DEFAULT_CONF})",
    )
    parser.add_argument(
        "--raw-root",
        type=non_empty("a directory or URI"),
        metavar="URI",
        help="raw captures: a directory or an s3://, gs://, abfss:// URI (overrides conf)",
    )
    parser.add_argument(
        "--warehouse",
        type=non_empty("a directory or URI"),
        metavar="URI",
        help="Delta tables: a directory or an s3://, gs://, abfss:// URI (overrides conf)",
    )
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--date",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="capture date (default: conf default_date: yesterday UTC, or the latest capture)",
    )
    when.add_argument("--all", action="store_true", help="process every date found")
    return parser


def check_job_args(argv: Sequence[str], *, read_conf: bool = True) -> None:
    """Raise UsageError or ConfigError for what a pipeline job would refuse in its flags
    and its conf; flags other jobs add (replay's --assignors, sql's query) are left to
    the job. read_conf=False checks the flags only (the conf may exist only where the
    driver runs)."""
    args, _ = pipeline_parser("check", "").parse_known_args(list(argv))
    if read_conf:
        load_config(args.conf, raw_root=args.raw_root, warehouse=args.warehouse)


def parse_job_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, today: dt.date | None = None
) -> JobArgs:
    try:
        args = parser.parse_args(argv)
        config = load_config(args.conf, raw_root=args.raw_root, warehouse=args.warehouse)
    except (UsageError, ConfigError) as exc:
        usage_exit(parser.prog, exc)
    if args.all:
        run_date = None
    elif args.date:
        run_date = args.date
    elif config.default_date == "latest":
        run_date = latest_capture_date(config)
    else:
        run_date = (today or dt.datetime.now(dt.UTC).date()) - dt.timedelta(days=1)
    return JobArgs(config, run_date, args)


def usage_exit(prog: str, exc: Exception) -> NoReturn:
    print(f"{prog}: error: {error_text(exc)}", file=sys.stderr, flush=True)
    sys.exit(USAGE_STATUS)


def latest_capture_date(config: Config) -> dt.date:
    from fleet_rebalance.capture import store
    from fleet_rebalance.filesystems import location

    root = location(config.raw_root, config.storage.options)
    try:
        date = store.latest_capture_date(root, store.discover(root, config.capture.path_pattern))
    except FileNotFoundError as exc:
        raise SystemExit(f"default_date is latest but {error_text(exc)}") from None
    if date is None:
        raise SystemExit(f"default_date is latest but no dated capture is under {config.raw_root}")
    problem = date_problem(date)
    if problem:
        raise SystemExit(
            one_line(f"default_date is latest but the latest capture is dated {date}: {problem}")
        )
    return date


def run_job(main: Callable[[], int]) -> None:
    """Exit status for spark-submit and Airflow: 0 done, 1 failed (logged with a traceback),
    2 for a command line or conf that cannot be run (one line)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    try:
        status = main()
    except (UsageError, ConfigError) as exc:
        usage_exit(Path(sys.argv[0]).stem or "fleet_rebalance", exc)
    except Exception as exc:
        logging.getLogger("fleet_rebalance").exception("job failed: %s", error_text(exc))
        status = 1
    sys.exit(status)
