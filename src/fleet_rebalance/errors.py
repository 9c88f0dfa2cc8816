"""The expected failures every layer may raise, and the one line each is reported in.

Bottom-level (it imports only config's text helpers): the pipeline raises these without
depending on the command line that reports them.
"""

from __future__ import annotations

from fleet_rebalance.config import one_line

NO_RAW_ROOT_HINT = "pass --raw-root with the directory (or URI) the captures are under"


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


def error_text(exc: BaseException) -> str:
    """What a failure message says about exc: its text on one line, or its type when
    str(exc) is empty (a bare OverflowError, an assert), never nothing."""
    text = str(exc).strip()
    return one_line(text) if text else type(exc).__name__
