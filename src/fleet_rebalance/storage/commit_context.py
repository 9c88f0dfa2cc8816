"""Who made a commit: the run's context (job, run id, run date, and a write's own facts)
as a Delta commit records it, the same way for both engines.

Delta's CommitInfo reserves field names for its own use (`job` and `notebook` are
structs there, `clusterId`, `userId`, `isolationLevel` ... have their meaning), so a
custom top-level key can make a table unreadable to Spark's Delta connector. The context
is the commit's `userMetadata` instead: a JSON object in a string field both engines
write and read. Commits of earlier runs carry it top-level; reading takes either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

USER_METADATA = "userMetadata"


def commit_metadata(context: Mapping[str, Any]) -> dict[str, str]:
    """The commitInfo fields that record `context`."""
    return {USER_METADATA: json.dumps(dict(context), sort_keys=True, default=str)}


def commit_context(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A history entry's (or commitInfo's) context: its userMetadata object over its
    top-level fields (earlier runs wrote the context there)."""
    try:
        metadata = json.loads(entry.get(USER_METADATA) or "{}")
    except (TypeError, ValueError):
        metadata = {}
    return {**entry, **(metadata if isinstance(metadata, Mapping) else {})}
