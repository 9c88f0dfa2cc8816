"""Where a group's section is: one anchor per group, safe whatever its id holds."""

from __future__ import annotations

import hashlib


def anchor(cluster: str, group_id: str) -> str:
    """`g-` and a hash of cluster and id: a valid, unique fragment even for an id full of
    quotes, spaces or bidi controls (the id itself is shown escaped, never used here)."""
    digest = hashlib.sha256(f"{cluster}\x00{group_id}".encode("utf-8", "surrogatepass"))
    return "g-" + digest.hexdigest()[:16]
