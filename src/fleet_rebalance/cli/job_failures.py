"""Which failures are expected (the user can act on them) and the one line each gets."""

from __future__ import annotations

import re
import sys

from fleet_rebalance.config import one_line
from fleet_rebalance.errors import NO_RAW_ROOT_HINT, JobFailed, error_text

# Exceptions whose message names what went wrong in terms the user can act on.
PATH_ERRORS = (
    FileNotFoundError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
    FileExistsError,
)
# delta-spark's names for a commit that lost to a concurrent transaction.
DELTA_SPARK_CONFLICT = re.compile(
    r"\bDELTA_(?:CONCURRENT_\w+|METADATA_CHANGED|PROTOCOL_CHANGED)\b"
    r"|io\.delta\.exceptions\.(?:Concurrent\w+|MetadataChanged|ProtocolChanged)Exception"
)
CONFLICT_HINT = (
    "another run wrote these tables at the same time and this one committed nothing; "
    "run it again once the other has finished"
)


def failure_line(exc: BaseException) -> str | None:
    """The one line for an expected failure (what went wrong and what to do), or None
    for a bug, which keeps its traceback. A wrapper raised `from` an expected failure
    (nightly's StepFailed) is one too, and keeps its own text (it names the step)."""
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 8:
        hint = _expected_hint(cause)
        if hint is not None:
            text = error_text(exc)
            return one_line(f"{text}; {hint}" if hint else text)
        cause, seen = cause.__cause__, seen + 1
    return None


def _expected_hint(exc: BaseException) -> str | None:
    """'' for an expected failure whose text says it all, a hint to add, or None."""
    if isinstance(exc, JobFailed):
        return ""
    if _is_commit_conflict(exc):
        return CONFLICT_HINT
    if isinstance(exc, PATH_ERRORS):
        if str(exc).startswith("no capture files for"):
            return "pass --date with a date that has captures, or --raw-root"
        if str(exc).startswith("raw_root "):
            return NO_RAW_ROOT_HINT
        return ""
    errors = sys.modules.get("fleet_rebalance.storage.errors")
    if errors and isinstance(exc, errors.TableNotFoundError):
        return "run ./spark-submit.sh ingest (or nightly) first, or pass --warehouse where it is"
    return None


def _is_commit_conflict(exc: BaseException) -> bool:
    # Looked up, not imported: storage pulls in pyspark, and a failure before the job
    # imported it cannot be one of its errors.
    errors = sys.modules.get("fleet_rebalance.storage.errors")
    if errors is not None and isinstance(exc, errors.CommitConflictError):
        return True
    return type(exc).__module__.startswith(("pyspark", "py4j")) and bool(
        DELTA_SPARK_CONFLICT.search(str(exc))
    )
