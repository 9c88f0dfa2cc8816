"""What every jobs/*.py runs: its flags, logging, main, and the documented exit status.

Logs go to stderr (and to --log-file), never to stdout. An expected failure ends with
one line naming the problem and what to do (job_failures.failure_line), its traceback in
the log file, and on stderr with --verbose; anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from fleet_rebalance.cli.driver_stderr import own_stderr
from fleet_rebalance.cli.exit_status import FAILED_STATUS, INTERRUPTED_STATUS, usage_exit
from fleet_rebalance.cli.job_failures import failure_line
from fleet_rebalance.cli.job_parser import job_parser
from fleet_rebalance.config import ConfigError
from fleet_rebalance.errors import UsageError, error_text

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger("fleet_rebalance")

# The handlers setup_logging added, removed by the next call (tests run jobs in-process).
_HANDLERS: list[logging.Handler] = []


class _StderrFilter(logging.Filter):
    """Keeps records marked for the log file only (a failure's traceback without
    --verbose) off stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "stderr", True)


def reset_logging() -> None:
    """Removes the handlers setup_logging added: a job run in-process (tests) must not
    leave one writing to a stream that is closed after it."""
    root = logging.getLogger()
    while _HANDLERS:
        handler = _HANDLERS.pop()
        root.removeHandler(handler)
        handler.close()


def setup_logging(job: str, verbose: bool = False, log_file: str | None = None) -> None:
    """INFO (sql: WARNING) or, with --verbose, DEBUG on stderr; everything to log_file."""
    reset_logging()
    root = logging.getLogger()
    formatter = logging.Formatter(LOG_FORMAT)
    quiet = logging.WARNING if job == "sql" else logging.INFO
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(formatter)
    console.setLevel(logging.DEBUG if verbose else quiet)
    console.addFilter(_StderrFilter())
    _HANDLERS.append(console)
    root.addHandler(console)
    root.setLevel(logging.INFO)
    logging.getLogger("fleet_rebalance").setLevel(logging.DEBUG if verbose else logging.INFO)
    # py4j logs its connection's close at INFO, after the failure's line.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    if log_file:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--log-file {log_file}: cannot open: {exc.strerror or exc}") from None
        handler.setFormatter(formatter)
        handler.setLevel(logging.DEBUG)
        _HANDLERS.append(handler)
        root.addHandler(handler)


def run_job(
    job: str, main: Callable[[argparse.Namespace], int], argv: Sequence[str] | None = None
) -> NoReturn:
    """Parse the job's flags, set up logging, run main and exit with the documented
    status: 0 done, 1 failed, 2 a command line or conf that cannot be run."""
    own_stderr()
    try:
        args = job_parser(job).parse_args(argv)
        setup_logging(job, args.verbose, args.log_file)
    except UsageError as exc:
        usage_exit(job, exc)
    try:
        status = main(args)
    except (UsageError, ConfigError) as exc:
        usage_exit(job, exc)
    except KeyboardInterrupt:
        print(f"{job}: interrupted", file=sys.stderr, flush=True)
        status = INTERRUPTED_STATUS
    except Exception as exc:
        status = report_failure(job, exc, verbose=args.verbose)
    sys.exit(status)


def report_failure(job: str, exc: BaseException, *, verbose: bool) -> int:
    """One line on stderr for an expected failure (its traceback in the log file, and on
    stderr with --verbose); a bug is logged with its traceback. Returns FAILED_STATUS."""
    line = failure_line(exc)
    if line is None:
        log.exception("job failed: %s", error_text(exc))
        return FAILED_STATUS
    log.error("%s failed: %s", job, line, exc_info=exc, extra={"stderr": verbose})
    for handler in logging.getLogger().handlers:
        handler.flush()
    print(f"{job}: {line}", file=sys.stderr, flush=True)
    return FAILED_STATUS
