"""Time: ISO values with granularity, day intervals, Allen's interval algebra, time mentions in text.

This is the kit's one time parser.  A "2005-04" answer is a month, not 2005-04-01: keeping the
granularity is what lets the MultiTQ rule truncate predictions and lets anchors cover whole periods.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from enum import Enum

import numpy as np

GRANULARITIES = ("day", "month", "year")
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


def granularity_of(text: str) -> str | None:
    value = try_parse_time(text)
    return value.granularity if value else None


def truncate_to(text: str, granularity: str) -> str:
    """Cut an ISO date to a coarser granularity ('2005-04-03', 'month' → '2005-04')."""
    return text[: {"year": 4, "month": 7, "day": 10}[granularity]]


# -- intervals and Allen's algebra ---------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A half-open day interval [start, end): a single day d is [d, d+1), so points are proper
    intervals and exactly one Allen relation holds between any two."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ValueError(f"empty interval [{self.start}, {self.end})")

    @classmethod
    def days(cls, first_day: int, last_day: int) -> Interval:
        """The closed day range [first_day, last_day] as a half-open interval."""
        return cls(first_day, last_day + 1)


class Allen(str, Enum):
    BEFORE = "before"
    MEETS = "meets"
    OVERLAPS = "overlaps"
    STARTS = "starts"
    DURING = "during"
    FINISHES = "finishes"
    EQUALS = "equals"
    FINISHED_BY = "finished-by"
    CONTAINS = "contains"
    STARTED_BY = "started-by"
    OVERLAPPED_BY = "overlapped-by"
    MET_BY = "met-by"
    AFTER = "after"

    @property
    def inverse(self) -> Allen:
        return _INVERSE[self]


ALLEN_RELATIONS: tuple[Allen, ...] = tuple(Allen)
_INVERSE = {
    Allen.BEFORE: Allen.AFTER,
    Allen.MEETS: Allen.MET_BY,
    Allen.OVERLAPS: Allen.OVERLAPPED_BY,
    Allen.STARTS: Allen.STARTED_BY,
    Allen.DURING: Allen.CONTAINS,
    Allen.FINISHES: Allen.FINISHED_BY,
    Allen.EQUALS: Allen.EQUALS,
}
_INVERSE.update({v: k for k, v in list(_INVERSE.items())})


def allen_relation(a: Interval, b: Interval) -> Allen:
    """The one Allen relation that holds from ``a`` to ``b``."""
    if a.end < b.start:
        return Allen.BEFORE
    if a.end == b.start:
        return Allen.MEETS
    if b.end < a.start:
        return Allen.AFTER
    if b.end == a.start:
        return Allen.MET_BY
    # the intervals share at least one instant
    if a.start == b.start and a.end == b.end:
        return Allen.EQUALS
    if a.start == b.start:
        return Allen.STARTS if a.end < b.end else Allen.STARTED_BY
    if a.end == b.end:
        return Allen.FINISHES if a.start > b.start else Allen.FINISHED_BY
    if b.start < a.start and a.end < b.end:
        return Allen.DURING
    if a.start < b.start and b.end < a.end:
        return Allen.CONTAINS
    return Allen.OVERLAPS if a.start < b.start else Allen.OVERLAPPED_BY


def allen_holds(rel: Allen, a: Interval, b: Interval) -> bool:
    """Each relation's own definition (independent of ``allen_relation``'s decision order)."""
    s1, e1, s2, e2 = a.start, a.end, b.start, b.end
    return {
        Allen.BEFORE: e1 < s2,
        Allen.MEETS: e1 == s2,
        Allen.OVERLAPS: s1 < s2 < e1 < e2,
        Allen.STARTS: s1 == s2 and e1 < e2,
        Allen.DURING: s2 < s1 and e1 < e2,
        Allen.FINISHES: s2 < s1 and e1 == e2,
        Allen.EQUALS: s1 == s2 and e1 == e2,
        Allen.FINISHED_BY: s1 < s2 and e1 == e2,
        Allen.CONTAINS: s1 < s2 and e2 < e1,
        Allen.STARTED_BY: s1 == s2 and e2 < e1,
        Allen.OVERLAPPED_BY: s2 < s1 < e2 < e1,
        Allen.MET_BY: e2 == s1,
        Allen.AFTER: e2 < s1,
    }[rel]


# -- time mentions in questions ------------------------------------------------------------------

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>1[5-9]\d\d|20\d\d)"
_DAYNUM = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS = [
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})\b(?!-)"),
    re.compile(rf"\b{_DAYNUM}(?:\s+of)?\s+{_MON},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_MON}\s+{_DAYNUM},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_MON},?\s+(?:of\s+)?{_YEAR}\b", re.I),
    re.compile(rf"\b{_YEAR}\b"),
]


@dataclass(frozen=True)
class TimeMention:
    text: str
    start: int
    end: int
    value: TimeValue


def extract_time_mentions(text: str) -> list[TimeMention]:
    """Explicit dates in text, most specific first wins ('April 2005' is a month, not the year 2005)."""
    taken: list[tuple[int, int]] = []
    found: list[TimeMention] = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            g = m.groupdict()
            try:
                year = int(g["year"])
                if g.get("mon"):
                    month = _MONTHS[g["mon"].lower().rstrip(".")]
                elif g.get("month"):
                    month = int(g["month"])
                else:
                    month = None
                day = int(g["day"]) if g.get("day") else None
                value = make_time(year, month, day)
            except (ValueError, KeyError):
                continue
            taken.append((m.start(), m.end()))
            found.append(TimeMention(m.group(0), m.start(), m.end(), value))
    return sorted(found, key=lambda t: t.start)
