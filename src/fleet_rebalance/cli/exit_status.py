"""The documented exit statuses of every job and of the launcher, and the usage exit.

A mistake is one line and a documented exit status: USAGE_STATUS (2, nothing was run)
for a flag, conf value or path that cannot be used (UsageError, ConfigError),
FAILED_STATUS (1) for a run that failed for a reason the user can act on (JobFailed).
"""

from __future__ import annotations

import sys
from typing import NoReturn

from fleet_rebalance.errors import error_text

USAGE_STATUS = 2
FAILED_STATUS = 1
INTERRUPTED_STATUS = 130  # the shell's status for SIGINT
EXIT_STATUS_EPILOG = (
    "exit status: 0 done; 1 the run failed (one line on stderr; the traceback with "
    "--verbose or in --log-file); 2 a flag, the conf or a path cannot be used (nothing run)"
)


def usage_exit(prog: str, exc: Exception) -> NoReturn:
    """`prog: error: <one line>` on stderr and exit USAGE_STATUS."""
    print(f"{prog}: error: {error_text(exc)}", file=sys.stderr, flush=True)
    sys.exit(USAGE_STATUS)
