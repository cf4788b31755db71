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


# -- temporal expressions in documents (closed day intervals with a fuzzy flag) --------------------
#
# IA-RAG (appendix I, Figs. 7 and 9) normalises every time expression of a document into a closed
# interval [t_start, t_end] plus a FuzzyFlag, with conversion tables: exact day / month / year,
# explicit intervals, "until X" (start unknown), early / mid / late / around, relative dates by
# calendar arithmetic.  The tables are implemented here, once, on top of the mention patterns above,
# so the offline extractor, the question-window parser and any later method share one reading.

_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "several": 3, "a few": 2,
}
_NUM = r"(?:\d{1,3}|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several)"
_UNIT = r"(?:day|week|month|year)s?"
_OFFSET = rf"(?P<offset>{_NUM}\s+{_UNIT}(?:\s*(?:,|and)\s*{_NUM}\s+{_UNIT})*)"
_RELATIVE = re.compile(rf"\b{_OFFSET}\s+(?P<dir>later|after|afterwards|earlier|before|prior to|ago)\b", re.I)
_ANAPHORIC = re.compile(
    r"\b(?P<phrase>later (?:that|the same|in the) year|(?:the|in the) (?:following|next|same|previous|"
    r"preceding) year|(?:in )?that (?:same )?year|the year after|the year before)\b",
    re.I,
)
_DECADE = re.compile(r"\b(?:(?P<part>early|mid|late)[\s-]+)?(?P<decade>1[5-9]\d0|20\d0)'?s\b", re.I)
_YEAR_RANGE = re.compile(
    r"\b(?P<y1>1[5-9]\d\d|20\d\d)\s*(?:–|—|-|/)\s*(?P<y2>\d{2}|1[5-9]\d\d|20\d\d)\b(?!-)"
)
_PART = re.compile(r"(?:\b(?:in|during|by|until|since|from|the)\s+)?\b(?P<part>early|mid|late|around|circa|"
                   r"c\.|ca\.|about|approximately|until|till|up to|through|by|since|before|prior to|"
                   r"after)[\s-]*(?:the\s+|of\s+)?$", re.I)
_RANGE_JOIN = re.compile(r"^\s*(?:–|—|-|to|until|till|through|and)\s*$", re.I)
_FUZZY_PARTS = {"around", "circa", "c.", "ca.", "about", "approximately"}
_BOUNDS = {"until": "until", "till": "until", "up to": "until", "through": "until", "by": "until",
           "since": "since", "before": "before", "prior to": "before", "after": "after"}
#: IA-RAG's "Fuzzy Time & Interval Table": sub-periods of a year (months) and of a month (days)
YEAR_PARTS = {"early": (1, 4), "mid": (5, 8), "late": (9, 12)}
MONTH_PARTS = {"early": (1, 10), "mid": (11, 20), "late": (21, 31)}


def iso_day(day: int) -> str:
    """Days since 1970-01-01 → 'YYYY-MM-DD'."""
    return str(np.datetime64(int(day), "D"))


def day_of(iso: str) -> int:
    """'YYYY-MM-DD' → days since 1970-01-01 (ValueError for anything else)."""
    value = parse_time(iso)
    if value.granularity != "day":
        raise ValueError(f"expected a day YYYY-MM-DD, got {iso!r}")
    return value.first_day


def _ymd(day: int) -> tuple[int, int, int]:
    y, m, d = (int(x) for x in iso_day(day).split("-"))
    return y, m, d


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


@dataclass(frozen=True)
class TimeExpression:
    """A time expression of a text normalised to a closed day interval; ``None`` bounds are unknown.

    ``rule`` is the row of IA-RAG's conversion tables that produced it (A day, B month, C year,
    D explicit interval, E "until X", F early/mid/late/around, G relative date), ``kind`` the form."""

    text: str
    start: int
    end: int
    first_day: int | None
    last_day: int | None
    fuzzy: bool
    kind: str
    rule: str
    offset: tuple[int, int, int] | None = None  # (years, months, days) of a relative expression

    @property
    def t_start(self) -> str:
        return "unknown" if self.first_day is None else iso_day(self.first_day)

    @property
    def t_end(self) -> str:
        return "unknown" if self.last_day is None else iso_day(self.last_day)


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


