"""A job's command line: its flags, their types, and the conf and run date they resolve to.

A mistake is one line and a documented exit status: USAGE_STATUS (2, nothing was run)
for a flag, conf value or path that cannot be used (UsageError, ConfigError),
FAILED_STATUS (1) for a run that failed for a reason the user can act on (JobFailed).
"""

from __future__ import annotations

import argparse
import calendar
import datetime as dt
import difflib
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from fleet_rebalance.config import Config, ConfigError, load_config, one_line, shown
from fleet_rebalance.filesystems import location

DEFAULT_CONF = "conf/local.yaml"
# Set by spark-submit.sh: the project directory it runs from.
PROJECT_DIR_ENV = "FLEET_PROJECT_DIR"
# A run date's previous day (the replay's carried-over state) and next day (the end of
# its window) must exist, and captures are stamped in Unix time.
FIRST_DATE = dt.date(1970, 1, 2)
LAST_DATE = dt.date(9999, 12, 30)
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
USAGE_STATUS = 2
FAILED_STATUS = 1
INTERRUPTED_STATUS = 130  # the shell's status for SIGINT

PIPELINE_JOBS = ("ingest", "replay", "metrics", "nightly")
# Jobs that read raw_root for their date (the others read the warehouse); their
# backfills run the capture dates under raw_root, the others' the dates bronze holds.
RAW_JOBS = ("ingest", "nightly")
# Jobs that only read what an earlier run wrote to the warehouse.
READ_JOBS = ("replay", "metrics", "sql")
DESCRIPTIONS = {
    "ingest": "Ingest: raw Kafka captures under raw_root -> bronze Delta tables.",
    "replay": "Replay: each group's history through every assignor (bronze -> silver).",
    "metrics": "Metrics: silver (and bronze offsets, states, coordinator logs) -> gold tables.",
    "nightly": "Nightly: ingest -> replay -> metrics for one date (or each date of --all or "
    "--from/--to, in order) in one SparkSession, warehouse/reports/<date>.html for each "
    "date run and a summary on stdout (of the last date, for several).",
    "sql": "SQL over the output tables: every Delta table in the warehouse is a view by its "
    "name. Statements come from QUERY, from -f FILE, or from stdin, separated by `;`, "
    "and run in one SparkSession.",
    "generate": "Generate: write a seeded synthetic fleet of raw captures (no Spark needed).",
    "maintain": "Maintain: compact small files, VACUUM files no version inside the retention "
    "reads, and checkpoint, for every Delta table in the warehouse; a line per table on "
    "stdout. Meant to run weekly, never beside a nightly.",
}
DATE_HELP = (
    "capture date to process (default: the conf's default_date; conf/local.yaml says "
    "latest, the newest capture date under raw_root; a conf without it means yesterday, UTC)"
)
ALL_HELP = (
    "every date, oldest first, as a backfill: the capture dates under raw_root (ingest, "
    "nightly) or the dates bronze holds (replay, metrics); a date whose tables are complete "
    "for the same inputs is skipped, so a re-run resumes where a failed one stopped"
)
SQL_FORMATS = ("table", "csv", "json", "markdown")
# sql's engines: Spark (the default; clusters, Delta's own SQL) or DuckDB over Arrow
# reads of the tables by deltalake, here and without a JVM.
SQL_ENGINES = ("spark", "duckdb")
DEFAULT_RETAIN_DAYS = 7  # maintain's: Delta's own default file retention
NO_RAW_ROOT_HINT = "pass --raw-root with the directory (or URI) the captures are under"
EXIT_STATUS_EPILOG = (
    "exit status: 0 done; 1 the run failed (one line on stderr; the traceback with "
    "--verbose or in --log-file); 2 a flag, the conf or a path cannot be used (nothing run)"
)


class UsageError(ValueError):
    """A command line that cannot be run as given. The message is one line; see_help
    when it does not itself say what to pass instead (argparse's own messages)."""

    def __init__(self, message: str, *, see_help: bool = False) -> None:
        super().__init__(one_line(message))
        self.see_help = see_help


class JobFailed(RuntimeError):
    """A run that failed for a reason the user can act on (no captures for the date, an
    SQL error, ...): the message is one line naming the problem and what to do, and the
    job exits with FAILED_STATUS without a traceback unless --verbose."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


UNRECOGNIZED = "unrecognized arguments: "
INVALID_CHOICE = re.compile(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)")


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """'; did you mean X?' for the closest of choices to a mistyped word, or ''
    (argparse suggests only from Python 3.12 on)."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


