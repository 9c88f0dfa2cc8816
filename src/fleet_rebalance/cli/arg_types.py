"""argparse value types: each refuses a value in one line saying what it expected."""

from __future__ import annotations

import argparse
import calendar
import datetime as dt
import re
from collections.abc import Callable

from fleet_rebalance.config import shown

# A run date's previous day (the replay's carried-over state) and next day (the end of
# its window) must exist, and captures are stamped in Unix time.
FIRST_DATE = dt.date(1970, 1, 2)
LAST_DATE = dt.date(9999, 12, 30)
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def iso_date(text: str) -> dt.date:
    """A YYYY-MM-DD date from FIRST_DATE to LAST_DATE."""
    # fromisoformat alone would also take 20261120 and 2026-W47-5.
    if not ISO_DATE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, found {shown(text)}")
    try:
        date = dt.date.fromisoformat(text)
    except ValueError:  # 2026-02-30: the right form, a day that does not exist
        raise argparse.ArgumentTypeError(impossible_day(text)) from None
    problem = date_problem(date)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return date


def impossible_day(text: str) -> str:
    """Why a YYYY-MM-DD text names no day: its month, or its month's length."""
    year, month, day = (int(part) for part in text.split("-"))
    if not 1 <= month <= 12:
        return f"no such day {text}: there is no month {month:02d} (01 to 12)"
    if year < 1:
        return f"expected a date from {FIRST_DATE} to {LAST_DATE}, found {text}"
    if day == 0:
        return f"no such day {text}: days start at 01"
    days = calendar.monthrange(year, month)[1]
    return f"no such day {text}: {calendar.month_name[month]} {year} has {days} days"


def date_problem(date: dt.date) -> str | None:
    """Why a run cannot process `date` (outside FIRST_DATE..LAST_DATE), or None."""
    if FIRST_DATE <= date <= LAST_DATE:
        return None
    return f"expected a date from {FIRST_DATE} to {LAST_DATE}, found {date.isoformat()}"


def non_empty(what: str) -> Callable[[str], str]:
    """An argparse type refusing an empty or blank value: `--raw-root ""` (an unset
    variable in a scheduler's template) must not fall back to the conf's value."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {what}, found {shown(text)}")
        return text

    return check


def bounded_int(low: int) -> Callable[[str], int]:
    """An argparse type for a count of at least `low`; the generator would otherwise
    loop forever or write nothing."""

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, found {shown(text)}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, found {value}")
        return value

    return check


def positive_float(text: str) -> float:
    """A finite number > 0 (generate's --hours)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, found {shown(text)}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, found {shown(text)}")
    return value


def utc_minute(text: str) -> dt.datetime:
    """A UTC minute, YYYY-MM-DDTHH:MMZ (generate's --start)."""
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%MZ").replace(tzinfo=dt.UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected YYYY-MM-DDTHH:MMZ (UTC), found {shown(text)}"
        ) from None
