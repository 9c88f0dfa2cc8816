"""The static-membership what-if of one group's day (DESIGN.md, "Cost of a rebalance").

With `group.instance.id` set, a consumer that restarts and rejoins within
`session.timeout.ms` keeps its place and its partitions: the coordinator starts no
rebalance (KIP-345). So a deploy_restart event would not have happened when it was only
replacements (trigger members_replaced, every member that left paired with the one that
took its place on the same host, client id or instance id: event_matching.replacements)
and each replaced member came back within `timeout`. How long one was away:
- from the log: the first line that shows the new member join minus the first that
  shows the old one leave (a member removed on heartbeat expiration had stopped up to a
  session timeout before that line, so this errs towards "came back in time" by at most
  that much; a new member that joined before the old one left was away 0 s);
- without both lines, from the captures: at most the time between the event's previous
  capture and its own. When that bound exceeds the timeout the return cannot be shown
  and the event is not counted: the what-if only claims savings it can show.
An avoided event saves its paused partitions and paused partition-seconds (added up
per group in static_membership.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from fleet_rebalance.metrics.event_matching import EventCause, Replacement

Times = Mapping[str, tuple[dt.datetime | None, ...]]  # generations.member_times


def avoidable(cause: EventCause, times: Times, timeout: dt.timedelta) -> bool:
    """Would this event not have happened with static membership and `timeout`?"""
    if cause.cause != "deploy_restart" or cause.trigger != "members_replaced":
        return False
    if not cause.only_replacements:
        return False
    return all(_away(p, cause, times) <= timeout for p in cause.replacements)


def _away(pair: Replacement, cause: EventCause, times: Times) -> dt.timedelta:
    joined = times.get(pair.new.member_id, (None, None))[0]
    left = times.get(pair.old.member_id, (None, None))[1]
    if joined is not None and left is not None:
        return max(joined - left, dt.timedelta(0))
    if cause.previous_at is None:
        return dt.timedelta.max
    return cause.at - cause.previous_at
