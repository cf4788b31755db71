"""An LLM-free reader for MultiTQ: answer a question from a retrieved context by the question's template.

A reader LLM is what turns retrieved facts into an answer, and a laptop reader (SmolLM2-135M) cannot
do the temporal reasoning — so a method's Hits@1 with it says little about whether its context
*supports* the answer.  MultiTQ's questions come from six templates, and each template is a small
program over dated facts.  This module runs that program on any context, so every method gets an honest
offline accuracy that needs no model (and SAR's offline scripted policy answers with it):

1. :func:`analyse` reads the template from the question's wording (the kit's cue lexicon,
   :mod:`temporag.question.cues`) — the order word (first / last), the temporal constraint (before / after /
   in / same day-month-year as) and what it points at (a date the question names or another entity's event),
   the answer type and granularity — and takes the entities and the relation from the kit's offline
   parse (:class:`temporag.question.parsing.OfflineParser`).
2. :meth:`TemplateReader.read` filters the context's facts to the main entity and relation (and the other
   entity a question names), resolves an entity anchor to the date of its event in the context, applies
   the constraint, orders by time for first / last / before / after, and returns the other entity of the
   chosen facts or their date at the asked granularity, best first, with the facts behind each answer.

When the context has no fact of the main entity with the grounded relation, the filter is relaxed one
step at a time (relation first, then the other entity) and ``Reading.relaxed`` says how far; a context
that never mentions the main entity yields no answer.  Nothing here looks at gold answers or at the
question's MultiTQ ``qtype`` label: the template read from the text is compared with it only to report
the classifier's accuracy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from temporag.question import cues
from temporag.question.cues import cue_pattern
from temporag.timeutil import TimeValue, extract_time_mentions, make_time

#: MultiTQ's question templates (its ``qtype`` labels), in the kit's reading of the text.
TEMPLATES = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")

_FIRST, _LAST = cue_pattern(cues.FIRST), cue_pattern(cues.LAST)
_BEFORE, _AFTER = cue_pattern(cues.BEFORE), cue_pattern(cues.AFTER)
_TIME_Q = re.compile(
    r"^\s*when\b|\btell me when\b|\b(?:what|which|exact|specific|precise)\s+(year|month|day|date|time)\b",
    re.I,
)


@dataclass(frozen=True)
class TemplateQuestion:
    """What a question asks, read from its text plus the offline parse (entity / relation ids)."""

    question: str
    template: str
    answer_type: str  # "entity" | "time"
    granularity: str  # of a time answer, or of a "same day / month / year" anchor
    order: str | None  # "first" | "last" | None
    constraint: str | None  # "before" | "after" | "in" | "same" | None
    time: TimeValue | None  # a date the question names
    pivot: int | None  # the main entity
    others: tuple[int, ...] = ()  # further entities the answer fact must involve
    anchor_entity: int | None = None  # the entity whose event the constraint points at
    relations: tuple[int, ...] = ()
    pivot_role: str | None = None  # "subject" | "object": the main entity's side of the answer fact

    def describe(self, kg) -> dict:
        """Readable labels, for traces and tables."""
        return {
            "template": self.template,
            "answer_type": self.answer_type,
            "granularity": self.granularity,
            "order": self.order,
            "constraint": self.constraint,
            "time": self.time.iso if self.time else None,
            "pivot": kg.entity_labels[self.pivot] if self.pivot is not None else None,
            "others": [kg.entity_labels[e] for e in self.others],
            "anchor_entity": kg.entity_labels[self.anchor_entity] if self.anchor_entity is not None else None,
            "relation": [kg.relation_labels[r] for r in self.relations],
            "pivot_role": self.pivot_role,
        }


def answer_shape(question: str) -> tuple[str, str]:
    """(answer type, granularity) from the wording: "In which month did ..." → ("time", "month")."""
    m = _TIME_Q.search(question)
    if not m:
        return "entity", "day"
    unit = (m.group(1) or "").lower()
    return "time", unit if unit in ("year", "month") else "day"


def classify(question: str) -> dict:
    """Order word, constraint, named date and template of a question, from its text alone."""
    answer_type, granularity = answer_shape(question)
    order = "first" if _FIRST.search(question) else ("last" if _LAST.search(question) else None)
    times = [m.value for m in extract_time_mentions(question)]
    time = times[0] if times else None
    same = cues.SAME_PERIOD.search(question)
    if same:
        constraint, granularity = "same", same.group(1).lower()
    elif _BEFORE.search(question):
        constraint = "before"
    elif _AFTER.search(question):
        constraint = "after"
    elif time is not None:
        constraint = "in"
    else:
        constraint = None
    if constraint == "same" or (constraint == "in" and order):
        template = "equal_multi"
    elif constraint in ("before", "after") and time is None and order:
        template = "after_first" if constraint == "after" else "before_last"
    elif constraint in ("before", "after"):
        template = "before_after"
    elif order:
        template = "first_last"
    else:
        template = "equal"
    return {
        "template": template,
        "answer_type": answer_type,
        "granularity": granularity,
        "order": order,
        "constraint": constraint,
        "time": time,
    }


_AUX = r"(?:did|does|do|has|have|had|will|would|could|can)"
# "the last country Cambodia praised", "with which Iraq negotiated": a relative clause whose subject it is
_RELATIVE = r"(?:which|whom|that|country|countries|person|people|one|organisation|organization|entity)"


def pivot_role(question: str, mention: str | None) -> str | None:
    """Which side of the answer fact the main entity is on, from the voice of the question.

    "When did China visit X", "Which country was praised by China", "the last country China praised":
    the main entity acts (subject); "Who visited China": it is acted on (object).  None when the mention
    is not found."""
    if not mention:
        return None
    at = question.find(mention)
    if at < 0:
        return None
    before = question[:at].rstrip().lower()
    before = re.sub(r"\b(?:the|a|an)$", "", before).rstrip()
    if re.search(rf"\b(?:{_AUX}|by|{_RELATIVE})$", before):
        return "subject"
    after = question[at + len(mention) :].lower()
    if re.match(r"\s*'s\b", after):
        return "subject"
    return "object"


def analyse(question: str, constraints) -> TemplateQuestion:
    """The template of one question; ``constraints`` is an offline (or LLM) parse with ``main``,
    ``entities``, ``relations`` and ``raw["constraint_entities"]`` (entities named after before / after /
    as / than: the reference event)."""
    shape = classify(question)
    main = constraints.main
    anchors = [e for e in (constraints.raw or {}).get("constraint_entities", []) if e != main]
    needs_anchor = shape["constraint"] in ("before", "after", "same") and shape["time"] is None
    others = [e for e in constraints.entities if e != main and e not in anchors]
    anchor = anchors[0] if anchors else None
    if needs_anchor and anchor is None and others:
        anchor = others.pop()  # the constraint's entity was not marked: the last other entity named
    if not needs_anchor:
        others += anchors
        anchor = None
    return TemplateQuestion(
        question=question,
        template=shape["template"],
        answer_type=shape["answer_type"],
        granularity=shape["granularity"],
        order=shape["order"],
        constraint=shape["constraint"],
        time=shape["time"],
        pivot=main,
        others=tuple(dict.fromkeys(others)),
        anchor_entity=anchor,
        relations=tuple(int(r) for r in constraints.relations),
        pivot_role=pivot_role(question, getattr(constraints, "main_mention", None)),
    )


@dataclass
class Reading:
    """The reader's ranked answers with the facts behind each, and how it got there."""

    answers: list[str] = field(default_factory=list)
    support: list[list[int]] = field(default_factory=list)  # fact ids behind each answer
    candidates: int = 0  # facts left after the filters
    anchor: str | None = None  # the resolved reference period (ISO), if any
    anchor_facts: list[int] = field(default_factory=list)
    relaxed: str = "none"  # which filter had to be dropped: none | relation | other_entity | both
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "answers": self.answers,
            "support": [s[:3] for s in self.support[:5]],
            "candidates": self.candidates,
            "anchor": self.anchor,
            "anchor_facts": self.anchor_facts[:5],
            "relaxed": self.relaxed,
            "note": self.note,
        }


