"""Calendar arithmetic: offsets ("3 years and 2 months"), shifted days and intervals, and the
early / mid / late sub-periods of IA-RAG's "Fuzzy Time & Interval Table"."""

from __future__ import annotations

import calendar
import re

from temporag.timeutil.values import TimeValue, _day, _ymd

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "several": 3,
    "a few": 2,
}
_NUM = r"(?:\d{1,3}|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several)"
_UNIT = r"(?:day|week|month|year)s?"
_OFFSET = rf"(?P<offset>{_NUM}\s+{_UNIT}(?:\s*(?:,|and)\s*{_NUM}\s+{_UNIT})*)"
#: IA-RAG's "Fuzzy Time & Interval Table": sub-periods of a year (months) and of a month (days)
YEAR_PARTS = {"early": (1, 4), "mid": (5, 8), "late": (9, 12)}
MONTH_PARTS = {"early": (1, 10), "mid": (11, 20), "late": (21, 31)}


def add_calendar(day: int, years: int = 0, months: int = 0, days: int = 0) -> int:
    """Calendar arithmetic: shift a day by whole years / months (day of month clipped) and days."""
    y, m, d = _ymd(day)
    total = (y * 12 + (m - 1)) + years * 12 + months
    y, m = divmod(total, 12)
    m += 1
    d = min(d, calendar.monthrange(y, m)[1])
    return _day(y, m, d) + days


def sub_period(value: TimeValue, part: str) -> tuple[int, int]:
    """Early / mid / late part of a year or a month, as the paper's table maps them (closed days)."""
    y, m, _ = _ymd(value.first_day)
    if value.granularity == "year":
        lo, hi = YEAR_PARTS[part]
        return _day(y, lo, 1), _day(y, hi, calendar.monthrange(y, hi)[1])
    if value.granularity == "month":
        lo, hi = MONTH_PARTS[part]
        return _day(y, m, lo), _day(y, m, min(hi, calendar.monthrange(y, m)[1]))
    return value.first_day, value.last_day


def parse_offset(text: str) -> tuple[int, int, int]:
    """'3 years and 2 months' → (3, 2, 0); weeks count as 7 days."""
    years = months = days = 0
    for n, unit in re.findall(rf"({_NUM})\s+({_UNIT})", text, re.I):
        k = int(n) if n.isdigit() else _NUMBER_WORDS[n.lower()]
        unit = unit.lower().rstrip("s")
        if unit == "year":
            years += k
        elif unit == "month":
            months += k
        elif unit == "week":
            days += 7 * k
        else:
            days += k
    return years, months, days


def shift_interval(first: int, last: int, offset: tuple[int, int, int], sign: int) -> tuple[int, int]:
    """Both ends of a closed interval moved by a calendar offset (sign +1 later, -1 earlier)."""
    y, m, d = offset
    return add_calendar(first, sign * y, sign * m, sign * d), add_calendar(last, sign * y, sign * m, sign * d)
