"""The released code's reading of a question's time (``MarshmallowLight/RAGverse`` @ 94e4905,
``dynamic_RAG/``): the date it names and its before/after words, for :mod:`released`.

The code keeps two word lists: one for the anchors' filter (``src/hipporag/utils/misc_utils.py:243-266``)
and one for the last filter (``src/hipporag/HippoRAG.py:1485-1500``); both are kept, each in the kit's
own regular expressions.  Their words match more than dates: "from" ("aid from China") counts as
"after" and "by" ("praised by Iran") as "before", as in the code.
"""

from __future__ import annotations

import re

import numpy as np

from temporag.timeutil import day_of

_ISO_DATE = re.compile(r"\b(\d{4})([-/.])(\d{1,2})\2(\d{1,2})\b")
_YEAR = re.compile(r"\b((?:19|20)\d{2})\b")
_RERANK_WORDS = (  # misc_utils.py:251-266, checked in this order
    ("before", r"\bbefore\b|earlier than|prior to|\buntil\b|no later than|on or before"),
    ("after", r"\bafter\b|\bsince\b|later than|following|on or after|\bfrom\b"),
)
_FINAL_WORDS = (  # HippoRAG.py:1488-1499: (operation, inclusive), checked in this order
    ("before", True, r"\b(?:on or before|no later than|not after|by|until|through|before)\b"),
    ("before", False, r"\b(?:prior to|earlier than)\b"),
    ("after", True, r"\b(?:on or after|no earlier than|since|from|starting|after)\b"),
    ("after", False, r"\blater than\b"),
)


def question_day(question: str) -> int | None:
    """The date a question names, as a day number: a full ISO date, else 1 January of the first year it
    names (so "in March 2010" anchors at 2010-01-01, as in the released code), else None."""
    match = _ISO_DATE.search(question)
    if match:
        try:
            return day_of(f"{match[1]}-{int(match[3]):02d}-{int(match[4]):02d}")
        except ValueError:
            pass
    match = _YEAR.search(question)
    return day_of(f"{match[1]}-01-01") if match else None


def rerank_direction(question: str) -> str | None:
    """The anchor filter's side from the first word list: "before", "after" or None."""
    text = question.lower()
    return next((side for side, words in _RERANK_WORDS if re.search(words, text)), None)


def final_operation(question: str) -> tuple[str | None, bool]:
    """(side, inclusive) from the second word list (the last filter's); (None, True) when none."""
    text = question.lower()
    return next(((side, inc) for side, inc, words in _FINAL_WORDS if re.search(words, text)), (None, True))


def on_side(days: np.ndarray, day: int, side: str, inclusive: bool = True) -> np.ndarray:
    """Which days lie on ``side`` ("before" / "after") of ``day``."""
    if side == "before":
        return days <= day if inclusive else days < day
    return days >= day if inclusive else days > day
