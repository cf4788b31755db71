"""Time: the kit's one time parser, one module per job, every name importable from here.

- :mod:`.values`: ISO values with their granularity ('2005-04' is a month) and calendar days as integers;
- :mod:`.allen`: half-open day intervals and Allen's 13 relations;
- :mod:`.mentions`: explicit dates found in text;
- :mod:`.periods`: calendar arithmetic, offsets and early / mid / late sub-periods;
- :mod:`.expressions`: IA-RAG's normalisation of every time expression to a closed interval and a
  fuzzy flag (intervals, decades, "until X", relative and anaphoric dates).
"""

from __future__ import annotations

from temporag.timeutil.allen import ALLEN_RELATIONS, Allen, Interval, allen_holds, allen_relation
from temporag.timeutil.expressions import TimeExpression, extract_time_expressions, year_is_fuzzy
from temporag.timeutil.mentions import TimeMention, extract_time_mentions
from temporag.timeutil.periods import (
    _OFFSET,
    MONTH_PARTS,
    YEAR_PARTS,
    add_calendar,
    parse_offset,
    shift_interval,
    sub_period,
)
from temporag.timeutil.values import (
    TimeValue,
    day_of,
    iso_day,
    make_time,
    parse_time,
    truncate_to,
    try_parse_time,
)

__all__ = [
    "ALLEN_RELATIONS",
    "MONTH_PARTS",
    "YEAR_PARTS",
    "_OFFSET",  # the offset pattern ("3 years and 2 months"), which IA-RAG's classifier reuses
    "Allen",
    "Interval",
    "TimeExpression",
    "TimeMention",
    "TimeValue",
    "add_calendar",
    "allen_holds",
    "allen_relation",
    "day_of",
    "extract_time_expressions",
    "extract_time_mentions",
    "iso_day",
    "make_time",
    "parse_offset",
    "parse_time",
    "shift_interval",
    "sub_period",
    "truncate_to",
    "try_parse_time",
    "year_is_fuzzy",
]
