"""A Python driver under spark-submit writes its logs to the user's stderr, not stdout.

spark-submit's JVM merges the driver's stderr into its own stdout, which carries only
results (the nightly summary, SQL rows).
"""

from __future__ import annotations

import os
import stat
import sys

# Set by the launcher to its pid, which the JVM inherits (spark-submit execs java) and
# which is therefore the Python driver's parent: see own_stderr.
LAUNCHER_PID_ENV = "FLEET_LAUNCHER_PID"


def own_stderr() -> None:
    """Write this driver's stderr (logs, tracebacks) to the launcher's stderr.

    spark-submit runs a Python driver with stdout and stderr on one pipe that the JVM
    copies to its stdout, so logs would be mixed with the results. The JVM is the process
    the launcher exec'd into, so its own fd 2 is the user's stderr: reopened here by
    /proc (appending; the launcher set O_APPEND on a regular file). Only when the parent
    is that launcher (its pid in LAUNCHER_PID_ENV) and the platform has /proc."""
    expected = os.environ.get(LAUNCHER_PID_ENV)
    if not expected or expected != str(os.getppid()):
        return
    try:
        fd = os.open(f"/proc/{expected}/fd/2", os.O_WRONLY | os.O_APPEND)
    except OSError:
        return  # a socket (journald), no /proc: stderr stays with stdout
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


def append_on_regular_stderr() -> None:
    """Launcher side of own_stderr: two descriptions of one regular file (the JVM's fd 2
    and the driver's reopened one) must both append, or one overwrites the other."""
    try:
        if stat.S_ISREG(os.fstat(2).st_mode):
            import fcntl

            fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_APPEND)
    except OSError:
        pass
