"""What a parser knows of its file besides the lines, from its path and the job's config.

Every parser takes the same context (chunks.py hands it to each chunk of a file);
`common` holds the columns every row of the file carries (cluster, captured_at,
capture_date, source_file), so a parser adds them to its rows as they are made.
"""

from __future__ import annotations

from typing import Any, TypedDict


class ParseContext(TypedDict):
    # The group of layouts without GROUP column, from the path's (?P<group>...) part.
    group: str | None
    log_timezone: str | None  # capture.log_timezone: broker logs' local time zone
    common: dict[str, Any]
