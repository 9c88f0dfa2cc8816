"""Group-coordinator lines of a broker's server.log (FORMATS 3), both coordinators.

Every line of GroupCoordinator.scala (1.0 .. 3.9) and of the new coordinator (3.7 ..
4.x: GroupMetadataManager, classic.ClassicGroup) that records a member joining,
leaving, failing or being fenced, or a generation / epoch changing, is an event row;
every other line is structural (counted in the file's notes) or, when damaged,
quarantined with the reason. By role:
- messages.py: what the coordinators log, by release (EVENTS, KNOWN_NO_FACT, loggers);
- log4j.py: the log4j line, bare or behind a docker-compose or grep prefix;
- reader.py: parse_coordinator_log, a log's lines as coordinator_events rows.
"""

from fleet_rebalance.capture.coordinator_log.log4j import is_log_line
from fleet_rebalance.capture.coordinator_log.reader import (
    NO_FACT,
    UNKNOWN_LINE,
    UNMATCHED_GROUP_LINE,
    parse_coordinator_log,
)

__all__ = [
    "NO_FACT",
    "UNKNOWN_LINE",
    "UNMATCHED_GROUP_LINE",
    "is_log_line",
    "parse_coordinator_log",
]
