"""A job's argparse parser, built from the registry: a mistake is one UsageError line,
a mistyped flag, choice or job gets the closest known one."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import NoReturn

from fleet_rebalance.cli.exit_status import EXIT_STATUS_EPILOG
from fleet_rebalance.cli.job_flags import pipeline_flags
from fleet_rebalance.cli.registry import JOBS, PARSED_JOBS
from fleet_rebalance.errors import UsageError

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


def job_parser(job: str) -> JobParser:
    """The flags of one job, for the job itself, its --help and the launcher's checks."""
    entry = JOBS.get(job)
    if entry is None or entry.flags is None:
        raise UsageError(f"unknown job {job!r}{did_you_mean(job, PARSED_JOBS)}")
    parser = JobParser(prog=job, description=entry.description, epilog=EXIT_STATUS_EPILOG)
    entry.flags(parser)
    return parser


def pipeline_parser(prog: str, description: str) -> JobParser:
    """A parser with the pipeline jobs' flags under another name (tests, tools)."""
    parser = JobParser(prog=prog, description=description, epilog=EXIT_STATUS_EPILOG)
    pipeline_flags(parser)
    return parser