class JobParser(argparse.ArgumentParser):
    """argparse whose mistakes raise UsageError (one line) rather than printing the
    usage block and exiting, so the launcher can check a job's flags in-process; a
    mistyped flag or choice gets the closest known one."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message + self._suggestion(message), see_help=True)

    def _suggestion(self, message: str) -> str:
        if message.startswith(UNRECOGNIZED):
            flags = [f for f in self._option_string_actions if f.startswith("--")]
            for word in message[len(UNRECOGNIZED) :].split(" "):
                if word.startswith("--"):
                    hint = did_you_mean(word.partition("=")[0], flags)
                    if hint:
                        return hint
            return ""
        choice = INVALID_CHOICE.fullmatch(message)
        if choice:
            names = [c.strip().strip("'") for c in choice.group(3).split(",")]
            return did_you_mean(choice.group(2), names)
        return ""


@dataclass(frozen=True)
class DateSpan:
    """The dates of a backfill (--all, --from, --to), both ends inclusive; None: from
    the oldest date there is, or through the newest."""

    first: dt.date | None = None
    last: dt.date | None = None

    def text(self) -> str:
        """The span as a message names it."""
        if self.first and self.last:
            return f"from {self.first} to {self.last}"
        if self.first:
            return f"from {self.first} on"
        if self.last:
            return f"up to {self.last}"
        return "at all"


@dataclass(frozen=True)
class JobArgs:
    config: Config
    run_date: dt.date | None  # None: a backfill over `span`
    extra: argparse.Namespace
    span: DateSpan | None = None


def error_text(exc: BaseException) -> str:
    """What a failure message says about exc: its text on one line, or its type when
    str(exc) is empty (a bare OverflowError, an assert), never nothing."""
    text = str(exc).strip()
    return one_line(text) if text else type(exc).__name__


def iso_date(text: str) -> dt.date:
    # fromisoformat alone would also take 20261120 and 2026-W47-5.
    if not ISO_DATE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, found {shown(text)}")
    try:
        date = dt.date.fromisoformat(text)
    except ValueError:  # 2026-02-30: the right form, a day that does not exist
        raise argparse.ArgumentTypeError(impossible_day(text)) from None
    problem = date_problem(date)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return date


def impossible_day(text: str) -> str:
    """Why a YYYY-MM-DD text names no day: its month, or its month's length."""
    year, month, day = (int(part) for part in text.split("-"))
    if not 1 <= month <= 12:
        return f"no such day {text}: there is no month {month:02d} (01 to 12)"
    if year < 1:
        return f"expected a date from {FIRST_DATE} to {LAST_DATE}, found {text}"
    if day == 0:
        return f"no such day {text}: days start at 01"
    days = calendar.monthrange(year, month)[1]
    return f"no such day {text}: {calendar.month_name[month]} {year} has {days} days"


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


def bounded_int(low: int) -> Callable[[str], int]:
    """An argparse type for a count of at least `low`; the generator would otherwise
    loop forever or write nothing."""

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, found {shown(text)}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, found {value}")
        return value

    return check


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, found {shown(text)}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, found {shown(text)}")
    return value


def utc_minute(text: str) -> dt.datetime:
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%MZ").replace(tzinfo=dt.UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected YYYY-MM-DDTHH:MMZ (UTC), found {shown(text)}"
        ) from None


def add_log_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log at DEBUG and print the traceback of a failure on stderr (default: INFO, "
        "and a failure is one line)",
    )
    parser.add_argument(
        "--log-file",
        type=non_empty("a file"),
        metavar="FILE",
        help="also append the log, with every failure's traceback, to FILE (default: none)",
    )


def pipeline_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = JobParser(prog=prog, description=description, epilog=EXIT_STATUS_EPILOG)
    add_conf_flag(parser, "job configuration YAML")
    parser.add_argument(
        "--raw-root",
        type=non_empty("a directory or URI"),
        metavar="URI",
        help="raw captures: a directory or an s3://, gs://, abfss:// URI (default: the "
        "conf's raw_root)",
    )
    add_warehouse_flag(parser)
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD", help=DATE_HELP)
    when.add_argument("--all", action="store_true", help=ALL_HELP)
    parser.add_argument(
        "--from",
        dest="from_date",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="backfill from this date, inclusive, like --all (default with --to: the oldest date)",
    )
    parser.add_argument(
        "--to",
        dest="to_date",
        type=iso_date,
        metavar="YYYY-MM-DD",
        help="backfill up to this date, inclusive, like --all (default with --from: the "
        "newest date)",
    )
    add_log_flags(parser)
    return parser


def add_conf_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--conf",
        default=DEFAULT_CONF,
        type=non_empty("a YAML configuration file"),
        metavar="FILE",
        help=f"{what} (default: {DEFAULT_CONF})",
    )


def add_warehouse_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--warehouse",
        type=non_empty("a directory or URI"),
        metavar="URI",
        help="Delta tables: a directory or an s3://, gs://, abfss:// URI (default: the "
        "conf's warehouse)",
    )


def add_warehouse_flags(parser: argparse.ArgumentParser) -> None:
    """--conf and --warehouse of the jobs that read or keep the tables only (sql, maintain)."""
    add_conf_flag(parser, "job configuration YAML, for its warehouse and storage")
    add_warehouse_flag(parser)


