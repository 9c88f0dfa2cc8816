"""This venv on a cluster: packed and shipped to the executors as ./environment, and the
same path made to resolve on a client-mode driver."""

from __future__ import annotations

import sys
from pathlib import Path

from fleet_rebalance.errors import UsageError

PACKED_VENV = ".venv.tar.gz"


def link_driver_environment(venv: Path, cwd: Path) -> None:
    """In client mode, make ./environment/bin/python resolve on the driver too.

    Spark runs a Python Data Source's planning (our delta-rs writer's setup) in a Python
    worker on the driver, with the executors' interpreter path; on a cluster that path
    is ./environment/bin/python inside the shipped archive, which the driver's working
    directory does not have. A symlink to this venv there fills the gap.
    """
    link = cwd / "environment"
    if link.is_symlink() and link.resolve() == venv.resolve():
        return
    if link.exists() or link.is_symlink():
        raise UsageError(
            f"{link} exists and is not a link to {venv}: client mode on a cluster needs "
            "./environment for the driver's Python workers; remove it or run from "
            "another directory"
        )
    link.symlink_to(venv, target_is_directory=True)


def pack_venv(venv: Path, archive: Path) -> None:
    """Ship the exact interpreter and packages to executors (Spark's venv-pack recipe)."""
    stamp = venv / ".fleet-installed"
    if archive.exists() and stamp.exists() and archive.stat().st_mtime >= stamp.stat().st_mtime:
        return
    try:
        import venv_pack
    except ImportError as exc:
        raise UsageError(
            "cluster mode needs venv-pack: it is installed with the cluster "
            "extra; remove .venv/.fleet-deps and run again"
        ) from exc
    print(f"packing {venv} into {archive} for the executors", file=sys.stderr)
    venv_pack.pack(prefix=str(venv), output=str(archive), force=True, verbose=False)
