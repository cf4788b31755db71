"""Time parsing with granularity, Allen's 13 relations (truth tables + properties), mentions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from temporag.timeutil import (
    ALLEN_RELATIONS,
    Allen,
    Interval,
    allen_holds,
    allen_relation,
    day_of,
    extract_time_mentions,
    iso_day,
    parse_time,
    truncate_to,
)


def test_parse_keeps_granularity():
    assert parse_time("2005").granularity == "year"
    assert parse_time("2005-04").iso == "2005-04"
    m = parse_time("2008-02")
    assert m.last_day - m.first_day == 28  # leap year February
    assert parse_time("2005-04-03").first_day == parse_time("2005-04-03").last_day
    with pytest.raises(ValueError):
        parse_time("2005-02-30")
    with pytest.raises(ValueError):
        parse_time("April 2005")
    assert truncate_to("2005-04-03", "month") == "2005-04"


def test_day_of_reads_every_calendar_day_back_from_its_iso_form():
    """The kit's one ISO-to-day parser (the KG loaders, the released STAR-RAG code's question day,
    IA-RAG's unit dates): every day of 1900-2100 round-trips, leap days included."""
    import numpy as np

    first, last = day_of("1900-01-01"), day_of("2100-12-31")
    assert first == int(np.datetime64("1900-01-01", "D").astype(np.int64)) and day_of("1970-01-01") == 0
    assert all(day_of(iso_day(d)) == d for d in range(first, last + 1))
    assert day_of(" 2005-4-3 ") == day_of("2005-04-03")  # as parse_time reads an answer


@pytest.mark.parametrize(
    "text", ["2005", "2005-04", "2005-04-03T10", "2005-02-29", "1900-02-29", "2005-13-01"]
)
def test_day_of_refuses_a_period_or_an_impossible_day(text):
    """Strict by choice: a year or a month is a period, not its first day (numpy's datetime64 read
    "2005-04" as 2005-04-01), and an impossible day is an error, never the next valid one."""
    with pytest.raises(ValueError):
        day_of(text)


# a = [1, 5) against hand-picked b's: each row is one Allen relation
TRUTH = [
    ((7, 9), Allen.BEFORE),
    ((5, 9), Allen.MEETS),
    ((3, 9), Allen.OVERLAPS),
    ((1, 9), Allen.STARTS),
    ((0, 9), Allen.DURING),
    ((0, 5), Allen.FINISHES),
    ((1, 5), Allen.EQUALS),
    ((2, 5), Allen.FINISHED_BY),
    ((2, 4), Allen.CONTAINS),
    ((1, 3), Allen.STARTED_BY),
    ((0, 3), Allen.OVERLAPPED_BY),
    ((0, 1), Allen.MET_BY),
    ((-3, 0), Allen.AFTER),
]


@pytest.mark.parametrize(("b", "expected"), TRUTH)
def test_allen_truth_table(b, expected):
    a = Interval(1, 5)
    other = Interval(*b)
    # a is the *subject*: e.g. a=[1,5) during b=[0,9)
    rel = allen_relation(a, other)
    assert rel is expected
    assert [r for r in ALLEN_RELATIONS if allen_holds(r, a, other)] == [expected]
    assert allen_relation(other, a) is expected.inverse


def test_thirteen_relations_with_inverses():
    assert len(ALLEN_RELATIONS) == 13
    assert {r.inverse for r in ALLEN_RELATIONS} == set(ALLEN_RELATIONS)
    assert Allen.EQUALS.inverse is Allen.EQUALS
    assert Allen.BEFORE.inverse is Allen.AFTER and Allen.DURING.inverse is Allen.CONTAINS


intervals = st.tuples(st.integers(-50, 50), st.integers(1, 30)).map(lambda t: Interval(t[0], t[0] + t[1]))


@given(intervals, intervals)
def test_exactly_one_relation_holds(a, b):
    holding = [r for r in ALLEN_RELATIONS if allen_holds(r, a, b)]
    assert holding == [allen_relation(a, b)]


@given(intervals, intervals)
def test_converse_is_inverse(a, b):
    assert allen_relation(b, a) is allen_relation(a, b).inverse


@given(st.sampled_from(ALLEN_RELATIONS))
def test_inverse_of_inverse(rel):
    assert rel.inverse.inverse is rel


def test_single_days_are_proper_intervals():
    d1, d2 = Interval.days(10, 10), Interval.days(11, 11)
    assert allen_relation(d1, d2) is Allen.MEETS  # consecutive days touch
    assert allen_relation(Interval.days(10, 10), Interval.days(12, 12)) is Allen.BEFORE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Who visited Iraq in April 2005?", [("April 2005", "2005-04")]),
        ("Before 2012-03-04, who ...", [("2012-03-04", "2012-03-04")]),
        (
            "On 3 April 2005 and on May 7, 2006?",
            [("3 April 2005", "2005-04-03"), ("May 7, 2006", "2006-05-07")],
        ),
        ("In which year did X make a request in 2010?", [("2010", "2010")]),
        ("Who praised Kenya in Sept. 2011?", [("Sept. 2011", "2011-09")]),
        ("in 2012-05 exactly", [("2012-05", "2012-05")]),
        ("No dates here, only 12 people.", []),
    ],
)
def test_time_mentions(text, expected):
    assert [(m.text, m.value.iso) for m in extract_time_mentions(text)] == expected
