"""This venv on a cluster: packed and shipped to the executors as ./environment."""

from __future__ import annotations

import sys
from pathlib import Path

from fleet_rebalance.errors import UsageError

PACKED_VENV = ".venv.tar.gz"


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
