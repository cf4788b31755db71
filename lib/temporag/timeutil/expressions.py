"""Temporal expressions in documents, normalised to closed day intervals with a fuzzy flag.

IA-RAG (appendix I, Figs. 7 and 9) normalises every time expression of a document into a closed
interval [t_start, t_end] plus a FuzzyFlag, with conversion tables: exact day / month / year,
explicit intervals, "until X" (start unknown), early / mid / late / around, relative dates by
calendar arithmetic.  The tables are implemented here, once, on top of the mention patterns of
:mod:`temporag.timeutil.mentions`, so the offline extractor, the question-window parser and any later
method share one reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from temporag.timeutil.mentions import TimeMention, extract_time_mentions
from temporag.timeutil.periods import _OFFSET, YEAR_PARTS, parse_offset, shift_interval, sub_period
from temporag.timeutil.values import _ymd, iso_day, make_time

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
_PART = re.compile(
    r"(?:\b(?:in|during|by|until|since|from|the)\s+)?\b(?P<part>early|mid|late|around|circa|"
    r"c\.|ca\.|about|approximately|until|till|up to|through|by|since|before|prior to|"
    r"after)[\s-]*(?:the\s+|of\s+)?$",
    re.I,
)
_RANGE_JOIN = re.compile(r"^\s*(?:–|—|-|to|until|till|through|and)\s*$", re.I)
_FUZZY_PARTS = {"around", "circa", "c.", "ca.", "about", "approximately"}
_BOUNDS = {
    "until": "until",
    "till": "until",
    "up to": "until",
    "through": "until",
    "by": "until",
    "since": "since",
    "before": "before",
    "prior to": "before",
    "after": "after",
}


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


def _plain(m: TimeMention) -> TimeExpression:
    rule = {"day": "A", "month": "B", "year": "C"}[m.value.granularity]
    return TimeExpression(
        m.text, m.start, m.end, m.value.first_day, m.value.last_day, False, m.value.granularity, rule
    )


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
        add(
            TimeExpression(
                text[s : m.end()],
                s,
                m.end(),
                make_time(y1).first_day,
                make_time(y2i).last_day,
                False,
                "interval",
                "D",
            )
        )
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
        add(
            TimeExpression(
                text[s : n.end], s, n.end, m.value.first_day, n.value.last_day, False, "interval", "D"
            )
        )
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
            add(
                TimeExpression(
                    text[s : m.end], s, m.end, value.first_day, value.last_day, True, "around", "F"
                )
            )
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
