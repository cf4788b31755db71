"""Beyond the paper, without an LLM: a *question-guided* evidence chain that puts the likely answer first.

The paper's chain (§4.3) keeps the K facts nearest in time to each anchor and orders them by distance, so a
"first"/"last" question whose answer lies at the edge of the (main entity, relation) timeline can be
pruned away (appendix E, failure mode 2), and a 20-fact window is filled with repeats of one partner.
This module reads the question's temporal *structure* — grammar words, never phrases of a dataset — and
builds the chain in the order a reader would scan it:

* **ordinal** ("first", "earliest", "last", "latest", ...) and **direction** ("before", "after", "prior
  to", "since", ...) from the words of the question and the kit's cue lexicon (:mod:`temporag.question.cues`,
  :func:`question_focus`);
* the **reference point**: an explicit date; else the facts joining the main entity and the entity of the
  after/before/"same month as" clause; else, for a bare first/last question, the earliest / latest fact
  of the (main entity, relation) pair; else the paper's implicit anchors (top-N similar facts);
* **candidates in scan order**: after the reference ascending, before it descending, inside a named
  period first (most similar first), then everything else by distance (so a misread direction costs
  rank, not recall);
* **one fact per candidate answer**: the partner entity, or for a "when" question the fact's date at the
  granularity asked — so the window holds many distinct answers instead of repeats;
* a **budget** of ``max_facts`` facts (20: the paper's context length).

Every switch is an argument of :meth:`TECQA.chain` (``chain="guided"``); ``chain="paper"`` is §4.3 as
printed and stays the default.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from temporag.linking import tokenize
from temporag.methods.tecqa.chain import proximity
from temporag.question import cues
from temporag.question.cues import cue_positions
from temporag.question.parsing import Constraints
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import TimeValue

_TIME_QUESTION = re.compile(
    r"^\s*(?:when\b|(?:in|on|during|at)?\s*(?:which|what)\s+(?:exact\s+)?(?:year|month|day|date|time)\b)"
    r"|\b(?:which|what)\s+(?:exact\s+)?(?:year|month|day|date)\b",
    re.I,
)
_ASKED_GRANULARITY = re.compile(r"\b(?:which|what)\s+(?:exact\s+)?(year|month|day|date)\b", re.I)


@dataclass(frozen=True)
class Focus:
    """What the question's grammar says about where the answer sits in time."""

    ordinal: str | None  # "first" | "last" | None
    direction: str | None  # "before" | "after" | None
    asks_time: bool  # a "when / which year" question: the answer is a date
    granularity: str  # the date granularity a time answer (or a "same month as" clause) is at
    same_period: str | None  # "year" | "month" | "day" for "in the same month as X"


def question_focus(question: str) -> Focus:
    """Ordinal, direction and answer kind of a question from its function words (no LLM, no phrase list)."""
    norms = [t.norm for t in tokenize(question)]
    first, last = cue_positions(norms, cues.FIRST), cue_positions(norms, cues.LAST)
    ordinal = None
    if first:
        ordinal = "first"
    # "for the last time" and "last" both mean the latest; if both words occur, the earlier one wins
    if last and (ordinal is None or min(last) < min(first)):
        ordinal = "last"
    direction = None
    before = min(cue_positions(norms, cues.BEFORE), default=None)
    after = min(cue_positions(norms, cues.AFTER), default=None)
    if before is not None and (after is None or before < after):
        direction = "before"
    elif after is not None:
        direction = "after"
    asks_time = bool(_TIME_QUESTION.search(question))
    same = cues.SAME_PERIOD.search(question)
    asked = _ASKED_GRANULARITY.search(question)
    granularity = "day"
    if asked and asked.group(1).lower() in ("year", "month"):
        granularity = asked.group(1).lower()
    return Focus(ordinal, direction, asks_time, granularity, same.group(1).lower() if same else None)


def _widen(day: int, granularity: str) -> TimeValue:
    """The calendar period of ``granularity`` holding ``day``."""
    d = np.datetime64(int(day), "D")
    if granularity == "year":
        first = d.astype("datetime64[Y]")
        last = first + np.timedelta64(1, "Y")
    elif granularity == "month":
        first = d.astype("datetime64[M]")
        last = first + np.timedelta64(1, "M")
    else:
        return TimeValue(int(day), int(day), "day")
    first_day = int(first.astype("datetime64[D]").astype(np.int64))
    last_day = int(last.astype("datetime64[D]").astype(np.int64)) - 1
    return TimeValue(first_day, last_day, granularity)


