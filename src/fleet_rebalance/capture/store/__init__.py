"""Raw captures on any store: list them, tell broker logs by their first bytes, read them.

Object stores go through the store's pyarrow filesystem (filesystems.Location), so the
driver lists and the executors read the same files whether raw_root is a local path or
an object store. Spark-free: the executors import it.

Hostile entries (issue 19). A local tree may hold what an object store cannot: FIFOs,
sockets, devices, symbolic links (looping, dangling, or leading out of raw_root),
unreadable files, names that are not UTF-8. The listing classifies every entry from
its lstat (and, for a link, the stat of its target) without opening anything, and
reports the ones ingest cannot or must not read with the reason (`RawFile.skipped`,
status `skipped` in ingested_files) instead of failing or blocking:
- only regular files are ever opened; a FIFO would block the open forever, a device
  may act on being opened;
- a symbolic link is read only when it resolves to a regular file inside raw_root; one
  leading outside is not followed (its target is neither read nor named); links to
  directories are not entered (a link to an ancestor would never end);
- hidden entries (a name starting with '.': an uploader's partial file, a staging
  directory) are reported, never read; a hidden directory is one entry, not entered;
- a name that is not UTF-8 is reported under an escaped spelling (b'\\xff.txt' as the
  text `\\xff.txt`), never read: no table column can hold it as it is;
- a directory that cannot be listed is one entry with the reason.
Every read checks the entry again (it may have changed since the listing) and opens it
non-blocking, refusing what fstat says is not a regular file: UnreadableFile carries
the reason and the status, `skipped` when the file could not be opened, and
`failed_capture` when reading failed mid-way (part of a capture was there and is lost).

By role:
- entries.py: RawFile, UnreadableFile and the reasons an entry is not read;
- local_checks.py: one local entry judged from its lstat, by the listing and each read;
- listing.py: discover and survey, on an object store or a local tree;
- log_kinds.py: broker logs told by their first bytes, read only where a choice needs it;
- reading.py: a capture opened, read or hashed for the parse tasks.
"""

from fleet_rebalance.capture.store.entries import (
    HIDDEN_DIRECTORY,
    HIDDEN_FILE,
    LINK_DANGLING,
    LINK_LOOP,
    LINK_OUTSIDE,
    LINK_TO_DIRECTORY,
    UNDECODABLE_NAME,
    UNREADABLE,
    RawFile,
    UnreadableFile,
)
from fleet_rebalance.capture.store.listing import discover, survey
from fleet_rebalance.capture.store.log_kinds import (
    HEAD_BYTES,
    is_log_head,
    latest_capture_date,
    needs_kind,
    sniff,
    with_log_kinds,
)
from fleet_rebalance.capture.store.reading import open_capture, read_capture, sha256

__all__ = [
    "HEAD_BYTES",
    "HIDDEN_DIRECTORY",
    "HIDDEN_FILE",
    "LINK_DANGLING",
    "LINK_LOOP",
    "LINK_OUTSIDE",
    "LINK_TO_DIRECTORY",
    "UNDECODABLE_NAME",
    "UNREADABLE",
    "RawFile",
    "UnreadableFile",
    "discover",
    "is_log_head",
    "latest_capture_date",
    "needs_kind",
    "open_capture",
    "read_capture",
    "sha256",
    "sniff",
    "survey",
    "with_log_kinds",
]
