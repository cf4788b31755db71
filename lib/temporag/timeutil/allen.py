"""Allen's interval algebra over half-open day intervals: the 13 relations, decided and defined."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


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