def reference_points(
    kg,
    constraints: Constraints,
    facts: np.ndarray,
    days: np.ndarray,
    sims: np.ndarray,
    explicit: Sequence[TimeValue],
    focus: Focus,
    n: int,
) -> tuple[list[TimeValue], str]:
    """The periods the question is anchored on, and where they came from (for traces and tables)."""
    if explicit:
        return list(explicit), "explicit date"
    main = constraints.main
    refs = [e for e in constraints.raw.get("constraint_entities", []) if e not in constraints.mains]
    if not refs and (focus.direction or focus.same_period):
        refs = list(constraints.others)
    if refs and main is not None:
        joined = facts[np.isin(kg.s[facts], refs) | np.isin(kg.o[facts], refs)]
        if not len(joined):  # the reference event may have another relation: any fact of main with it
            pool = kg.by_entity.many(np.asarray(constraints.mains))
            joined = pool[np.isin(kg.s[pool], refs) | np.isin(kg.o[pool], refs)]
        if len(joined):
            ref_days = np.unique((kg.t_start[joined].astype(np.int64) + kg.t_end[joined]) // 2)
            # "after X, first": the earliest X event; "before X, last": the latest one
            if focus.direction == "after":
                ref_days = ref_days[:1]
            elif focus.direction == "before":
                ref_days = ref_days[-1:]
            period = focus.same_period or "day"
            return [_widen(int(d), period) for d in ref_days[:8]], "reference entity"
    if focus.ordinal and not focus.direction and len(days):
        joint = joint_mask(kg, constraints, facts)
        pair_days = days[joint] if joint.any() else days
        edge = int(pair_days.min()) if focus.ordinal == "first" else int(pair_days.max())
        return [TimeValue(edge, edge, "day")], f"{focus.ordinal} fact of the pair"
    if len(facts) and n > 0:
        top = top_k_stable(sims, n)
        return [TimeValue(int(d), int(d), "day") for d in dict.fromkeys(days[top].tolist())], "implicit"
    return [], "none"


def named_partners(constraints: Constraints) -> list[int]:
    """Entities the question names besides the main one that are not the reference of a time clause."""
    refs = set(constraints.raw.get("constraint_entities", []))
    return [e for e in constraints.others if e not in refs]


def joint_mask(kg, constraints: Constraints, facts: np.ndarray) -> np.ndarray:
    """Facts joining the main entity to an entity the question names ("When did China last denounce
    the Hong Kong legislature?": China–legislature facts): the answer's own (entity, relation, entity)."""
    partners = named_partners(constraints)
    if not partners or not len(facts):
        return np.zeros(len(facts), dtype=bool)
    return np.isin(kg.s[facts], partners) | np.isin(kg.o[facts], partners)


def answer_keys(kg, facts: np.ndarray, days: np.ndarray, main, focus: Focus) -> np.ndarray:
    """The candidate answer each fact offers: a date at the asked granularity, or the partner entity
    (``main``: the main entity, or the main entity with its alternatives).  A fact joining two readings of
    the main mention offers no answer: its key is -1, so dedupe keeps one such fact, never an answer."""
    if focus.asks_time:
        unit = {"year": "datetime64[Y]", "month": "datetime64[M]"}.get(focus.granularity)
        if unit is None:
            return days.astype(np.int64)
        return days.astype("datetime64[D]").astype(unit).astype(np.int64)
    mains = np.atleast_1d(np.asarray(main if main is not None else [], dtype=np.int64))
    if not len(mains):
        return kg.o[facts].astype(np.int64)
    subject_is_main, object_is_main = np.isin(kg.s[facts], mains), np.isin(kg.o[facts], mains)
    keys = np.where(subject_is_main, kg.o[facts], kg.s[facts]).astype(np.int64)
    keys[subject_is_main & object_is_main] = -1
    return keys


def scan_order(days: np.ndarray, sims: np.ndarray, anchors: Sequence[TimeValue], focus: Focus) -> np.ndarray:
    """Positions of the facts in the order a reader scans them for the answer (see the module doc)."""
    n = len(days)
    if not n:
        return np.empty(0, dtype=np.int64)
    ids = np.arange(n)
    if not anchors:
        return np.lexsort((ids, -sims))
    first = min(a.first_day for a in anchors)
    last = max(a.last_day for a in anchors)
    dist = np.min(
        np.stack([np.maximum(np.maximum(a.first_day - days, days - a.last_day), 0) for a in anchors]), axis=0
    )
    inside = dist == 0
    if focus.direction == "after":
        tier = np.where(days > last, 0, np.where(inside, 1, 2))
        key = np.where(tier == 0, days - last, dist)
    elif focus.direction == "before":
        tier = np.where(days < first, 0, np.where(inside, 1, 2))
        key = np.where(tier == 0, first - days, dist)
    elif focus.ordinal in ("first", "last") and all(a.granularity != "day" for a in anchors):
        # "first ... in 2009": inside the period, from its start (first) or end (last)
        tier = np.where(inside, 0, 1)
        key = np.where(inside, days - first if focus.ordinal == "first" else last - days, dist)
    else:
        tier = np.where(inside, 0, 1)
        key = dist
    # inside a named period order by similarity, elsewhere by time then similarity
    key = np.where((tier == 0) & (focus.direction is None) & (focus.ordinal is None), 0, key)
    return np.lexsort((ids, -sims, key, tier))


def guided_chain(
    kg,
    constraints: Constraints,
    facts: np.ndarray,
    days: np.ndarray,
    sims: np.ndarray,
    explicit: Sequence[TimeValue],
    n: int,
    max_facts: int,
    *,
    dedupe: bool = True,
) -> tuple[np.ndarray, np.ndarray, list[TimeValue], str]:
    """(chain fact ids, their δ to the reference, the reference periods, its source)."""
    focus = question_focus(constraints.question)
    anchors, source = reference_points(kg, constraints, facts, days, sims, explicit, focus, n)
    order = scan_order(days, sims, anchors, focus)
    joint = joint_mask(kg, constraints, facts)
    if joint.any():  # the named pair's own facts first, in scan order; the rest after them
        order = np.concatenate([order[joint[order]], order[~joint[order]]])
    if dedupe and len(order):
        keys = answer_keys(kg, facts[order], days[order], constraints.mains, focus)
        _, first_pos = np.unique(keys, return_index=True)
        order = order[np.sort(first_pos)]
    order = order[:max_facts] if max_facts > 0 else order
    chosen = facts[order].astype(np.int32)
    delta = proximity(kg, chosen, anchors)  # δ of Eq. 9, to the reference periods
    return chosen, delta.astype(np.int64), anchors, source