def _involves(kg, facts: np.ndarray, entity: int) -> np.ndarray:
    return (kg.s[facts] == entity) | (kg.o[facts] == entity)


def period_of(day: int, granularity: str) -> TimeValue:
    """The day, month or year containing ``day`` (days since 1970-01-01)."""
    iso = str(np.datetime64(int(day), "D"))
    y, m = int(iso[:4]), int(iso[5:7])
    if granularity == "year":
        return make_time(y)
    if granularity == "month":
        return make_time(y, m)
    return TimeValue(int(day), int(day), "day")


class TemplateReader:
    """Answers template questions from a context of KG fact ids, without a language model."""

    def __init__(self, kg) -> None:
        self.kg = kg

    # -- filters -------------------------------------------------------------------------------------
    def _role_mask(self, facts: np.ndarray, entity: int, role: str | None) -> np.ndarray:
        kg = self.kg
        if role == "subject":
            return kg.s[facts] == entity
        if role == "object":
            return kg.o[facts] == entity
        return _involves(kg, facts, entity)

    def pivot_pools(self, tq: TemplateQuestion, facts: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Context facts of the main entity, strictest filter first: with the relation, the other
        entities and the main entity in its grammatical role; then the role, the other entities and the
        relation dropped in turn (the label says what was relaxed)."""
        kg = self.kg
        if tq.pivot is None or not len(facts):
            return []
        base = facts[_involves(kg, facts, tq.pivot)]
        rel = np.isin(kg.r[base], tq.relations) if tq.relations else np.ones(len(base), dtype=bool)
        others = np.ones(len(base), dtype=bool)
        for e in tq.others:
            others &= _involves(kg, base, e)
        role = self._role_mask(base, tq.pivot, tq.pivot_role)
        ladder = [
            ("none", rel & others & role),
            ("role", rel & others),
            ("other_entity", rel),
            ("relation", others),
            ("all", np.ones(len(base), dtype=bool)),
        ]
        out, seen = [], set()
        for label, mask in ladder:
            key = mask.tobytes()
            if mask.any() and key not in seen:
                seen.add(key)
                out.append((label, base[mask]))
        return out

    def anchor_facts(self, tq: TemplateQuestion, facts: np.ndarray) -> np.ndarray:
        """Context facts of the reference event: the anchor entity in the answer's role with the main
        entity and relation, relaxing the role, the main entity, then the relation."""
        kg = self.kg
        if tq.anchor_entity is None:
            return facts[:0]
        found = facts[_involves(kg, facts, tq.anchor_entity)]
        everything = np.ones(len(found), dtype=bool)
        rel = np.isin(kg.r[found], tq.relations) if tq.relations else everything
        pivot = _involves(kg, found, tq.pivot) if tq.pivot is not None else everything
        role = self._role_mask(found, tq.pivot, tq.pivot_role) if tq.pivot is not None else everything
        for mask in (rel & pivot & role, rel & pivot, rel, pivot, everything):
            if mask.any():
                return found[mask]
        return found

    def anchor_period(self, tq: TemplateQuestion, facts: np.ndarray) -> tuple[TimeValue | None, np.ndarray]:
        """The reference period: the named date, or the date of the anchor entity's event.

        With several events of the anchor entity the constraint points at the one that makes the question
        meaningful: the earliest for "after" (the answers come after it) and "same", the latest for
        "before"."""
        if tq.time is not None:
            return tq.time, facts[:0]
        found = self.anchor_facts(tq, facts)
        if not len(found):
            return None, found
        days = self.kg.t_start[found]
        pick = int(np.argmax(days)) if tq.constraint == "before" else int(np.argmin(days))
        day = int(days[pick])
        gran = tq.granularity if tq.constraint == "same" else "day"
        return period_of(day, gran), found[days == day]

    def _within(self, tq: TemplateQuestion, days: np.ndarray, period: TimeValue) -> np.ndarray:
        if tq.constraint == "before":
            return days < period.first_day
        if tq.constraint == "after":
            return days > period.last_day
        return (days >= period.first_day) & (days <= period.last_day)

    def _values(
        self, tq: TemplateQuestion, pool: np.ndarray, days: np.ndarray
    ) -> tuple[np.ndarray, list[str]]:
        """The answer each fact gives (the other entity, or its date at the asked granularity)."""
        kg = self.kg
        if tq.answer_type == "entity":
            exclude = [e for e in (tq.pivot, tq.anchor_entity, *tq.others) if e is not None]
            other = np.where(kg.s[pool] == tq.pivot, kg.o[pool], kg.s[pool])
            keep = ~np.isin(other, exclude)
            return keep, [kg.entity_labels[int(e)] for e in other[keep]]
        cut = {"year": 4, "month": 7}.get(tq.granularity, 10)
        return np.ones(len(pool), dtype=bool), [str(np.datetime64(int(d), "D"))[:cut] for d in days]

    # -- the reading ---------------------------------------------------------------------------------
    def read(self, tq: TemplateQuestion, facts: Sequence[int], top_k: int = 10) -> Reading:
        """Ranked answers to ``tq`` supported by the context ``facts``.

        The strictest filter that leaves an answer wins; ``Reading.relaxed`` names it."""
        kg = self.kg
        facts = np.unique(np.asarray(facts, dtype=np.int64))
        reading = Reading()
        pools = self.pivot_pools(tq, facts)
        if not pools:
            reading.note = "no fact of the main entity in the context"
            return reading
        period, anchor_facts = None, facts[:0]
        if tq.constraint is not None:
            period, anchor_facts = self.anchor_period(tq, facts)
            if period is None:
                reading.note = "reference event not in the context; constraint ignored"
            else:
                reading.anchor, reading.anchor_facts = period.iso, anchor_facts.tolist()
        for label, pool in pools:
            days = kg.t_start[pool].astype(np.int64)
            if period is not None:
                keep = self._within(tq, days, period)
                pool, days = pool[keep], days[keep]
            keep, values = self._values(tq, pool, days)
            pool, days = pool[keep], days[keep]
            if len(pool):
                reading.relaxed = label
                break
        else:
            reading.note = reading.note or "no fact satisfies the constraint"
            return reading
        reading.candidates = int(len(pool))
        seen: dict[str, int] = {}
        for i in self._order(tq, days, values):
            v = values[i]
            if v not in seen:
                if len(seen) >= top_k:
                    continue
                seen[v] = len(reading.answers)
                reading.answers.append(v)
                reading.support.append([])
            reading.support[seen[v]].append(int(pool[i]))
        return reading

    @staticmethod
    def _order(tq: TemplateQuestion, days: np.ndarray, values: list[str]) -> np.ndarray:
        """first / after → earliest first; last / before → latest first; otherwise the most frequent
        answer first (then the earliest)."""
        idx = np.arange(len(days))
        direction = tq.order or {"after": "first", "before": "last"}.get(tq.constraint or "")
        if direction == "first":
            return np.lexsort((idx, days))
        if direction == "last":
            return np.lexsort((idx, -days))
        counts: dict[str, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        freq = np.array([-counts[v] for v in values])
        return np.lexsort((idx, days, freq))

    def read_many(
        self, templates: Sequence[TemplateQuestion], contexts: Sequence[Sequence[int]], top_k: int = 10
    ) -> list[Reading]:
        if len(templates) != len(contexts):
            raise ValueError(f"{len(templates)} questions but {len(contexts)} contexts")
        return [self.read(t, c, top_k) for t, c in zip(templates, contexts)]


def analyse_many(questions: Sequence[str], parses: Sequence) -> list[TemplateQuestion]:
    """:func:`analyse` over a batch of questions and their parses."""
    if len(questions) != len(parses):
        raise ValueError(f"{len(questions)} questions but {len(parses)} parses")
    return [analyse(q, c) for q, c in zip(questions, parses)]


def template_accuracy(templates: Sequence[TemplateQuestion], questions: Sequence) -> float:
    """Share of questions whose template read from the text equals MultiTQ's ``qtype`` label."""
    if not templates:
        return float("nan")
    return float(np.mean([t.template == q.qtype for t, q in zip(templates, questions)]))
