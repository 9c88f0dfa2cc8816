"""The checks of one entry of a local tree from its lstat (a link's from its target's
stat), without opening it: the listing classifies with them, and every read repeats them
since the entry may have changed in between."""

from __future__ import annotations

import errno
import os
import stat

from fleet_rebalance.capture.store.entries import (
    LINK_DANGLING,
    LINK_LOOP,
    LINK_OUTSIDE,
    LINK_TO_DIRECTORY,
    UNREADABLE,
    os_reason,
)

Verdict = tuple[int | None, str | None]  # size, why it is not read

_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def local_verdict(path: str, info: os.stat_result, real_root: str) -> Verdict:
    """(size, why not read) of a local non-directory entry from its lstat; the target's
    stat for a link. Nothing is opened."""
    if stat.S_ISLNK(info.st_mode):
        return _link_verdict(path, real_root)
    if not stat.S_ISREG(info.st_mode):
        return None, f"not a regular file ({type_name(info.st_mode)}): never opened"
    return info.st_size, None if permitted(path) else UNREADABLE


def _link_verdict(path: str, real_root: str) -> Verdict:
    if not inside(os.path.realpath(path), real_root):
        return None, LINK_OUTSIDE
    try:
        target = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, LINK_LOOP
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None, LINK_DANGLING
        return None, f"symbolic link cannot be followed: {os_reason(exc)}"
    if stat.S_ISDIR(target.st_mode):
        return None, LINK_TO_DIRECTORY
    if not stat.S_ISREG(target.st_mode):
        kind = type_name(target.st_mode)
        return None, f"symbolic link to {kind}, not a regular file: never opened"
    return target.st_size, None if permitted(path) else UNREADABLE


def permitted(path: str) -> bool:
    """Whether this process may read the file, asked without opening it."""
    return os.access(path, os.R_OK)


def inside(real: str, real_root: str) -> bool:
    """Whether a resolved path is raw_root's resolved path or below it."""
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def type_name(mode: int) -> str:
    """What a special file is, for a reason: "a FIFO", "a socket", ..."""
    return next((name for test, name in _FILE_TYPES if test(mode)), "a special file")
