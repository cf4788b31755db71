"""Explicit dates found in text ("3 April 2005", "April 2005", "2005-04", "2005") as time values."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from temporag.timeutil.values import TimeValue, make_time

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
