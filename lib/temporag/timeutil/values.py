"""Time values: ISO dates with their granularity, and calendar days as integers.

A "2005-04" answer is a month, not 2005-04-01: keeping the granularity is what lets the MultiTQ rule
truncate predictions and lets anchors cover whole periods.  Days are counted since 1970-01-01 so that
periods, intervals and calendar arithmetic all work on plain integers.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

import numpy as np

from temporag.timeutil.allen import Interval

_ISO = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")


def _day(y: int, m: int, d: int) -> int:
    return int(np.datetime64(f"{y:04d}-{m:02d}-{d:02d}", "D").astype(np.int64))


@dataclass(frozen=True, order=True)
class TimeValue:
    """A calendar period: its first and last day (days since 1970-01-01) and its granularity."""

    first_day: int
    last_day: int
    granularity: str

    @property
    def iso(self) -> str:
        text = str(np.datetime64(self.first_day, "D"))
        return {"year": text[:4], "month": text[:7], "day": text}[self.granularity]

    def contains_day(self, day: int) -> bool:
        return self.first_day <= day <= self.last_day

    def interval(self) -> Interval:
        return Interval(self.first_day, self.last_day + 1)

    def __str__(self) -> str:
        return self.iso


def make_time(year: int, month: int | None = None, day: int | None = None) -> TimeValue:
    """The period of a year, a month or a day; raises ValueError for impossible dates."""
    if month is None:
        return TimeValue(_day(year, 1, 1), _day(year, 12, 31), "year")
    if not 1 <= month <= 12:
        raise ValueError(f"month {month} out of range")
    if day is None:
        return TimeValue(
            _day(year, month, 1), _day(year, month, calendar.monthrange(year, month)[1]), "month"
        )
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError(f"day {day} out of range for {year}-{month:02d}")
    d = _day(year, month, day)
    return TimeValue(d, d, "day")


def parse_time(text: str) -> TimeValue:
    """'2005' → year, '2005-04' → month, '2005-04-03' → day (ISO forms only)."""
    m = _ISO.match(str(text).strip())
    if not m:
        raise ValueError(f"not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD): {text!r}")
    y, mo, d = m.groups()
    return make_time(int(y), int(mo) if mo else None, int(d) if d else None)


def try_parse_time(text: str) -> TimeValue | None:
    try:
        return parse_time(text)
    except ValueError:
        return None


def truncate_to(text: str, granularity: str) -> str:
    """Cut an ISO date to a coarser granularity ('2005-04-03', 'month' → '2005-04')."""
    return text[: {"year": 4, "month": 7, "day": 10}[granularity]]


def iso_day(day: int) -> str:
    """Days since 1970-01-01 → 'YYYY-MM-DD'."""
    return str(np.datetime64(int(day), "D"))


def day_of(iso: str) -> int:
    """'YYYY-MM-DD' → days since 1970-01-01: the kit's one ISO-to-day parser (KG files, questions, units).

    Strict about the granularity: a year or a month names a period, so "2005-04" is a ValueError rather
    than its first day, and so is an impossible day ("2005-02-29") or a timestamp with hours."""
    value = parse_time(iso)
    if value.granularity != "day":
        raise ValueError(f"expected a day YYYY-MM-DD, got {iso!r}")
    return value.first_day


def _ymd(day: int) -> tuple[int, int, int]:
    y, m, d = (int(x) for x in iso_day(day).split("-"))
    return y, m, d