def sql_parser() -> JobParser:
    parser = JobParser(prog="sql", description=DESCRIPTIONS["sql"], epilog=EXIT_STATUS_EPILOG)
    parser.add_argument(
        "query",
        nargs="?",
        metavar="QUERY",
        help='one or more `;`-separated statements, e.g. "SELECT * FROM recommendations '
        'LIMIT 5" (default: the statements of -f FILE, else of stdin)',
    )
    parser.add_argument(
        "-f",
        "--file",
        type=non_empty("a file of SQL statements"),
        metavar="FILE",
        help="read the statements from FILE (default: none)",
    )
    add_warehouse_flags(parser)
    parser.add_argument(
        "--format",
        choices=SQL_FORMATS,
        default="table",
        help="how rows are printed on stdout (default: table)",
    )
    parser.add_argument(
        "--max-rows",
        type=bounded_int(1),
        default=1000,
        metavar="N",
        help="rows shown per statement by --format table and markdown (default: 1000); "
        "csv and json print every row",
    )
    parser.add_argument(
        "--engine",
        choices=SQL_ENGINES,
        default="spark",
        help="spark: a SparkSession, Spark SQL and Delta's (time travel, DESCRIBE HISTORY); "
        "duckdb: DuckDB in this process over the tables as deltalake reads them, no JVM "
        "(a statement in a form DuckDB's SQL lacks is refused in one line) (default: spark)",
    )
    add_log_flags(parser)
    return parser


def generate_parser() -> JobParser:
    from fleet_rebalance.generate.fleet import FleetSpec

    spec = FleetSpec()
    parser = JobParser(
        prog="generate", description=DESCRIPTIONS["generate"], epilog=EXIT_STATUS_EPILOG
    )
    parser.add_argument(
        "--out",
        default="data/sample",
        metavar="DIR",
        help="output directory (default: %(default)s)",
    )
    parser.add_argument(
        "--clusters",
        type=bounded_int(1),
        default=spec.clusters,
        metavar="N",
        help="Kafka clusters (default: %(default)s)",
    )
    parser.add_argument(
        "--groups",
        type=bounded_int(1),
        default=spec.groups_per_cluster,
        metavar="N",
        help="consumer groups per cluster (default: %(default)s)",
    )
    parser.add_argument(
        "--topics",
        type=bounded_int(1),
        default=spec.topics_per_cluster,
        metavar="N",
        help="topics per cluster, plus one regex-matched topic (default: %(default)s)",
    )
    parser.add_argument(
        "--groups-per-topic",
        type=bounded_int(0),
        default=spec.groups_per_topic,
        metavar="N",
        help="add topics until each is read by about N groups; 0 adds none (default: %(default)s)",
    )
    parser.add_argument(
        "--start",
        type=utc_minute,
        default=spec.start,
        metavar="YYYY-MM-DDTHH:MMZ",
        help=f"first capture time, UTC (default: {spec.start:%Y-%m-%dT%H:%MZ})",
    )
    parser.add_argument(
        "--hours",
        type=positive_float,
        default=spec.hours,
        metavar="H",
        help="hours of captures (default: %(default)s)",
    )
    parser.add_argument(
        "--interval-minutes",
        type=bounded_int(1),
        default=spec.interval_minutes,
        metavar="M",
        help="minutes between captures (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=spec.seed,
        help="random seed: the same seed writes the same fleet (default: %(default)s)",
    )
    parser.add_argument("--clean", action="store_true", help="empty --out first")
    add_log_flags(parser)
    return parser


def maintain_parser() -> JobParser:
    parser = JobParser(
        prog="maintain", description=DESCRIPTIONS["maintain"], epilog=EXIT_STATUS_EPILOG
    )
    add_warehouse_flags(parser)
    parser.add_argument(
        "--retain-days",
        type=bounded_int(1),
        default=DEFAULT_RETAIN_DAYS,
        metavar="N",
        help="keep every version of the last N days readable: VACUUM deletes only files "
        "older than that; refused when shorter than the longest run recorded in the "
        "warehouse (default: %(default)s)",
    )
    add_log_flags(parser)
    return parser


def job_parser(job: str) -> argparse.ArgumentParser:
    """The flags of one job, for the job itself, its --help and the launcher's checks."""
    if job == "sql":
        return sql_parser()
    if job == "generate":
        return generate_parser()
    if job == "maintain":
        return maintain_parser()
    if job not in PIPELINE_JOBS:
        known = [*PIPELINE_JOBS, "sql", "generate", "maintain"]
        raise UsageError(f"unknown job {job!r}{did_you_mean(job, known)}")
    parser = pipeline_parser(job, DESCRIPTIONS[job])
    if job == "replay":
        parser.add_argument(
            "--assignors",
            metavar="NAMES",
            help="comma-separated assignors (default: every built-in plus observed;"
            " plug-ins as package.module:Class)",
        )
    return parser


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


def usage_exit(prog: str, exc: Exception) -> NoReturn:
    print(f"{prog}: error: {error_text(exc)}", file=sys.stderr, flush=True)
    sys.exit(USAGE_STATUS)


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
    from fleet_rebalance.replay.engine import OBSERVED

    for name in names.split(","):
        if name == OBSERVED:
            continue
        try:
            get_assignor(name)
        except ValueError as exc:
            raise UsageError(f"--assignors: {error_text(exc)}") from None