def _plain(m: TimeMention) -> TimeExpression:
    rule = {"day": "A", "month": "B", "year": "C"}[m.value.granularity]
    return TimeExpression(m.text, m.start, m.end, m.value.first_day, m.value.last_day, False,
                          m.value.granularity, rule)


def _bounded(text: str, m: TimeMention, word: str, start: int) -> TimeExpression:
    """'until X' / 'since X' / 'before X' / 'after X': one end known, the other unknown, fuzzy."""
    kind = _BOUNDS[word]
    first = last = None
    if kind == "until":
        last = m.value.last_day
    elif kind == "since":
        first = m.value.first_day
    elif kind == "before":
        last = m.value.first_day - 1
    else:
        first = m.value.last_day + 1
    return TimeExpression(text[start : m.end], start, m.end, first, last, True, kind, "E")


def extract_time_expressions(text: str, reference: TimeExpression | None = None) -> list[TimeExpression]:
    """Every time expression of ``text`` as a closed interval with IA-RAG's fuzzy flag, in text order.

    ``reference`` is the last explicit date before ``text`` (the paper's reference-time stack top); it
    anchors relative expressions ("two years later", "the following year").  A plain year comes back
    with ``fuzzy=False``: whether it is a point event (fuzzy) or a state depends on the sentence, which
    the caller decides (:func:`year_is_fuzzy`)."""
    out: list[TimeExpression] = []
    taken: list[tuple[int, int]] = []

    def free(s: int, e: int) -> bool:
        return not any(s < te and ts < e for ts, te in taken)

    def add(expr: TimeExpression) -> None:
        out.append(expr)
        taken.append((expr.start, expr.end))

    for m in _YEAR_RANGE.finditer(text):  # 1995–1998, 1995-98, 2003-05
        y1, y2 = int(m["y1"]), m["y2"]
        y2i = int(y2) if len(y2) == 4 else (y1 // 100) * 100 + int(y2)
        if y2i <= y1 or y2i - y1 > 60:
            continue
        s = m.start()
        pre = text[max(0, s - 5) : s].lower()
        s = s - 5 + pre.index("from") if "from" in pre else s
        add(TimeExpression(text[s : m.end()], s, m.end(), make_time(y1).first_day, make_time(y2i).last_day,
                           False, "interval", "D"))
    for m in _DECADE.finditer(text):
        if not free(m.start(), m.end()):
            continue
        d = int(m["decade"])
        first, last = make_time(d).first_day, make_time(d + 9).last_day
        if m["part"]:
            lo = {"early": 0, "mid": 3, "late": 7}[m["part"].lower()]
            width = 2 + (m["part"].lower() != "mid")
            first, last = make_time(d + lo).first_day, make_time(d + lo + width).last_day
        add(TimeExpression(m.group(0), m.start(), m.end(), first, last, True, "decade", "F"))
    mentions = [t for t in extract_time_mentions(text) if free(t.start, t.end)]
    used: set[int] = set()
    for i, m in enumerate(mentions):  # explicit intervals: [from] X – Y, between X and Y
        if i in used or i + 1 >= len(mentions):
            continue
        n = mentions[i + 1]
        join = text[m.end : n.start]
        if not _RANGE_JOIN.match(join) or n.value.last_day < m.value.first_day:
            continue
        before = text[max(0, m.start - 9) : m.start].lower()
        if join.strip().lower() == "and" and "between" not in before:
            continue
        s = m.start
        for word in ("between ", "from "):
            if before.endswith(word):
                s = m.start - len(word)
        add(TimeExpression(text[s : n.end], s, n.end, m.value.first_day, n.value.last_day, False,
                           "interval", "D"))
        used.update({i, i + 1})
    rel_spans = [(r.start(), r.end(), r) for r in _RELATIVE.finditer(text)]
    for i, m in enumerate(mentions):
        if i in used:
            continue
        head = text[max(0, m.start - 24) : m.start]
        pm = _PART.search(head)
        offset_before = next((r for s, e, r in rel_spans if 0 <= m.start - e <= 1), None)
        if offset_before is not None and offset_before["dir"].lower() in ("after", "before", "prior to"):
            sign = -1 if offset_before["dir"].lower() in ("before", "prior to") else 1
            off = parse_offset(offset_before["offset"])
            first, last = shift_interval(m.value.first_day, m.value.last_day, off, sign)
            s = offset_before.start()
            add(TimeExpression(text[s : m.end], s, m.end, first, last, False, "offset", "G", off))
            continue
        if pm is None:
            add(_plain(m))
            continue
        word = pm["part"].lower()
        s = m.start - len(head) + pm.start("part")
        if word in YEAR_PARTS:
            first, last = sub_period(m.value, word)
            add(TimeExpression(text[s : m.end], s, m.end, first, last, True, word, "F"))
        elif word in _FUZZY_PARTS:
            value = m.value
            add(TimeExpression(text[s : m.end], s, m.end, value.first_day, value.last_day, True, "around",
                               "F"))
        else:
            add(_bounded(text, m, word, s))
    anchor = reference
    for expr in sorted(out, key=lambda e: e.start):
        anchor = expr if expr.first_day is not None and expr.last_day is not None else anchor
    for r in list(_RELATIVE.finditer(text)) + list(_ANAPHORIC.finditer(text)):
        if not free(r.start(), r.end()):
            continue
        prior = [e for e in out if e.end <= r.start() and e.first_day is not None and e.last_day is not None]
        base = prior[-1] if prior else reference
        if base is None or base.first_day is None or base.last_day is None:
            continue
        add(_relative(r, base))
    return sorted(out, key=lambda e: e.start)


def _relative(r: re.Match, base: TimeExpression) -> TimeExpression:
    """Rule G: a relative date resolved against ``base`` by calendar arithmetic."""
    if "phrase" in r.groupdict() and r["phrase"]:
        phrase = r["phrase"].lower()
        y = _ymd(base.first_day)[0]
        if "following" in phrase or "next" in phrase or "year after" in phrase:
            y += 1
        elif "previous" in phrase or "preceding" in phrase or "year before" in phrase:
            y -= 1
        value = make_time(y)
        fuzzy = base.fuzzy or phrase.startswith("later")
        first = value.first_day
        inside = base.last_day is not None and value.first_day <= base.last_day <= value.last_day
        if phrase.startswith("later") and inside:
            first = base.first_day
        return TimeExpression(r.group(0), r.start(), r.end(), first, value.last_day, fuzzy, "relative", "G")
    off = parse_offset(r["offset"])
    sign = -1 if r["dir"].lower() in ("earlier", "before", "prior to", "ago") else 1
    first, last = shift_interval(base.first_day, base.last_day, off, sign)
    return TimeExpression(r.group(0), r.start(), r.end(), first, last, base.fuzzy, "relative", "G", off)


_POINT_EVENT = re.compile(
    r"\b(?:join(?:ed|s)?|appoint(?:ed|s)?|elect(?:ed|s)?|born|died|married|sign(?:ed|s)|found(?:ed|s)|"
    r"establish(?:ed|es)|beg(?:a|i)n[s]?|start(?:ed|s)|won|win[s]?|mov(?:ed|es)|graduat(?:ed|es)|became|"
    r"become[s]?|named|hired|retir(?:ed|es)|resign(?:ed|s)|releas(?:ed|es)|receiv(?:ed|es)|award(?:ed|s)|"
    r"left|leaves|returned|transferred|promoted|succeeded|replaced|opened|launched|acquired|merged|"
    r"debuted|inaugurated|sworn|nominated|defeated|signed|invited|accepted|enrolled|entered|built|"
    r"constructed|completed|purchased|bought|sold|destroyed|killed|published|created|formed|dissolved|"
    r"captured|bought|renamed|visited|announced|arrived|scored|ordained|crowned|abolished)\b",
    re.I,
)


def year_is_fuzzy(sentence: str) -> bool:
    """Rule C: a bare year is fuzzy for a point event (joined, appointed, born ...), exact for a state."""
    return bool(_POINT_EVENT.search(sentence))
