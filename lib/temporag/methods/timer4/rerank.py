"""Rerank (Eqs. 9–10): the time-aware retriever's candidates re-scored by their distance to t_q.

t_q and the direction of the constraint come from the (rewritten) question: the first date it names and
the word before it ("before 2008-03-01" → before, "after ..." / "since ..." → after, anything else → in).

* Eq. 9 as the slides write it, for "before": φ_t = 1 − |t_q − t| / max(t_q − t) when t_q − t > 0, else
  −100; the maximum runs over the candidates that satisfy the constraint.  "after" is the mirror image;
  for "in" (a named day, month or year) the kit reads the filter as "inside the period" (φ_t = 1) versus
  a violation (−100).  A question without a date leaves φ_t = 0 for all candidates.
* The released code's variant (``mode="window"``, retrival.py): a fixed window instead of the
  normalisation — 1 − d/W inside 0 < d < W days on the right side, −100 on the wrong side, −1 beyond
  the window, and for "in" an exact match of t_q's first day (30 days at HEAD, 15 in Dec 2024).
* Eq. 10: φ = μ · φ_TKS + (1 − μ) · φ_t, then the top n.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from temporag.question import cues
from temporag.question.cues import cue_pattern
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import TimeValue, extract_time_mentions

VIOLATION = -100.0
DEFAULT_MU = 0.8  # μ of Eq. 10; the slides print none, the released code's alpha is 0.8 (HEAD)
RERANK_MODES = ("eq9", "window", "off")

# the kit's direction cues right before the date ("after the 2010 ..."); "by 2010" reads as a deadline too
_AFTER = re.compile(cue_pattern(cues.AFTER).pattern + r"\s*(?:the\s+)?$", re.I)
_BEFORE = re.compile(cue_pattern((*cues.BEFORE, "by")).pattern + r"\s*(?:the\s+)?$", re.I)


@dataclass(frozen=True)
class TimeConstraint:
    """t_q and how a fact's date must relate to it ("before" | "after" | "in" | "none")."""

    direction: str
    time: TimeValue | None = None

    def to_dict(self) -> dict:
        return {"direction": self.direction, "t_q": self.time.iso if self.time else None}


def question_constraint(question: str) -> TimeConstraint:
    """The constraint of the first date named in the question (none when it names no date)."""
    mentions = extract_time_mentions(question)
    if not mentions:
        return TimeConstraint("none")
    m = mentions[0]
    before_text = question[: m.start]
    if _AFTER.search(before_text):
        return TimeConstraint("after", m.value)
    if _BEFORE.search(before_text):
        return TimeConstraint("before", m.value)
    return TimeConstraint("in", m.value)


def _signed_gap(days: np.ndarray, c: TimeConstraint) -> np.ndarray:
    """Days on the constraint's side of t_q (> 0 satisfies before/after)."""
    if c.direction == "before":
        return (c.time.first_day - days).astype(np.float64)
    return (days - c.time.last_day).astype(np.float64)


def phi_t(days: np.ndarray, c: TimeConstraint) -> np.ndarray:
    """Eq. 9 over one question's candidate facts (their days)."""
    days = np.asarray(days, dtype=np.int64)
    if c.direction == "none" or c.time is None or not len(days):
        return np.zeros(len(days))
    if c.direction == "in":
        inside = (days >= c.time.first_day) & (days <= c.time.last_day)
        return np.where(inside, 1.0, VIOLATION)
    gap = _signed_gap(days, c)
    valid = gap > 0
    if not valid.any():
        return np.full(len(days), VIOLATION)
    scale = gap[valid].max()
    return np.where(valid, 1.0 - np.abs(gap) / scale, VIOLATION)


def window_score(days: np.ndarray, c: TimeConstraint, window_days: int = 30) -> np.ndarray:
    """The released code's fixed-window time score (retrival.py ``re_rank_single_result``)."""
    days = np.asarray(days, dtype=np.int64)
    if c.direction == "none" or c.time is None or not len(days):
        return np.zeros(len(days))
    if c.direction == "in":
        return np.where(days == c.time.first_day, 1.0, VIOLATION)
    gap = (c.time.first_day - days) if c.direction == "before" else (days - c.time.first_day)
    gap = gap.astype(np.float64)
    return np.where(
        (gap > 0) & (gap < window_days), 1.0 - gap / window_days, np.where(gap < 0, VIOLATION, -1.0)
    )


def rerank_facts(
    facts: np.ndarray,
    sims: np.ndarray,
    days: np.ndarray,
    constraint: TimeConstraint,
    n: int,
    *,
    mu: float = DEFAULT_MU,
    mode: str = "eq9",
    window_days: int = 30,
) -> tuple[np.ndarray, np.ndarray]:
    """The top-n facts by Eq. 10 (``mode="off"``: by similarity alone) and their final scores.

    Ties keep the retriever's order."""
    if mode not in RERANK_MODES:
        raise ValueError(f"rerank mode must be one of {RERANK_MODES}, got {mode!r}")
    facts, sims = np.asarray(facts), np.asarray(sims, dtype=np.float64)
    if mode == "off":
        score = sims
    else:
        time_score = phi_t(days, constraint) if mode == "eq9" else window_score(days, constraint, window_days)
        score = mu * sims + (1.0 - mu) * time_score
    order = top_k_stable(score, n)
    return facts[order], score[order]
